"""`pndb play` in the terminal, fed through standard input: the colour areas beside the board,
the winning pattern named, undo, hint and quit, and a word where the book has no move. What the
board shows is checked against pndb.describe and the game's own areas and patterns."""

import re

import pytest
from conftest import cli, ok

import pndb
from pndb.terminal import pattern_name


@pytest.fixture(scope="module")
def qango6_book(tmp_path_factory):
    """The book of a Qango 6 solve (first player wins), through the CLI."""
    d = tmp_path_factory.mktemp("play")
    ok(cli("solve", "qango6", "--db", d / "q.lmdb", "-q"))
    ok(cli("export", d / "q.lmdb", "-o", d / "q.pnbook"))
    return d / "q.pnbook"


def boards(stdout, height=6):
    """Each board printed: (the board's own lines, the area map's rows) as lists of words."""
    lines = stdout.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.rstrip().endswith("colour areas"):
            rows = [re.sub(r"^.*your move: ", "", x) for x in lines[i + 1 : i + 1 + height]]
            out.append(([r.split()[1:7] for r in rows], [r.split()[7:] for r in rows]))
    return out


def test_the_areas_are_drawn_beside_the_board(qango6_book):
    out = ok(cli("play", qango6_book, "--as", "second", stdin="quit\n"))
    game = pndb.load_game("qango6")
    (stones, letters), *_ = boards(out)
    by_letter = {}
    for r, row in enumerate(letters):
        for c, letter in enumerate(row):
            by_letter.setdefault(letter, set()).add(r * 6 + c)
    assert sorted(map(sorted, by_letter.values())) == sorted(map(sorted, game.areas))
    assert not {"X", "O"} & set(by_letter)  # a letter is never a stone's
    assert out.rstrip().endswith("bye") and "game over" not in out


def test_a_game_to_its_end_names_the_winning_pattern(qango6_book):
    cells = [pndb.load_game("qango6").move_name(c) for c in range(36)]
    out = ok(cli("play", qango6_book, "--as", "second", stdin="\n".join(cells * 3) + "\n"))
    pattern = re.search(r"^winning pattern: (.*): (.*)$", out, re.M)
    assert pattern and out.rstrip().splitlines()[-1] == "game over: the first player has won"
    final = boards(out)[-1][0]
    named = pattern.group(2).split()
    assert all(final[int(n[1]) - 1][ord(n[0]) - ord("a")] == "X" for n in named)  # the winner's stones
    game = pndb.load_game("qango6")
    grid = sorted((int(n[1]) - 1) * 6 + ord(n[0]) - ord("a") for n in named)
    assert tuple(grid) in {tuple(sorted(p)) for p in game.patterns}
    assert (pattern.group(1) == "a colour area") == (tuple(grid) in {tuple(sorted(a)) for a in game.areas})


def test_hint_is_the_books_move_and_undo_takes_back_a_move_and_its_answer(qango6_book):
    out = ok(cli("play", qango6_book, "--as", "first", stdin="undo\nhint\nb2\nundo\nhint\nquit\n"))
    strategy = pndb.describe(qango6_book, "").strategy_move
    hints = re.findall(r"hint: (\w+) \(the book's strategy", out)
    assert hints == [strategy, strategy]  # on the empty board, before and after the undo
    assert "nothing of yours to undo" in out
    assert "undone: back before your move 1" in out
    shown = boards(out)
    assert shown[-1][0] == shown[0][0]  # the board after undo is the empty board again


def test_the_book_without_a_move_says_pndb_plays_on_its_own(qango6_book):
    """The first player wins Qango 6: a book has no strategy for the second, whom it plays here."""
    strategy = pndb.describe(qango6_book, "").strategy_move
    out = ok(cli("play", qango6_book, "--as", "first", stdin=f"{strategy}\nquit\n"))
    assert "the book has no move here: pndb plays on its own" in out
    assert re.search(r"^pndb plays \w+$", out, re.M) and "book plays" not in out


@pytest.mark.parametrize(
    "spec, moves, name",
    [
        ("qango6", "a1 b1 a2 b2 a3 b3 a4 b4 a5", "5 in a row down: a1 a2 a3 a4 a5"),
        ("qango6", "c3 a1 d3 a2 c4 a3 d4", "a 2x2 square: c3 d3 c4 d4"),
        ("qango6", "a1 f6 b1 e6 a2", "a colour area: a1 b1 a2"),
        ("connect4:5x4", "1122334", "4 in a row across: a4 b4 c4 d4"),
        ("connect4:5x4", "12233434544", "4 in a row diagonally: d1 c2 b3 a4"),
        ("tictactoe", "a1 b1 b2 c1 c3", "3 in a row diagonally: a1 b2 c3"),
    ],
)
def test_pattern_names(spec, moves, name):
    view = pndb.describe(spec, moves)
    (cells,) = view.wins
    assert pattern_name(view, cells, pndb.load_game(spec).board_name) == name
