"""A newcomer's first solve: a notice before kernels compile on a cold cache (and none on a
warm one), compile time left out of the solve's seconds, the proven best moves printed when
the inner search decides the root."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import cli

from pndb import api, jit
from pndb.games import load_game

ROOT = Path(__file__).resolve().parent.parent
NOTICE = "compiling pndb's kernels, first run only: about"
# mnk:5,5,3: more cells than a quick start takes, and the inner search proves the start at once
INNER_DECIDED = "mnk:5,5,3"


def pndb_process(*args, env=None):
    """`python -m pndb ARGS` in a process of its own, this checkout's package."""
    return subprocess.run(
        [sys.executable, "-m", "pndb", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
        env=env, timeout=600,
    )  # fmt: skip


def test_cold_cache_is_told_by_family(tmp_path, monkeypatch):
    """A cache of the current sources without a family's kernels gives an estimate of the
    compile; once a solve has compiled them (its mark), none; the other family's stay cold."""
    monkeypatch.setattr(jit, "numba_cache_dir", str(tmp_path / "digest"))
    qango, connect4 = load_game("qango6"), load_game("connect4")
    assert jit.first_compile(qango) > 0 and jit.first_compile(connect4) > 0
    jit.mark_compiled(jit.family(qango))
    assert jit.first_compile(qango) is None
    assert jit.first_compile(connect4) > 0


def test_notice_before_compiling_on_a_cold_cache_only(tmp_path):
    """The CLI prints the one-line notice on stderr when the cache lacks the game's kernels,
    and not once a solve has put them there. (The cache is a copy of the warm one without its
    marks, so that no test waits minutes for numba: the kernels load, the notice is the same.)"""
    api.solve(INNER_DECIDED, db=tmp_path / "warm")  # the shared cache holds the kernels now
    cache = tmp_path / "numba"
    shutil.copytree(jit.numba_cache_dir, cache / Path(jit.numba_cache_dir).name)
    for mark in cache.glob("*/compiled-*"):
        mark.unlink()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    first = pndb_process("solve", INNER_DECIDED, "--db", tmp_path / "a", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(NOTICE) == 1
    assert first.stderr.startswith(NOTICE)
    again = pndb_process("solve", INNER_DECIDED, "--db", tmp_path / "b", env=env)
    assert again.returncode == 0, again.stderr
    assert NOTICE not in again.stderr


def test_compile_time_is_not_solve_time(tmp_path, monkeypatch):
    """The seconds a solve reports and stores leave out the time kernels took to compile: here
    the search's clock and numba's compile timer both jump by an hour at the first inner job,
    as if numba compiled the inner search for an hour there."""
    import time

    from pndb import inner, monitor

    hour = 3600.0
    compiled = []  # [hour] once the first inner job has started
    run = inner.InnerSolver.run

    def first_job(solver, *args, **kw):
        compiled[:] = [hour]
        return run(solver, *args, **kw)

    def compile_seconds():
        return sum(compiled)

    monkeypatch.setattr(monitor, "time", SimpleNamespace(monotonic=lambda: time.monotonic() + sum(compiled)))
    monkeypatch.setattr(monitor, "compile_seconds", compile_seconds)
    monkeypatch.setattr(inner.InnerSolver, "run", first_job)
    r = api.solve(INNER_DECIDED, db=tmp_path / "db")
    assert r.solved and compiled  # the inner solver ran, the clock jumped
    assert r.seconds < hour
    assert api.status(tmp_path / "db")["seconds"] < hour


def test_compile_timer_counts_compiles():
    """jit.compile_seconds grows while numba compiles a kernel."""
    numba = jit.load_numba()
    before = jit.compile_seconds()
    numba.njit(lambda x: x + 1)(1)
    assert jit.compile_seconds() > before


@pytest.mark.parametrize("moves", ["", "a1 b3"])
def test_best_moves_when_the_inner_search_decides_the_root(tmp_path, moves):
    """A root the inner search proves at once (no expansion, no stored child) still gets its
    proven best moves: from the root's proof record, taken to the board as it stands (after
    a1 b3 the board is not its canonical image). Each keeps the value, as the book shows."""
    from pndb.book import move_values

    db = tmp_path / "db"
    r = cli("solve", INNER_DECIDED, "--moves", moves, "--db", db, "-q")
    assert r.returncode == 0, r.stderr
    assert "(first-wins)" in r.stdout and re.search("^0 expansions", r.stdout, re.M), r.stdout
    line = [x for x in r.stdout.splitlines() if x.startswith("proven best moves: ")]
    assert len(line) == 1, r.stdout
    named = line[0].removeprefix("proven best moves: ").split()
    book = api.open_book(api.export(db, tmp_path / "b.pnbook").path)
    pos, _ = book.game.parse_moves(moves)
    values = {book.game.move_name(m): v.name for m, v in move_values(book, pos)}
    assert named and all(values[name] == "first-wins" for name in named), (named, values)
