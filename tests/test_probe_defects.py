"""Small defects a hostile probe of pndb met, each as a user meets it: a command in a process of
its own (or the Python API), and what it must give: a result, or one `error: ...` line on
stderr with exit code 2, never a traceback.

Every case here runs without compiling pndb's kernels but one (an unwritable kernel cache,
which compiles one small kernel): a solve ends at a check made before any search, or runs the
outer search alone with its kernels as Python (PYTHON_ONLY).
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import not_progress
import zstandard

import pndb
from pndb.games import GameError, game_from_rules, load_game

ROOT = Path(__file__).resolve().parent.parent
PYTHON_ONLY = {"NUMBA_DISABLE_JIT": "1"}  # with --inner-nodes 0: no kernel is compiled


def pndb_process(*args, cwd=None, env=None, stdin=None):
    """`python -m pndb ARGS` in a process of its own, pndb imported from this checkout."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pndb", *map(str, args)],
        capture_output=True, text=True, timeout=300, cwd=cwd or ROOT, env=environ, input=stdin,
    )  # fmt: skip


def one_error_line(done):
    """The single `error: ...` line of a run that exited 2 (and printed no traceback)."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    return lines[0]


# ---------------------------------------------------------------- PNDB_THREAT_DEPTH

BAD_DEPTHS = ["x", "-1", "9", "99999999999999999999999", "\u00b2", "2.5"]


@pytest.mark.parametrize("depth", BAD_DEPTHS)
def test_bad_threat_depth_is_one_line_even_where_the_solve_would_not_read_it(tmp_path, depth):
    """tic-tac-toe is solved by its quick start before any inner solver reads the setting: a bad
    value must still be refused, before a database is made."""
    done = pndb_process("solve", "tictactoe", "--db", tmp_path / "t.lmdb", env={"PNDB_THREAT_DEPTH": depth})
    assert "PNDB_THREAT_DEPTH" in one_error_line(done)
    assert not (tmp_path / "t.lmdb").exists()


def test_bad_threat_depth_is_a_settings_error_of_the_api(tmp_path, monkeypatch):
    monkeypatch.setenv("PNDB_THREAT_DEPTH", "-3")
    with pytest.raises(pndb.SettingsError, match="PNDB_THREAT_DEPTH"):
        pndb.solve("mnk:4,4,3", db=tmp_path / "m.lmdb")
    assert not (tmp_path / "m.lmdb").exists()


def test_good_threat_depth_still_solves(tmp_path):
    env = {"PNDB_THREAT_DEPTH": " 0", **PYTHON_ONLY}
    done = pndb_process("solve", "tictactoe", "--db", tmp_path / "t.lmdb", "--inner-nodes", "0", env=env)
    assert done.returncode == 0 and "draw" in done.stdout, done.stderr


# ---------------------------------------------------------------- rules named Connect Four

CONNECT4_CHANGES = {
    "a disc cap": {"disc_cap": 10},
    "a first-move rule": {"first_move_forbidden": [12, 15]},  # the bottom corners: the mirror stays
}


def hand_made_book(path, spec, rules):
    """A book of no records (docs/book-format.md, layout 0001) whose header names ``spec``."""
    header = {
        "format": "pndb-book", "format_version": 1, "pndb_version": "0.1.0", "game": spec, "rules": rules,
        "start": {"moves": "", "cells": [], "first": 0, "second": 0}, "value": "draw", "partial": False,
        "records": 0, "record_size": 18,
    }  # fmt: skip
    head = json.dumps(header).encode()
    raw = b"PNBOOK\x00\x01" + len(head).to_bytes(4, "big") + head
    path.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(raw))
    return path


@pytest.mark.parametrize("rule", CONNECT4_CHANGES)
def test_rules_named_connect4_must_be_connect4s(tmp_path, rule):
    """Allis' rules hold for Connect Four alone: rules that carry its name (a book's, a
    database's) with a disc cap or a first-move rule are refused, by the API and every command
    that reads them."""
    rules = dict(load_game("connect4:4x4").rules_data(), **CONNECT4_CHANGES[rule])
    with pytest.raises(GameError, match=f"not Connect Four's: they have {rule}"):
        game_from_rules(rules, "connect4:4x4")
    game_from_rules(rules, "file:mine.json")  # the same rules under a name of their own load

    book = hand_made_book(tmp_path / "b.pnbook", "connect4:4x4", rules)
    for command in (["show", book], ["show", book, "--moves", "2"], ["play", book]):
        assert "not Connect Four's" in one_error_line(pndb_process(*command, stdin="q\n"))
    with pytest.raises(pndb.BookError, match="not Connect Four's"):
        pndb.open_book(book)

    from pndb.store import open_for_game

    db = tmp_path / "c.lmdb"
    with open_for_game(db, load_game("connect4:4x4"), writer=True) as store:
        store.commit(meta={"rules": rules})  # what an older pndb could have written
    for command in ("status", "check", "export"):
        assert "not Connect Four's" in one_error_line(pndb_process(command, db))
    with pytest.raises(pndb.StoreError, match="not Connect Four's"):
        pndb.status(db)


# ---------------------------------------------------------------- the kernel cache


def test_unwritable_kernel_cache_warns_once_and_writes_nothing_beside_the_sources(tmp_path):
    """numba, refused the cache directory it is given, falls back to __pycache__ beside the
    sources: pndb must warn once and cache elsewhere instead. The sources are a copy, so that
    what is written beside them can be seen."""
    shutil.copytree(ROOT / "pndb", tmp_path / "src" / "pndb", ignore=shutil.ignore_patterns("__pycache__"))
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would go")
    code = (
        "import numpy as np\n"
        "from pndb.games.placement import kernels as K\n"
        "print(int(K.first_to_move(np.uint64(1), np.uint64(0))), int(K.lowest_cell(np.uint64(8))))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(blocker / "cache"), "PYTHONPATH": str(tmp_path / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )
    assert done.returncode == 0 and done.stdout.split() == ["0", "3"], done.stderr[-2000:]
    warnings = done.stderr.splitlines()
    assert len(warnings) == 1 and "kernel cache" in warnings[0], done.stderr[-2000:]
    written = [p for p in (tmp_path / "src").rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert written == []


# ---------------------------------------------------------------- NUMBA_DISABLE_JIT


def test_numba_disable_jit_refuses_the_inner_solver_in_one_line(tmp_path):
    done = pndb_process("solve", "mnk:4,4,3", "--db", tmp_path / "m.lmdb", env=PYTHON_ONLY)
    assert "NUMBA_DISABLE_JIT" in one_error_line(done)


def test_numba_disable_jit_runs_the_outer_search_as_python(tmp_path):
    db = tmp_path / "m.lmdb"
    env = PYTHON_ONLY
    done = pndb_process("solve", "mnk:4,4,3", "--db", db, "--inner-nodes", "0", "-q", env=env)
    assert done.returncode == 0 and "first player wins" in done.stdout, done.stderr[-2000:]
    assert done.stderr == ""  # no warning of numba's uncompiled arithmetic
    done = pndb_process("check", db, env=env)
    assert done.returncode == 0 and "consistent" in done.stdout, done.stderr[-2000:]
    assert not_progress(done.stderr) == [], done.stderr[-2000:]


# ---------------------------------------------------------------- the API's settings

BAD_SETTINGS = [
    {"target": "first_wins"},
    {"target": None},
    {"inner_scheme": "adaptive"},
    {"inner_scheme": ["follow"]},
    {"inner_nodes": "10"},
    {"inner_nodes": -1},
    {"inner_nodes": 2.5},
    {"max_seconds": "5"},
    {"max_seconds": float("nan")},
    {"max_nodes": True},
    {"memory_mb": "1024"},
    {"inner_mb": 0},
    {"checkpoint_seconds": None},
    {"db": ""},
    {"db": 5},
]


@pytest.mark.parametrize("settings", BAD_SETTINGS, ids=[repr(s) for s in BAD_SETTINGS])
def test_api_refuses_bad_settings(tmp_path, monkeypatch, settings):
    monkeypatch.chdir(tmp_path)  # an empty db must not become db/mnk-3-3-3.lmdb here
    name = next(iter(settings))
    options = {"db": tmp_path / "t.lmdb", **settings}
    with pytest.raises(pndb.SettingsError, match=name):
        pndb.solve("tictactoe", **options)
    with pytest.raises(pndb.SettingsError, match=name):
        list(pndb.solve_positions("tictactoe", ["b2"], **options))
    assert list(tmp_path.iterdir()) == []


def test_solve_positions_of_no_positions_is_empty(tmp_path):
    assert list(pndb.solve_positions("tictactoe", [])) == []
    assert list(pndb.solve_positions("tictactoe", [], db=tmp_path / "t.lmdb")) == []


# ---------------------------------------------------------------- --memory


def test_the_documented_memory_minimum_solves(tmp_path):
    """The least --memory that --help shows is one a solve runs with; one less is refused."""
    done = pndb_process("solve", "--help")
    least = int(re.search(r"--memory INTEGER RANGE .*?(\d+)<=x", " ".join(done.stdout.split()))[1])
    t = tmp_path / "t.lmdb"
    done = pndb_process(
        "solve", "tictactoe", "--db", t, "--memory", least, "--inner-nodes", "0", env=PYTHON_ONLY
    )
    assert done.returncode == 0 and "draw" in done.stdout, done.stderr
    assert "--memory" in one_error_line(pndb_process("solve", "tictactoe", "--memory", least - 1))


def test_the_memory_minimum_fits_whatever_the_process_holds(tmp_path, monkeypatch):
    """Only BASE_MB of the process's own memory counts: at the minimum a solve's cache and inner
    table fit, even in a process holding gigabytes."""
    from pndb import api, cache
    from pndb.defaults import MIN_MEMORY_MB
    from pndb.settings import SolveSettings
    from pndb.store import open_for_game

    monkeypatch.setattr(cache, "anonymous_memory_bytes", lambda: 8 << 30)
    game = load_game("qango6")
    with open_for_game(tmp_path / "q.lmdb", game, writer=True) as store:
        least = SolveSettings(memory_mb=MIN_MEMORY_MB)
        search = api.make_search(store, game, least, quick=True)  # no evaluator yet
        search.cache.close()
        with pytest.raises(pndb.SettingsError):
            api.make_search(store, game, SolveSettings(memory_mb=MIN_MEMORY_MB - 20), quick=True)


# ---------------------------------------------------------------- error messages, input files


def test_a_long_path_keeps_the_reason_of_its_error(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-directory-name-" + "x" * 30] * 8)
    deep.mkdir(parents=True)
    positions = deep / "positions.txt"
    positions.write_text("b2\nb2b2\n")
    line = one_error_line(pndb_process("solve", "tictactoe", "--positions", positions))
    assert len(line) <= 300
    assert line.endswith("move 2 'b2': the cell is occupied"), line
    assert "positions.txt line 2" in line, line


def test_positions_file_with_byte_order_mark_and_tabs(tmp_path):
    positions = tmp_path / "p.txt"
    positions.write_bytes("\ufeffb2\tthe centre\na1b2\t\tcomment\n\tc3\n".encode("utf-8"))
    done = pndb_process("solve", "tictactoe", "--positions", positions, "--inner-nodes", "0", env=PYTHON_ONLY)
    assert done.returncode == 0, done.stderr
    assert [line.split()[:2] for line in done.stdout.splitlines()] == [
        ["b2", "draw"], ["a1b2", "draw"], ["c3", "draw"]
    ]  # fmt: skip


def test_disc_cap_zero_is_refused_like_minus_one(tmp_path):
    for cap in (0, -1):
        path = tmp_path / f"cap{cap}.json"
        path.write_text(json.dumps({"width": 3, "height": 3, "win_patterns": [[0, 1, 2]], "disc_cap": cap}))
        assert "disc_cap" in one_error_line(pndb_process("show", f"file:{path}"))


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "tictactoe", "--db", ""],
        ["status", ""],
        ["check", ""],
        ["export", ""],
        ["compact", ""],
        ["verify", ""],
        ["play", ""],
    ],
)
def test_an_empty_path_is_an_error(tmp_path, args):
    assert "empty path" in one_error_line(pndb_process(*args, cwd=tmp_path))
    assert list(tmp_path.iterdir()) == []  # no db/ made in the working directory
