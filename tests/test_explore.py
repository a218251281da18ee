"""The position view (pndb.describe) of a game, a book and a database, against the reference
model (tests/reference.py): every move's value holds the minimax value, a strategy move keeps
it, a finished position names the winner's patterns, Qango's areas survive stored rules, the
JSON form reads back, and `pndb show DB` prints what the database knows."""

import json
import re
from functools import cache

import pytest
import reference as R
from conftest import cli, ref

import pndb
from pndb.explore import PositionView
from pndb.values import Value

SPECS = ("tictactoe", "connect4:4x4")
POSITIONS = [
    ("tictactoe", ""),
    ("tictactoe", "b2"),
    ("tictactoe", "a1"),
    ("tictactoe", "b2 a1"),
    ("tictactoe", "a1 b1 a2 b2"),
    ("connect4:4x4", ""),
    ("connect4:4x4", "23"),
    ("connect4:4x4", "2312"),
]


@cache
def ref_position(spec, moves):
    """(a, b) after ``moves`` (column digits under gravity, cell names else), by the reference."""
    g = ref(spec)
    a = b = 0
    for token in moves if g.gravity else moves.split():
        cell = R.drop(g, a, b, int(token) - 1) if g.gravity else R.cell_index(token, g.width)
        a, b = R.play(g, a, b, cell)
    return a, b


def holds(value, minimax):
    """Whether a Value's interval holds a minimax value (-1, 0, +1)."""
    return value.lo - 1 <= minimax <= value.hi - 1


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """spec -> (database, book), each solved and exported through the CLI."""
    d = tmp_path_factory.mktemp("sources")
    out = {}
    for spec in SPECS:
        db, book = d / f"{spec.replace(':', '-')}.lmdb", d / f"{spec.replace(':', '-')}.pnbook"
        for args in (("solve", spec, "--db", db, "-q"), ("export", db, "-o", book)):
            done = cli(*args)
            assert done.returncode == 0, done.stdout + done.stderr
        out[spec] = db, book
    return out


def source_of(kind, spec, sources):
    return {"game": spec, "database": sources[spec][0], "book": sources[spec][1]}[kind]


@pytest.mark.parametrize("kind", ["game", "book", "database"])
@pytest.mark.parametrize("spec, moves", POSITIONS)
def test_move_values_hold_minimax(sources, kind, spec, moves):
    g = ref(spec)
    a, b = ref_position(spec, moves)
    view = pndb.describe(source_of(kind, spec, sources), moves)
    assert view.source == kind and view.to_move == ("first" if R.first_to_move(a, b) else "second")
    assert [o.cell for o in sorted(view.options, key=lambda o: o.cell)] == R.legal_moves(g, a, b)
    value = R.minimax(g, a, b)
    assert holds(view.value, value), (view.value, value)
    for o in view.options:
        child = R.play(g, a, b, o.cell)
        assert holds(o.value, R.minimax(g, *child)), (moves, o)
    if view.strategy_move is not None:
        move = next(o for o in view.options if o.move == view.strategy_move)
        assert R.minimax(g, *R.play(g, a, b, move.cell)) == value, (moves, move)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("kind", ["book", "database"])
def test_solved_source_gives_a_strategy_move_at_the_start(sources, kind, spec):
    view = pndb.describe(source_of(kind, spec, sources), "")
    assert view.value == Value.DRAW  # both games are draws (reference: test_book's BOOKS)
    assert view.strategy_move is not None
    assert view.reply().move == view.strategy_move


def test_game_alone_knows_only_the_rules():
    """After a1 b1 a2 b2 the rules alone know that a3 wins and that any move but a3 or b3
    lets O win with b3; b3 itself is unknown."""
    view = pndb.describe("tictactoe", "a1 b1 a2 b2")
    values = {o.move: o.value for o in view.options}
    assert values.pop("a3") == Value.FIRST_WINS and values.pop("b3") == Value.UNKNOWN
    assert set(values.values()) == {Value.SECOND_WINS}
    assert view.value == Value.FIRST_WINS and view.strategy_move == "a3"
    assert pndb.describe("tictactoe").strategy_move is None


