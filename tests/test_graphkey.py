"""Graph keys (pndb.games.placement.graphkey) against the plain reference model.

- Positions that share a graph key have the same minimax value (reference model): on every
  ongoing position of tic-tac-toe, and on every position below a few random positions of the
  larger boards (whole subtrees, where positions of different board keys meet often; all of
  mnk:4,4,3 alone has 3.5 million ongoing positions, minutes for the reference). qango7 is the
  one with a disc cap: without the stones left in the key, its test fails.
- Board-symmetric positions share a graph key, and graph keys split positions exactly as
  pynauty's own certificate of the same graph does (the compact encoding loses nothing).
"""

import random
from functools import cache

import pytest
import reference as R
from conftest import ref

from pndb.games import load_game
from pndb.games.placement.game import Position

pynauty = pytest.importorskip("pynauty")

from pndb.games.placement.graphkey import coloured_graph, graph_key  # noqa: E402

# spec -> (random roots, stones at each root): subtrees that plain minimax solves in seconds
SUBTREES = {
    "mnk:4,4,3": (12, 5),
    "mnk:4,4,4": (6, 6),
    "mnk:5,4,4": (8, 10),
    "mnk:5,5,4": (10, 15),
    "qango6": (10, 25),
    "qango7plus": (10, 26),
    "qango7": (4, 35),  # the disc cap (40 stones) is near
}


def ongoing_below(g, roots):
    """Every ongoing position reachable in play from ``roots`` (the roots included)."""
    seen = set(roots)
    stack = list(roots)
    while stack:
        a, b = stack.pop()
        for cell in R.legal_moves(g, a, b):
            child = R.play(g, a, b, cell)
            if child not in seen and R.outcome(g, *child) == R.ONGOING:
                seen.add(child)
                stack.append(child)
    return sorted(seen)


@cache
def positions_of(spec):
    """Every ongoing position of tic-tac-toe; elsewhere every one below random roots."""
    g = ref(spec)
    if spec == "tictactoe":
        return sorted(p for p in R.enumerate_positions(g) if R.outcome(g, *p) == R.ONGOING)
    count, stones = SUBTREES[spec]
    rng = random.Random(spec)
    roots = set()
    while len(roots) < count:
        a = b = 0
        for cell in R.random_game(g, rng, avoid_wins=True)[:stones]:
            a, b = R.play(g, a, b, cell)
        if R.outcome(g, a, b) == R.ONGOING and (a | b).bit_count() == stones:
            roots.add((a, b))
    return ongoing_below(g, roots)


@pytest.mark.parametrize("spec", ["tictactoe", *SUBTREES])
def test_shared_graph_key_means_same_value(spec):
    game, g = load_game(spec), ref(spec)
    values = {}  # graph key -> (minimax, a position)
    board_keys = {}  # graph key -> the board keys met under it
    for a, b in positions_of(spec):
        key = graph_key(game, a, b)
        v = R.minimax(g, a, b)
        seen = values.setdefault(key, (v, (a, b)))
        assert seen[0] == v, f"{spec}: {seen[1]} and {(a, b)} share a graph key, values {seen[0]} {v}"
        board_keys.setdefault(key, set()).add(game.key(Position(a, b)))
    merged = sum(len(k) - 1 for k in board_keys.values())
    assert merged > 0, "no two board keys met under one graph key: the test has no power"


@pytest.mark.parametrize("spec", ["tictactoe", "mnk:4,4,4", "mnk:5,4,4", "qango6", "qango7plus"])
def test_symmetric_positions_share_a_graph_key(spec):
    game = load_game(spec)
    positions = positions_of(spec)
    for a, b in random.Random(1).sample(positions, min(300, len(positions))):
        keys = {graph_key(game, *R.image(perm, a, b)) for perm in ref(spec).symmetries}
        assert len(keys) == 1, (a, b)


@pytest.mark.parametrize("spec", ["mnk:4,4,3", "qango6"])
def test_graph_key_splits_as_the_certificate(spec):
    """Equal graph keys exactly where the scalars, class sizes and nauty certificates agree."""
    game = load_game(spec)
    by_key, by_certificate = {}, {}
    for a, b in positions_of(spec)[:3000]:
        g = coloured_graph(game, a, b)
        certificate = (g.scalars, g.ncells, tuple(g.sizes), pynauty.certificate(g.graph))
        by_key.setdefault(graph_key(game, a, b), set()).add(certificate)
        by_certificate.setdefault(certificate, set()).add(graph_key(game, a, b))
    assert all(len(s) == 1 for s in by_key.values())
    assert all(len(s) == 1 for s in by_certificate.values())
    assert len(by_key) < 3000  # some positions did merge


def test_refused_positions():
    with pytest.raises(ValueError):
        graph_key(load_game("connect4:4x4"), 0, 0)  # gravity
    with pytest.raises(ValueError):
        graph_key(load_game("tictactoe"), 0b111, 0b11000)  # the first player has won
