"""A position as a front end shows it: the board, whose turn it is, the outcome, and what a
source knows of each legal move (the rules alone, a book, or a database).

``view_of`` builds a :class:`PositionView`, plain data with a JSON form (``to_json``), from a
game and a *lookup*: anything with ``game`` and ``lookup(pos)`` -> (the strategy's move on the
board or None, Value or None), as ``book.Book`` has. ``book.known_interval`` and
``book.move_values`` read every lookup alike: a book, a database (:class:`DatabaseLookup`) or
the rules alone (:class:`RulesOnly`). `pndb show`, `pndb play` and the web explorer are
adapters over the view; ``pndb.describe`` (api.py) picks the source.
"""

import json
import random
from dataclasses import asdict, dataclass

from pndb.book import STRATEGIES, StrategyWalker, known_interval, move_values
from pndb.games import GameError, load_game
from pndb.store import StoreError
from pndb.values import Status, Value, good_for, intersect, status_value

SIDES = ("first", "second")  # a player as the view names it


@dataclass(frozen=True)
class CellView:
    """A playable cell of the board."""

    cell: int  # grid index, row * width + col: how moves, wins and areas name cells
    name: str  # in the game's notation (the column digit under gravity)
    row: int  # from the top, 0-based
    col: int  # from the left, 0-based
    owner: str | None  # "first", "second", or None when empty


@dataclass(frozen=True)
class MoveView:
    """A legal move and its value as far as the source knows (unknown where it knows nothing)."""

    move: str  # in the game's notation
    cell: int  # the cell its stone takes
    value: Value


@dataclass(frozen=True)
class PositionView:
    """What a front end shows of the position after ``moves``; ``to_json`` gives its JSON form
    (Values by name, tuples as lists) and ``from_json`` reads it back."""

    game: str  # the spec
    title: str
    source: str  # "game" (the rules alone), "book" or "database"
    width: int
    height: int
    gravity: bool  # a stone falls to the lowest empty cell of its column (Connect Four)
    cells: tuple  # CellView of every playable cell, by grid index
    areas: tuple  # cells drawn in one colour (Qango's areas), each a tuple of grid indices
    moves: str  # the moves played from the empty board, in the game's notation
    stones: int
    to_move: str | None  # "first" or "second"; None once the game is over
    outcome: Value | None  # how the game ended, None while it goes on
    outcome_text: str | None  # the same in words ("the first player has won")
    wins: tuple  # the win patterns the winner completed, each a tuple of grid indices
    value: Value  # what the source knows of the position
    options: tuple  # MoveView of every legal move, in the game's move order
    strategy_move: str | None  # the move the source proves best for the player to move, if any
    text: str  # the board as text, as `pndb show` prints it

    def best_moves(self):
        """The options whose known value is best for the player to move."""
        if not self.options:
            return []
        pick = max if self.to_move == "first" else min
        best = pick((o.value.lo, o.value.hi) for o in self.options)
        return [o for o in self.options if (o.value.lo, o.value.hi) == best]

    def reply(self, rng=random):
        """The move a player of the source's strategy makes: the strategy move, else one of the
        best known moves (at random among equals, so that games vary); None once over."""
        if self.strategy_move is not None:
            return next(o for o in self.options if o.move == self.strategy_move)
        best = self.best_moves()
        return rng.choice(best) if best else None

    def to_dict(self):
        return asdict(self, dict_factory=lambda items: {k: plain(v) for k, v in items})

    def to_json(self, **options):
        return json.dumps(self.to_dict(), **options)

    @classmethod
    def from_dict(cls, data):
        outcome = data["outcome"]
        return cls(**{
            **data,
            "cells": tuple(CellView(**c) for c in data["cells"]),
            "areas": tuple(map(tuple, data["areas"])),
            "wins": tuple(map(tuple, data["wins"])),
            "outcome": None if outcome is None else Value.named(outcome),
            "value": Value.named(data["value"]),
            "options": tuple(MoveView(**{**o, "value": Value.named(o["value"])}) for o in data["options"]),
        })  # fmt: skip

    @classmethod
    def from_json(cls, text):
        return cls.from_dict(json.loads(text))


