"""The registry of game kinds: how a spec string becomes a game, and what `pndb games` lists.

A spec is ``NAME`` or ``NAME:ARG``. Each entry names its family (the module that implements the
game-family interface), a builder ``build(arg, spec)``, aliases, a help line and the specs it
lists. Adding a game family is one module plus entries here.
"""

from collections.abc import Callable
from typing import NamedTuple

from pndb.games.placement import game as placement
from pndb.games.placement.notation import shown
from pndb.games.placement.game import GameError


class GameKind(NamedTuple):
    name: str  # the spec's NAME
    family: str
    build: Callable  # (arg, spec) -> game
    help: str
    examples: tuple = ()  # specs listed first by `pndb games`
    more_examples: tuple = ()  # specs listed after every kind's examples
    parametrised: str = ""  # the spec's general form, e.g. mnk:M,N,K
    aliases: tuple = ()  # (alias spec, spec it stands for)


def build_mnk(arg, spec):
    m, n, k = placement.parse_ints(arg, 3, spec)
    return placement.mnk(m, n, k, f"mnk:{m},{n},{k}")


KINDS = (
    GameKind(
        "mnk",
        "placement",
        build_mnk,
        "M columns x N rows, K in a row wins",
        ("tictactoe",),
        ("mnk:4,4,3",),
        "mnk:M,N,K",
        (("tictactoe", "mnk:3,3,3"),),
    ),
    GameKind(
        "qango6",
        "placement",
        lambda arg, spec: placement.qango6(arg.lower(), spec),
        "Qango on 6x6 (variants castle, tournament)",
        ("qango6", "qango6:castle", "qango6:tournament"),
    ),
    GameKind(
        "qango7",
        "placement",
        lambda arg, spec: placement.qango7(arg.lower(), spec.lower()),
        "Qango on 7x7, a draw after 40 stones (variant nocap)",
        ("qango7", "qango7:nocap"),
    ),
    GameKind(
        "qango7plus",
        "placement",
        lambda arg, spec: placement.qango7plus(arg.lower(), spec.lower()),
        "Qango 7 without the corner cells (variants edges, tournament)",
        ("qango7plus", "qango7plus:edges", "qango7plus:tournament"),
    ),
    GameKind(
        "connect4",
        "placement",
        lambda arg, spec: placement.connect4(arg, spec),
        "Connect Four on W columns x H rows (7x6 by default)",
        ("connect4",),
        ("connect4:4x4",),
        "connect4:WxH",
        (("connect4", "connect4:7x6"),),
    ),
    GameKind(
        "file",
        "placement",
        lambda arg, spec: placement.load_file(arg, spec),
        "a placement game described in a JSON file (docs/game-format.md)",
    ),
)
KIND_BY_NAME = {k.name: k for k in KINDS}
ALIASES = {alias: target for k in KINDS for alias, target in k.aliases} | {"qango6:burg": "qango6:castle"}
LISTED_SPECS = [s for k in KINDS for s in k.examples] + [s for k in KINDS for s in k.more_examples]

_cache = {}


def load_game(spec):
    """The game of a spec string; raises GameError with a one-line reason."""
    spec = spec.strip()
    if spec in _cache:
        return _cache[spec]
    name, _, arg = spec.partition(":")
    kind = KIND_BY_NAME.get(name.lower())
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
