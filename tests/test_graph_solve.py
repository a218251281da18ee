"""Solves keyed by graph keys (`pndb solve --graph-keys`) against board keys and the reference.

- A graph-keyed solve gives the value of the board-keyed solve and of plain minimax
  (tests/reference.py), its exported book passes tools/verify.py (which knows nothing of graph
  keys), and the book holds positions that are not their node's representative (moves and
  certificates mapped through the canonical labellings).
- Positions with different board keys and one graph key share one node.
- A solve stopped by --max-nodes resumes to the right value.
- A digest collision (simulated) is an error, never a merge; bad combinations are one-line
  errors.
"""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REF_NAME, cli, minimax

from pndb import api
from pndb.games import load_game
from pndb.games.placement.game import Position

pytest.importorskip("pynauty")

from pndb.games.placement import graphkey  # noqa: E402
from pndb.games.placement.graphkey import GraphKeyCollision, GraphKeyedGame, graph_key  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# spec, start moves, inner budget (0: outer search only, every node keyed by its graph key),
# whether the book holds positions whose node has another representative (mapped moves);
# plain minimax takes seconds on each but mnk:5,4,4 from the empty board (minutes: a draw, few
# cut-offs), whose value is the board-keyed solve's
QANGO6_20 = "a1b2c3d4e5f6a6b5c4d3e2f1a2b1c1d1e1f2a3b3"
CASES = [
    ("tictactoe", "", 0, True),
    ("tictactoe", "", 5, True),
    ("tictactoe", "", 30, False),
    ("mnk:4,4,3", "", 0, False),
    ("mnk:5,4,4", "b2c2c3b3d2a2d3b4", 0, True),
    ("mnk:5,4,4", "b2c2c3b3d2a2d3b4", 20, False),
    ("mnk:5,4,4", "", 200, False),
    ("qango6", QANGO6_20, 0, True),
    ("qango6", QANGO6_20, 300, False),
]
NO_REFERENCE = {("mnk:5,4,4", "")}


def reference_value(spec, moves):
    if (spec, moves) in NO_REFERENCE:
        return None
    g = load_game(spec)
    pos, _ = g.parse_moves(moves)
    return REF_NAME[minimax(spec, pos.first, pos.second)]


def verify(book):
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "verify.py"), str(book)], capture_output=True, text=True
    )


def representatives_elsewhere(db, book):
    """Book positions whose node's representative is another position (so the export mapped
    them through the labellings)."""
    with api.open_db(db) as (store, game), store.view(game) as view:
        records = api.open_book(book).records
        count = 0
        for a, b in zip(records["a"].tolist(), records["b"].tolist()):
            pos = Position(a, b)
            key = view.game.key(pos)
            entry = view.graph(key)
            count += entry is not None and entry.board != game.key(pos)
        return count


@pytest.mark.parametrize("spec,moves,inner,mapped", CASES)
def test_graph_keyed_solve_matches_board_keys_and_minimax(tmp_path, spec, moves, inner, mapped):
    graph = api.solve(spec, db=tmp_path / "g", moves=moves, inner_nodes=inner, graph_keys=True)
    board = api.solve(spec, db=tmp_path / "b", moves=moves, inner_nodes=inner)
    assert graph.solved and board.solved
    assert graph.value.name == board.value.name
    assert reference_value(spec, moves) in (None, graph.value.name)
    assert api.status(tmp_path / "g")["graph_keys"] > 0
    api.export(tmp_path / "g", tmp_path / "g.pnbook")
    r = verify(tmp_path / "g.pnbook")
    assert r.returncode == 0 and r.stdout.startswith("OK proven"), r.stdout + r.stderr
    assert (representatives_elsewhere(tmp_path / "g", tmp_path / "g.pnbook") > 0) == mapped


def test_positions_with_one_graph_key_share_a_node(tmp_path):
    """Two tic-tac-toe positions that no board symmetry maps onto each other but whose games
    are isomorphic: solved one after the other in one graph-keyed database, the second needs no
    expansion (its node is the first's); with board keys it needs its own."""
    game = load_game("tictactoe")
    one, two = "a1b1c2b2", "a1c1b3c3"
    p1, p2 = game.parse_moves(one)[0], game.parse_moves(two)[0]
    assert game.key(p1) != game.key(p2)
    assert graph_key(game, *p1) == graph_key(game, *p2)
    expected = reference_value("tictactoe", one)
    assert reference_value("tictactoe", two) == expected
    for graph_keys in (True, False):
        db = tmp_path / f"keys-{graph_keys}"
        solves = api.solve_positions("tictactoe", [one, two], db=db, inner_nodes=0, graph_keys=graph_keys)
        results = list(solves)
        assert [r.value.name for r in results] == [expected, expected]
        assert (results[1].nodes == 0) == graph_keys
    with api.open_db(tmp_path / "keys-True") as (store, g), store.view(g) as view:
        k1, k2 = view.game.key(p1), view.game.key(p2)
        assert k1 == k2 and graphkey.is_node_key(k1)
        assert view.node(k1) is not None and view.graph(k1).board == g.key(p1)


