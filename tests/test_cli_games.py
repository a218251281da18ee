"""The `pndb games` and `pndb show` commands, and how the CLI reports bad input.

Expected boards and outcomes come from the reference model (tests/reference.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import reference as R
from conftest import assert_user_error, cli, ref

SPECS_LISTED = ["tictactoe", "qango6", "qango6:castle", "qango6:tournament", "qango7", "qango7:nocap",
                "qango7plus", "qango7plus:edges", "qango7plus:tournament", "connect4", "mnk:4,4,3",
                "connect4:4x4"]  # fmt: skip


def pndb_script():
    """The `pndb` console script installed next to the running Python."""
    path = Path(sys.executable).parent / ("pndb.exe" if os.name == "nt" else "pndb")
    if not path.exists():
        pytest.skip("the pndb console script is not installed next to sys.executable")
    return str(path)


# ---------------------------------------------------------------- help and listing


COMMANDS = ["games", "show", "solve", "status", "check", "export", "verify", "play"]


@pytest.mark.parametrize("args", [["--help"], ["-h"]] + [[c, "--help"] for c in COMMANDS])
def test_help(args):
    result = cli(*args)
    assert result.returncode == 0
    assert "Usage:" in result.stdout
    if args == ["--help"] or args == ["-h"]:
        assert all(c in result.stdout for c in COMMANDS)
    else:
        # the command's own text, not just the usage line
        assert len([line for line in result.stdout.splitlines() if line.strip()]) >= 3
    if args[0] == "show":
        assert "--moves" in result.stdout and "GAME" in result.stdout


def test_games_lists_every_spec():
    result = cli("games")
    assert result.returncode == 0
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.strip()}
    for spec in SPECS_LISTED:
        assert spec in rows, spec
    # board, cells, symmetries and (minimal) patterns of a few, from the reference model
    for spec, syms in (("qango6", 8), ("qango7", 4), ("connect4", 2), ("tictactoe", 8)):
        rg = ref(spec)
        _, board, cells, nsym, npat = rows[spec][:5]
        assert board == f"{rg.width}x{rg.height}"
        assert int(cells) == len(rg.cells)
        assert int(nsym) == syms
        assert int(npat) == len(rg.minimal_patterns)
    assert "mnk:M,N,K" in result.stdout and "connect4:WxH" in result.stdout
    assert "file:" in result.stdout


# ---------------------------------------------------------------- show


def board_of(rg, a, b):
    """The rows of the board as X/O/. strings (blank for a missing cell), from the reference."""
    rows = []
    for r in range(rg.height):
        row = []
        for c in range(rg.width):
            i = r * rg.width + c
            row.append(" " if i not in rg.cells else "X" if a >> i & 1 else "O" if b >> i & 1 else ".")
        rows.append(" ".join(row))
    return rows


def play_names(rg, names):
    a = b = 0
    for n in names:
        a, b = R.play(rg, a, b, R.cell_index(n, rg.width))
    return a, b


def test_show_empty_board():
    result = cli("show", "tictactoe")
    assert result.returncode == 0
    out = result.stdout
    assert "to move: first player" in out
    assert out.count(".") >= 9


def test_show_qango6_moves():
    rg = ref("qango6")
    a, b = play_names(rg, ["c3", "d4"])
    result = cli("show", "qango6", "--moves", "c3d4")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for row in board_of(rg, a, b):
        assert row in out
    assert "2 stones" in out
    assert "to move: first player" in out


def test_show_connect4_gravity():
    rg = ref("connect4")
    a = b = 0
    for col in (3, 3, 4, 2):
        a, b = R.play(rg, a, b, R.drop(rg, a, b, col))
    result = cli("show", "connect4", "-m", "4453")
    assert result.returncode == 0, result.stdout + result.stderr
    for row in board_of(rg, a, b):
        assert row in result.stdout
    assert "4 stones" in result.stdout
    assert "to move: first player" in result.stdout


def test_show_outcomes():
    result = cli("show", "tictactoe", "--moves", "a1b1a2b2a3")
    assert result.returncode == 0
    assert "game over" in result.stdout and "first player has won" in result.stdout
    # a drawn tic-tac-toe game (checked with the reference first)
    rg = ref("tictactoe")
    moves = "b2 a1 c1 a3 a2 c2 b1 b3 c3".split()
    a, b = play_names(rg, moves)
    assert R.outcome(rg, a, b) == R.DRAW
    result = cli("show", "tictactoe", "--moves", " ".join(moves))
    assert result.returncode == 0
    assert "game over: a draw" in result.stdout
    # the second player wins in Connect Four 4x4 with four in column 2
    result = cli("show", "connect4:4x4", "--moves", "12123232")
    rg = ref("connect4:4x4")
    a = b = 0
    for ch in "12123232":
        a, b = R.play(rg, a, b, R.drop(rg, a, b, int(ch) - 1))
    assert R.outcome(rg, a, b) == R.SECOND_WON
    assert result.returncode == 0
    assert "second player has won" in result.stdout


def test_show_file_game(tmp_path):
    path = tmp_path / "clone.json"
    pats = [sorted(p) for p in R.k_in_a_row(3, 3, 3)]
    path.write_text(json.dumps({"width": 3, "height": 3, "win_patterns": pats}))
    result = cli("show", f"file:{path}", "--moves", "b2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "to move: second player" in result.stdout


# ---------------------------------------------------------------- bad input


BAD = {
    "unknown game": ["show", "chess"],
    "unknown variant": ["show", "qango6:fortress"],
    "malformed spec": ["show", "mnk:3,x,3"],
    "malformed move": ["show", "tictactoe", "--moves", "a1 zz"],
    "malformed move, digits": ["show", "tictactoe", "--moves", "11"],
    "multi-line moves": ["show", "tictactoe", "--moves", "a1\nzz"],
    "occupied cell": ["show", "tictactoe", "--moves", "b2b2"],
    "off-board cell": ["show", "tictactoe", "--moves", "d1"],
    "off-board row": ["show", "qango6", "--moves", "a7"],
    "missing cell": ["show", "qango7plus", "--moves", "a1"],
    "full column": ["show", "connect4:4x4", "--moves", "11111"],
    "no such column": ["show", "connect4", "--moves", "8"],
    "non-ASCII digit": ["show", "connect4", "--moves", "4\u00b2"],
    "move after the end": ["show", "tictactoe", "--moves", "a1b1a2b2a3c3"],
    "opening rule": ["show", "qango6:castle", "--moves", "c3"],
    "tournament rule": ["show", "qango7plus:tournament", "--moves", "d4"],
}


@pytest.mark.parametrize("what", sorted(BAD))
def test_bad_input_exits_2_with_one_line(what):
    assert_user_error(cli(*BAD[what]), silent=True)


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"width": 3}', '{"width": 3, "height": 3, "win_patterns": [[0, 1, 9]]}',
     '{"width": 3, "height": 3, "win_patterns": [[0, 1, 2]], "bogus": 1}', b"\xff\xfe\x00\x81",
     '{"width": 1e999, "height": 3, "win_patterns": [[0]]}', "[" * 50_000],
)  # fmt: skip
def test_bad_file_spec(tmp_path, content):
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    assert_user_error(cli("show", f"file:{path}"), silent=True)


def test_missing_file_spec(tmp_path):
    line = assert_user_error(cli("show", f"file:{tmp_path / 'nope.json'}"), silent=True)
    assert "nope.json" in line
    assert_user_error(cli("show", f"file:{tmp_path}"), silent=True)


def test_messages_name_the_problem():
    assert "chess" in assert_user_error(cli("show", "chess"), silent=True)
    assert "full" in assert_user_error(cli(*BAD["full column"]), silent=True)
    assert "occupied" in assert_user_error(cli(*BAD["occupied cell"]), silent=True)
    assert "over" in assert_user_error(cli(*BAD["move after the end"]), silent=True)
    assert "opening rule" in assert_user_error(cli(*BAD["opening rule"]), silent=True)


def test_a_solve_in_one_process_loads_no_worker_pool(tmp_path):
    """The CLI names the user errors of the modules a command has loaded: importing every
    module whose errors it names (the worker pool's, the cluster's) cost each process of
    every command a tenth of a CPU second, multiprocessing included."""
    db = tmp_path / "db"
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in ('pndb.cluster', 'pndb.workers', 'multiprocessing')"
        " if m in sys.modules), file=sys.stderr))\n"
        "from pndb.cli import main\n"
        f"sys.argv = ['pndb', 'solve', 'tictactoe', '--db', {str(db)!r}, '--quiet']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_user_errors_name_exception_classes():
    """Each (module, class) the CLI reports as a user error names an exception class (a renamed
    or moved class would otherwise be reported as a defect, with a traceback)."""
    import importlib

    from pndb.cli import USER_ERRORS

    for module, name in USER_ERRORS:
        assert issubclass(getattr(importlib.import_module(module), name), Exception), (module, name)


# ---------------------------------------------------------------- the real console script


def test_console_script_subprocess():
    exe = pndb_script()
    args = [exe, "show", "qango6", "--moves", "c3d4"]
    ok = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "to move: first player" in ok.stdout
    args = [exe, "show", "tictactoe", "--moves", "a1b1a2b2a3c3"]
    bad = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in bad.stderr
    listing = subprocess.run([exe, "games"], capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0
    assert "qango7plus:tournament" in listing.stdout
