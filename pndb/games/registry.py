"""The registry of game kinds: how a spec string (or rules stored under a spec) becomes a game,
and what `pndb games` lists.

A spec is ``NAME`` or ``NAME:ARG``. Each kind names its :class:`Family` (the package that
implements the game-family interface), a builder ``build(arg, spec)``, aliases, a help line and
the specs it lists; the family turns stored rules into its game, says how a position is
written into a database's or a book's metadata, and makes the evaluator of a solve's leaves.
Adding a game family is one package plus a Family and its kinds here (docs/architecture.md).
"""

from collections.abc import Callable
from typing import NamedTuple

from pndb.games import go
from pndb.games.errors import GameError, shown
from pndb.games.placement import builtins, rules
from pndb.games.placement.evaluator import inner_solver
from pndb.games.placement.game import CODEC


class Family(NamedTuple):
    name: str
    from_rules: Callable  # (rules data, spec) -> game: the rules a database or a book stores
    codec: object  # fields(pos) -> JSON-ready dict; position(fields) -> pos or GameError
    # (game, settings.SolveSettings, settings.MemorySplit, region=None) -> a contracts.Evaluator
    # of the solve's leaves (region: a contracts.SharedRegion its table may live in, shared with
    # the other workers'); None: the family has none (the outer search expands every leaf)
    evaluator: Callable | None


class GameKind(NamedTuple):
    name: str  # the spec's NAME
    family: Family
    build: Callable  # (arg, spec) -> game
    help: str
    examples: tuple = ()  # specs listed first by `pndb games`
    more_examples: tuple = ()  # specs listed after every kind's examples
    parametrised: str = ""  # the spec's general form, e.g. mnk:M,N,K
    aliases: tuple = ()  # (alias spec, spec it stands for)
    from_rules: Callable | None = None  # (rules data, spec) -> game, when not the family's


PLACEMENT = Family("placement", rules.game_from_rules, CODEC, inner_solver)
GO = Family("go", go.from_rules, go.CODEC, None)


def build_mnk(arg, spec):
    m, n, k = builtins.parse_ints(arg, 3, spec)
    return builtins.mnk(m, n, k, f"mnk:{m},{n},{k}")


KINDS = (
    GameKind(
        "mnk",
        PLACEMENT,
        build_mnk,
        "M columns x N rows, K in a row wins",
        ("tictactoe",),
        ("mnk:4,4,3",),
        "mnk:M,N,K",
        (("tictactoe", "mnk:3,3,3"),),
    ),
    GameKind(
        "qango6",
        PLACEMENT,
        lambda arg, spec: builtins.qango6(arg.lower(), spec),
        "Qango on 6x6 (variants castle, tournament)",
        ("qango6", "qango6:castle", "qango6:tournament"),
        aliases=(("qango6:burg", "qango6:castle"),),
    ),
    GameKind(
        "qango7",
        PLACEMENT,
        lambda arg, spec: builtins.qango7(arg.lower(), spec.lower()),
        "Qango on 7x7, a draw after 40 stones (variant nocap)",
        ("qango7", "qango7:nocap"),
    ),
    GameKind(
        "qango7plus",
        PLACEMENT,
        lambda arg, spec: builtins.qango7plus(arg.lower(), spec.lower()),
        "Qango 7 without the corner cells (variants edges, tournament)",
        ("qango7plus", "qango7plus:edges", "qango7plus:tournament"),
    ),
    GameKind(
        "connect4",
        PLACEMENT,
        lambda arg, spec: builtins.connect4(arg, spec),
        "Connect Four on W columns x H rows (7x6 by default)",
        ("connect4",),
        ("connect4:4x4",),
        "connect4:WxH",
        (("connect4", "connect4:7x6"),),
        # Allis' rules (pndb.games.connect4) hold for Connect Four: its stored rules have them too
        from_rules=lambda data, spec: rules.game_from_rules(data, spec, allis=True),
    ),
    GameKind(
        "go",
        GO,
        go.build,
        "Go on W columns x H rows (up to 7x7), area scoring, positional superko, integer komi K",
        ("go:3x3",),
        ("go:2x2", "go:5x5:komi=25"),
        "go:WxH[:komi=K]",
    ),
    GameKind(
        "file",
        PLACEMENT,
        lambda arg, spec: rules.load_file(arg, spec),
        "a placement game described in a JSON file (docs/game-format.md)",
    ),
)
KIND_BY_NAME = {k.name: k for k in KINDS}
FAMILIES = {k.family.name: k.family for k in KINDS}
ALIASES = {alias: target for k in KINDS for alias, target in k.aliases}
LISTED_SPECS = [s for k in KINDS for s in k.examples] + [s for k in KINDS for s in k.more_examples]

_cache = {}


def kind_of(spec):
    """The GameKind a spec names, or None."""
    return KIND_BY_NAME.get(spec.partition(":")[0].lower())


def load_game(spec):
    """The game of a spec string; raises GameError with a one-line reason."""
    spec = spec.strip()
    if spec in _cache:
        return _cache[spec]
    arg = spec.partition(":")[2]
    kind = kind_of(spec)
    if spec.lower() in ALIASES:
        game = load_game(ALIASES[spec.lower()])
    elif kind is None or (kind.name == "file" and not arg):
        raise GameError(f"unknown game '{shown(spec)}'; `pndb games` lists the games")
    elif kind.name == "file":
        return kind.build(arg, spec)  # not cached: the file may change
    else:
        game = kind.build(arg, spec)
    _cache[spec] = game
    return game


def game_from_rules(data, spec):
    """The game of rules data stored under ``spec`` (a database's or a book's): its kind's
    (a placement game where the spec names no kind); GameError when they are unusable."""
    kind = kind_of(spec)
    if kind is None:
        return PLACEMENT.from_rules(data, spec)
    return (kind.from_rules or kind.family.from_rules)(data, spec)


def family_of(game):
    """The Family of a game (its ``family`` name)."""
    return FAMILIES[game.family]