def plain(value):
    """A field as JSON holds it: a Value by its name, a tuple as a list."""
    if isinstance(value, Value):
        return value.name
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


class RulesOnly:
    """The lookup of a game alone: it knows no position (only the rules' finished games)."""

    def __init__(self, game):
        self.game = game

    def lookup(self, pos):
        return None, None


class DatabaseLookup:
    """A database read as a book: what it proved of a position (its node, proof record and
    certificates; in a graph-keyed one also its node's) and its proof record's move for the
    player to move. ``view``: a store.ReadView of the game, open while the lookup is used."""

    def __init__(self, view, game):
        self.view = view
        self.game = game
        self.walker = StrategyWalker(view)

    def lookup(self, pos):
        game = self.game
        key, symmetry = game.canonical(pos)
        lo, hi = 0, 2
        for k in dict.fromkeys((self.view.game.key(pos), key)):  # its node's key, its board key
            lo, hi = intersect((lo, hi), self.walker.interval(k))
        if lo > hi:
            raise StoreError(
                f"the database is damaged: its values contradict each other at {game.position_text(pos)}"
            )
        value = Value.of(lo, hi)
        proof, fact = self.view.proof(key), mover_fact(value, game.first_to_move(pos))
        move = proof.strategy_move(fact) if proof is not None and fact is not None else None
        if move is None:
            return None, value
        cell = game.move_to_board(symmetry, move)
        if cell not in game.legal_moves(pos):
            raise StoreError(
                f"the database is damaged: its proof's move at {game.position_text(pos)} is not legal there"
            )
        return cell, value


def mover_fact(value, first_to_move):
    """The Fact of ``value`` that the player to move owns (wins, or does not lose), or None."""
    return next((f for f in STRATEGIES[value] if f.proven == first_to_move), None)


def view_of(lookup, source, moves):
    """The PositionView of the position after ``moves`` as ``lookup`` knows it; ``source``
    names the kind of source ("game", "book", "database")."""
    game = lookup.game
    pos, cells = game.parse_moves(moves)
    state = game.status(pos)
    board = [
        CellView(c, game.move_name(c), *divmod(c, game.width), owner_of(game, pos, c))
        for c in game.cells
    ]  # fmt: skip
    common = dict(
        game=game.spec, title=game.title, source=source, width=game.width, height=game.height,
        gravity=game.gravity, cells=tuple(board), areas=areas_of(game), moves=game.format_moves(cells),
        stones=sum(1 for c in game.cells if game.owner(pos, c)), text=game.render(pos),
    )  # fmt: skip
    if state != Status.ONGOING:
        outcome = status_value(state)
        winner = {Status.FIRST_WON: 1, Status.SECOND_WON: 2}.get(state)
        wins = game.completed(pos, winner) if winner else ()
        return PositionView(
            **common, to_move=None, outcome=outcome, outcome_text=game.outcome_text(state), wins=wins,
            value=outcome, options=(), strategy_move=None,
        )  # fmt: skip
    first = game.first_to_move(pos)
    value = Value.of(*known_interval(lookup, pos))
    options = tuple(MoveView(game.move_name(m), m, v) for m, v in move_values(lookup, pos))
    move, _ = lookup.lookup(pos)
    if move is None:  # else a move whose known value proves what the mover owns here
        fact = mover_fact(value, first)
        good = [o.cell for o in options if fact is not None and good_for(o.value.lo, o.value.hi, fact)]
        move = good[0] if good else None
    return PositionView(
        **common, to_move=SIDES[not first], outcome=None, outcome_text=None, wins=(), value=value,
        options=options, strategy_move=None if move is None else game.move_name(move),
    )  # fmt: skip


def owner_of(game, pos, cell):
    owner = game.owner(pos, cell)
    return SIDES[owner - 1] if owner else None


def areas_of(game):
    """The game's areas; a game rebuilt from stored rules (a book's, a database's) has none of
    its own and takes the built-in game's of its spec when their rules are the same."""
    if game.areas or game.spec.startswith("file:"):
        return game.areas
    try:
        built_in = load_game(game.spec)
    except GameError:
        return ()
    return built_in.areas if built_in.rules_data() == game.rules_data() else ()
