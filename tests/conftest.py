"""Shared test set-up and helpers: a numba cache outside the source tree, kept between runs;
keys, searches, the reference model and the console script as the tests use them. Each helper is
defined here once, for every test module (`from conftest import ...`)."""

import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

from pndb import jit  # noqa: E402

jit.realise()  # numba loaded from the start: every kernel is compiled (test_jit.py compares both)

PNDB = str(Path(sys.executable).with_name("pndb"))
REF_NAME = {+1: "first-wins", 0: "draw", -1: "second-wins"}  # reference minimax value -> pndb's name


def key_of(a, b):
    """The 16-byte key of a canonical pair of bitboards."""
    return int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big")


def split_key(key):
    return int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")


def first_moves(key):
    a, b = split_key(key)
    return a.bit_count() == b.bit_count()


def stones(a, b):
    """How many stones the position (a, b) holds."""
    return (a | b).bit_count()


def canonical_with_symmetry(game, a, b):
    """pndb's canonical key of (a, b) in ``game`` as two ints, and the index of the symmetry that
    maps (a, b) onto it."""
    import numpy as np

    from pndb.games.placement import kernels

    ka, kb, s = kernels.canonical(np.uint64(a), np.uint64(b), game.tables.sym_bytes)
    return int(ka), int(kb), int(s)


def canonical(game, a, b):
    """pndb's canonical key of (a, b) in ``game``, as two ints."""
    return canonical_with_symmetry(game, a, b)[:2]


@functools.cache
def ref(spec):
    """The reference model's game (tests/reference.py) of a built-in spec, one per spec for the
    session, so that its minimax memo is shared by every test."""
    import reference

    return reference.ref_game(spec)


def minimax(spec, a, b):
    """The reference minimax value of (a, b) in ``spec``: +1 first player wins, 0 draw, -1 second."""
    import reference

    return reference.minimax(ref(spec), a, b)


def inner_evaluator(game, budget, table_mb=8, **options):
    """An inner solver as a Search's evaluator, with what the API gives the search beside it
    (the table's capacity, the base budget ``budget`` of its leaves): new_search's keyword
    arguments."""
    from pndb.defaults import inner_table_capacity
    from pndb.inner import InnerSolver

    return dict(
        evaluator=InnerSolver(game, table_mb, **options), evaluator_capacity=inner_table_capacity(table_mb),
        inner_nodes=budget,
    )  # fmt: skip


def new_search(cache, game, evaluator=None, evaluator_capacity=None, search=None, **settings):
    """A Search (or the subclass ``search``) of ``game`` on ``cache`` with ``evaluator`` (None:
    none) whose table holds ``evaluator_capacity`` positions, and SolveSettings of ``settings``
    (its fields: the limits, target, inner_nodes, inner_scheme, knowledge, ...)."""
    from pndb.search import Search
    from pndb.settings import SolveSettings
    from pndb.values import INF

    return (search or Search)(
        cache, game, SolveSettings(**settings), evaluator=evaluator,
        evaluator_capacity=INF if evaluator_capacity is None else evaluator_capacity,
    )  # fmt: skip


def run_search(store, game, root, inner=None, **settings):
    """The outer search of ``root`` on an open store, to the end or the settings' limits: its
    Outcome. ``inner``: inner_evaluator()'s arguments (None: no evaluator); ``settings``:
    SolveSettings' fields, as new_search's."""
    from pndb.cache import NodeCache

    cache = NodeCache(store)
    try:
        return new_search(cache, game, **(inner or {}), **settings).solve(root)
    finally:
        cache.close()


class Ran(NamedTuple):
    """What a command gave: exit code, standard output, standard error."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args, stdin=None):
    """Run a pndb command in this process (click's CliRunner): far quicker than a process, for
    every test that needs no real process (kills, signals, a crash that could take pytest down)."""
    import traceback

    from click.testing import CliRunner

    from pndb.cli import main

    r = CliRunner().invoke(main, [str(a) for a in args], input=stdin)
    stderr = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        stderr += "".join(traceback.format_exception(r.exception))
    return Ran(r.exit_code, r.stdout, stderr)


def ok(ran):
    """The standard output of a command that must have succeeded."""
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


PROGRESS_LINE = re.compile(r"(export|check|compact|verify): ")  # a progress line (cli.ProgressShown)


def not_progress(stderr):
    """The lines of ``stderr`` that are not progress lines: a long command prints those on
    stderr as it goes (when stderr is not a terminal), before any error."""
    return [line for line in stderr.splitlines() if not PROGRESS_LINE.match(line)]


def assert_user_error(ran, *words, silent=False):
    """A user error as pndb reports one: exit 2, no traceback, exactly one line on stderr,
    `error: ...`, naming each of ``words`` (case aside) and safe to print on a terminal; with
    ``silent``, nothing on stdout either (commands that fail before they print). The line."""
    assert ran.returncode == 2, (ran.returncode, ran.stdout[-500:], ran.stderr[-500:])
    assert "Traceback" not in ran.stdout + ran.stderr
    assert not silent or ran.stdout == "", ran.stdout[-500:]
    lines = not_progress(ran.stderr)
    assert len(lines) == 1, ran.stderr[-2000:]
    line = lines[0]
    assert line.startswith("error: "), line
    assert len(line) < 400, line
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in line), repr(line)
    for w in words:
        assert w.lower() in line.lower(), (w, line)
    return line


def run_process(*args, timeout=240):
    """Run the installed pndb console script in a process of its own."""
    return subprocess.run([PNDB, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def wait_for_checkpoints(db, count, timeout=120):
    """Wait until the database at ``db`` has committed at least ``count`` checkpoints (an event
    to wait on, rather than a sleep whose length depends on the machine's load)."""
    from pndb.store import StoreError, open_existing

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (Path(db) / "data.mdb").exists():
            try:
                store, *_ = open_existing(db)
            except StoreError:
                pass
            else:
                with store:
                    if store.all_meta().get("checkpoints", 0) >= count:
                        return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} checkpoints in {db} after {timeout}s")


@contextmanager
def served(source, *args, timeout=240):
    """A `pndb serve SOURCE` process (on a free port unless ``args`` say otherwise) once it
    listens: yields (its URL, the Popen); interrupted (Ctrl-C) and waited for after."""
    p = subprocess.Popen(
        [PNDB, "serve", str(source), "--port", "0", *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = p.stdout.readline()  # (the first line says where it listens, once it does)
        found = re.search(r"http://\S+", line)
        assert found, (line, p.stderr.read() if p.poll() is not None else "")
        yield found.group(0), p
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=timeout)
        finally:
            if p.poll() is None:
                p.kill()