def isomorphic_pair(game, moves, plies):
    """Two positions ``plies`` moves after ``moves``, ongoing, with one graph key and different
    board keys (the first found in move order)."""
    from pndb.values import Status

    seen = {}
    layer = [game.parse_moves(moves)[0]]
    for _ in range(plies):
        layer = [game.play(p, m) for p in layer for m in game.legal_moves(p)]
    for pos in layer:
        if game.status(pos, early=True) != Status.ONGOING:
            continue
        other = seen.setdefault(graph_key(game, *pos), pos)
        if game.key(other) != game.key(pos):
            return other, pos
    raise AssertionError("no such pair")


PAIRS = [("tictactoe", "a1", 3), ("mnk:5,4,4", "b2c2c3b3d2a2", 2), ("qango6", QANGO6_20[:-4], 3)]


@pytest.mark.parametrize("spec,moves,plies", PAIRS)
def test_a_book_from_a_position_the_store_knows_only_by_an_isomorphic_one(tmp_path, spec, moves, plies):
    """The inner search proves one position; a second solve, from another position with the
    same graph key, finds the node decided. Its book's every move and certificate is mapped
    from the first position's proof records through the labellings, and verifies."""
    game = load_game(spec)
    one, two = isomorphic_pair(game, moves, plies)
    db = tmp_path / "db"
    first = api.solve(spec, db=db, moves=game.format_moves(cells_of(game, one)), graph_keys=True)
    second = api.solve(spec, db=db, moves=game.format_moves(cells_of(game, two)), graph_keys=True)
    assert second.expansions == 0 and second.value == first.value
    with api.open_db(db) as (store, g), store.view(g) as view:
        assert view.graph(view.game.key(two)).board == g.key(one) != g.key(two)
    api.export(db, tmp_path / "b.pnbook")
    r = verify(tmp_path / "b.pnbook")
    assert r.returncode == 0 and r.stdout.startswith("OK proven"), r.stdout + r.stderr


def cells_of(game, pos):
    """Moves that reach ``pos`` from the empty board (the first player's and the second's
    stones alternately)."""
    a = [c for c in range(64) if pos.first >> c & 1]
    b = [c for c in range(64) if pos.second >> c & 1]
    return [c for pair in zip(a, b + [None]) for c in pair if c is not None]


def test_a_stopped_solve_resumes_to_the_right_value(tmp_path):
    db = tmp_path / "db"
    args = ["solve", "mnk:4,4,3", "--db", db, "--graph-keys", "--inner-nodes", "0", "-q"]
    first = cli(*args, "--max-nodes", "3")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "not solved yet" in first.stdout
    nodes = api.status(db)["nodes"]
    done = cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "first player wins" in done.stdout
    assert api.status(db)["nodes"] > nodes
    assert cli("export", db, "--output", tmp_path / "b.pnbook").returncode == 0
    assert verify(tmp_path / "b.pnbook").returncode == 0


def test_a_digest_collision_is_an_error(tmp_path, monkeypatch):
    """Every graph key given one digest: the second graph key met is refused, not merged."""
    same = b"\xff" + bytes(7) + b"\xff" + bytes(7)
    monkeypatch.setattr(graphkey, "node_key", lambda graph: same)
    with pytest.raises(GraphKeyCollision, match="share node key"):
        api.solve("tictactoe", db=tmp_path / "g", inner_nodes=0, graph_keys=True)
    r = cli("solve", "tictactoe", "--db", tmp_path / "h", "--graph-keys", "--inner-nodes", "0", "-q")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "share node key" in r.stderr, r.stderr


def test_the_table_compares_full_graph_keys():
    """The check itself, without a search: a stored entry under a node key whose graph key is
    another one is a collision; the same graph key is the same node."""
    game = load_game("tictactoe")
    table = {}

    class Table:
        graph = staticmethod(table.get)
        put_graph = staticmethod(table.__setitem__)

    keyed = GraphKeyedGame(game, Table())
    pos = game.parse_moves("a1b1c2b2")[0]
    key = keyed.key(pos)
    assert table[key].graph == graph_key(game, *pos)
    assert GraphKeyedGame(game, Table()).key(game.parse_moves("a1c1b3c3")[0]) == key
    table[key] = table[key]._replace(graph=table[key].graph + b"\x00")
    with pytest.raises(GraphKeyCollision):
        GraphKeyedGame(game, Table()).key(pos)


@pytest.mark.parametrize(
    "setup,args,message",
    [
        (None, ["solve", "connect4:4x4", "--graph-keys"], "without gravity"),
        (["solve", "tictactoe", "--inner-nodes", "0"], ["solve", "tictactoe", "--graph-keys"], "board keys"),
        (["solve", "tictactoe", "--graph-keys", "--max-nodes", "1"], ["solve", "tictactoe"], "--graph-keys"),
        (["solve", "tictactoe", "--graph-keys"], ["check"], "graph-keyed"),
        (["solve", "tictactoe", "--graph-keys"], ["compact"], "graph-keyed"),
    ],
)
def test_bad_combinations_are_one_line_errors(tmp_path, setup, args, message):
    db = tmp_path / "db"
    if setup:
        assert cli(*setup, "--db", db, "-q").returncode in (0, 3)
    extra = ["--db", db, "-q"] if args[0] == "solve" else [db]
    r = cli(*args, *extra)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.stderr