@pytest.mark.parametrize(
    "spec, moves",
    [
        ("tictactoe", "a1 b1 a2 b2 a3"),
        ("qango6", "a1 f6 b1 f5 a2"),  # X fills the area a1 b1 a2
        ("qango6", "a1 a2 b1 b2 c1 c2 d1 d2 e1"),  # a five in a row
        ("connect4:4x4", "12123232"),
        ("tictactoe", "b2 a1 c1 a3 a2 c2 b1 b3 c3"),  # a draw
    ],
)
def test_finished_position_names_the_winning_patterns(spec, moves):
    g = ref(spec)
    a, b = ref_position(spec, moves)
    state = R.outcome(g, a, b)
    view = pndb.describe(spec, moves)
    assert view.to_move is None and view.options == () and view.strategy_move is None
    assert view.outcome == {R.FIRST_WON: Value.FIRST_WINS, R.SECOND_WON: Value.SECOND_WINS,
                            R.DRAW: Value.DRAW}[state]  # fmt: skip
    winner = {R.FIRST_WON: a, R.SECOND_WON: b}.get(state, 0)
    expected = {p for p in map(frozenset, g.minimal_patterns) if winner and R.bits(p) & winner == R.bits(p)}
    assert set(map(frozenset, view.wins)) == expected
    assert bool(expected) == (state != R.DRAW)


def test_cells_name_owners_and_geometry():
    moves = "4453"
    a, b = ref_position("connect4", moves)
    view = pndb.describe("connect4", moves)
    assert view.gravity and (view.width, view.height) == (7, 6) and view.stones == 4
    assert len(view.cells) == 42
    for c in view.cells:
        assert (c.row, c.col) == divmod(c.cell, 7) and c.name == str(c.col + 1)
        assert c.owner == ("first" if a >> c.cell & 1 else "second" if b >> c.cell & 1 else None)
    assert {c.name: c.owner for c in pndb.describe("qango6", "c3 d4").cells if c.owner} == {
        "c3": "first",
        "d4": "second",
    }


def test_qango_areas_survive_stored_rules(tmp_path):
    expected = set(map(frozenset, R.QANGO6_AREAS))
    assert set(map(frozenset, pndb.describe("qango6").areas)) == expected
    db = tmp_path / "q.lmdb"
    cut = cli("solve", "qango6", "--db", db, "-q", "--max-nodes", "1", "--inner-nodes", "100")
    assert cut.returncode in (0, 3), cut.stdout + cut.stderr  # the inner search may decide it at once
    view = pndb.describe(db, "c3")
    assert view.source == "database" and set(map(frozenset, view.areas)) == expected
    assert pndb.describe("tictactoe").areas == ()


def test_json_round_trip(sources):
    db, book = sources["tictactoe"]
    views = [
        pndb.describe("qango6", "a1 f6 b1 f5 a2"),
        pndb.describe(book, "b2"),
        pndb.describe(db, "b2 a1"),
        pndb.describe(sources["connect4:4x4"][0], "23"),
    ]
    for view in views:
        text = view.to_json()
        assert PositionView.from_json(text) == view
        data = json.loads(text)
        assert data == view.to_dict() and isinstance(data["value"], str)
        assert all(isinstance(o["value"], str) for o in data["options"])


def shown_values(stdout):
    """{move: value name} of the per-move lines of `pndb show`."""
    return dict(re.findall(r"^\s+([a-z]+\d+|\d+)\s+([a-z-]+)\s*$", stdout, re.MULTILINE))


@pytest.mark.parametrize("spec, moves", [("tictactoe", "b2"), ("connect4:4x4", "23")])
def test_show_database(sources, spec, moves):
    db, _ = sources[spec]
    shown = cli("show", db, "--moves", moves)
    assert shown.returncode == 0, shown.stderr
    g = ref(spec)
    a, b = ref_position(spec, moves)
    m = re.search(r"^database value: (\S+)$", shown.stdout, re.MULTILINE)
    assert m and holds(Value.named(m.group(1)), R.minimax(g, a, b))
    values = shown_values(shown.stdout)
    assert len(values) == len(R.legal_moves(g, a, b))
    view = pndb.describe(db, moves)
    for o in view.options:
        assert values[o.move] == o.value.name
        assert holds(o.value, R.minimax(g, *R.play(g, a, b, o.cell)))
    as_json = cli("show", db, "--moves", moves, "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == view.to_dict()


def test_show_of_a_directory_that_is_no_database(tmp_path):
    done = cli("show", tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "database" in lines[0]
