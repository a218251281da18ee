"""A database survives what runs beside it and what damages it, as a user meets it (real
processes, real files): a compact beside processes that hold the database open or run `status`
in a loop, a directory whose data.mdb is not pndb's, a full disk and a kill during a compact, a
root record whose value nothing supports, damaged meta entries and a zeroed page."""

import json
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest
from conftest import assert_user_error
from test_faults import fill, small_disk  # noqa: F401  (a fixture)

from pndb.store import NODE
from pndb.values import Node

ROOT = Path(__file__).resolve().parent.parent


def pndb(*args, timeout=240):
    """A pndb command in a process of its own, running this checkout's code."""
    return subprocess.run(
        [sys.executable, "-m", "pndb", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def ok(p):
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return p.stdout


def status(db):
    return json.loads(ok(pndb("status", "--json", db)))


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    """A tictactoe database stopped midway: its root expanded, its children open."""
    db = tmp_path_factory.mktemp("partial") / "db"
    assert pndb("solve", "tictactoe", "--db", db, "--max-nodes", "8", "--quiet").returncode == 3
    return db


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    db = tmp_path_factory.mktemp("solved") / "db"
    ok(pndb("solve", "tictactoe", "--db", db, "--quiet"))
    return db


def copy(db, tmp_path, name="db"):
    out = tmp_path / name
    shutil.copytree(db, out, ignore=shutil.ignore_patterns("*.lock"))
    return out


def extra_commit(db):
    """One more committed transaction (the same meta value written again)."""
    env = lmdb.open(str(db), max_dbs=6)
    meta = env.open_db(b"meta", create=False)
    with env.begin(write=True) as txn:
        txn.put(b"game", txn.get(b"game", db=meta), db=meta)
    env.close()


# ---------------------------------------------------------------- compact beside readers

HOLD = "import sys\n{open}\nprint('open', flush=True)\nsys.stdin.readline()\n"
HOLDERS = {
    "pndb": (
        "from pndb.store import open_existing\nstore, *_ = open_existing(sys.argv[1])\nview = store.view()"
    ),
    "lmdb": "import lmdb\nenv = lmdb.open(sys.argv[1], readonly=True, max_dbs=6)\ntxn = env.begin()",
}


def hold(db, kind):
    """A process that holds the database open in a read transaction until told to stop."""
    p = subprocess.Popen([sys.executable, "-c", HOLD.format(open=HOLDERS[kind]), str(db)], cwd=ROOT,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert p.stdout.readline() == "open\n"
    return p


def release(p):
    p.communicate("\n", timeout=60)


@pytest.mark.parametrize("kind", ["lmdb", "pndb"])
@pytest.mark.parametrize("extra", [0, 1])
def test_compact_beside_a_process_holding_the_database(tmp_path, solved, kind, extra):
    """A process holds the database open (in a read transaction) for the whole compact. LMDB
    keeps the last transaction id in the shared lock file, so a file swapped under it was read
    through the old id: for one parity of that id, the compacted file's empty meta page, and
    the compact's reopening committed empty tables over the root. (``extra``: one commit more,
    so that one of the two runs meets each parity.) Now the compact refuses in one line, or
    finishes; either way the value stays, `check` is clean and a solve answers at once."""
    db = copy(solved, tmp_path)
    for _ in range(extra):
        extra_commit(db)
    before = status(db)
    holder = hold(db, kind)
    try:
        p = pndb("compact", db)
    finally:
        release(holder)
    if p.returncode != 0:
        assert_user_error(p, "not shrunk")
    after = status(db)
    assert after["result"] == before["result"] == "draw"
    assert "consistent" in ok(pndb("check", db))
    assert "(draw)" in ok(pndb("solve", "tictactoe", "--db", db, "--quiet"))
    assert not (db / "compact.tmp").exists()


def test_compact_beside_a_status_loop(tmp_path, partial):
    """`status` in a loop in another process while the database is compacted (and resumed and
    compacted again): every status reads the same start and a possible value, and afterwards
    the value is tictactoe's, `check` clean."""
    db = copy(partial, tmp_path)
    loop = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\nwhile True:\n    p = subprocess.run([sys.executable, "
         "'-m', 'pndb', 'status', '--json', sys.argv[1]], capture_output=True, text=True)\n"
         "    print(p.returncode, p.stdout.replace('\\n', ' '), p.stderr.replace('\\n', ' '), flush=True)",
         str(db)], cwd=ROOT, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        for _ in range(2):
            p = pndb("compact", db)
            if p.returncode != 0:
                assert_user_error(p, "not shrunk")
            assert "consistent" in ok(pndb("check", db))
        ok(pndb("solve", "tictactoe", "--db", db, "--quiet"))
        p = pndb("compact", db)
        assert p.returncode in (0, 2), p.stderr
    finally:
        loop.send_signal(signal.SIGKILL)
        out, _ = loop.communicate(timeout=60)
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines
    for line in lines:
        code, _, text = line.partition(" ")
        assert code == "0", line
        assert json.loads(text.split("}")[0] + "}")["result"] in ("unknown", "second-wont-win", "draw"), line
    assert status(db)["result"] == "draw"
    assert "consistent" in ok(pndb("check", db))


# ---------------------------------------------------------------- what solve must not overwrite


def test_solve_refuses_an_lmdb_directory_without_pndb_tables(tmp_path):
    db = tmp_path / "db"
    env = lmdb.open(str(db))
    with env.begin(write=True) as txn:
        txn.put(b"someone's", b"data")
    env.close()
    assert_user_error(pndb("solve", "tictactoe", "--db", db, "--quiet"), "not write over")
    env = lmdb.open(str(db))
    with env.begin() as txn:
        assert txn.get(b"someone's") == b"data"
    env.close()


# ---------------------------------------------------------------- a compact that fails or is killed


def test_disk_full_during_compact(small_disk, tmp_path, solved):  # noqa: F811
    """The compacted copy does not fit: the full-disk message, the database as it was."""
    disk = small_disk("disk", "1m")
    db = copy(solved, disk)
    before = status(db)
    fill(disk)
    p = pndb("compact", db)
    line = assert_user_error(p, "full")
    assert "damaged" not in line
    (disk / "filler").unlink()
    assert status(db)["result"] == before["result"]
    assert "consistent" in ok(pndb("check", db))
    assert sorted(x.name for x in db.iterdir()) == ["data.mdb", "lock.mdb", "solve.lock"]


KILL_AT_FSYNC = (
    "import os, signal, sys\nos.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
    "sys.argv = ['pndb', 'compact', sys.argv[1]]\nfrom pndb.cli import main\nmain()"
)


def test_killed_compact_leaves_no_copy(tmp_path, solved):
    """A compact killed once its copy is written (at the copy's fsync) leaves no compact.tmp,
    and the database reads as before."""
    db = copy(solved, tmp_path)
    p = subprocess.run([sys.executable, "-c", KILL_AT_FSYNC, str(db)], cwd=ROOT, capture_output=True)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert not (db / "compact.tmp").exists()
    assert status(db)["result"] == "draw"
    assert "consistent" in ok(pndb("check", db))


@pytest.mark.parametrize("leftover", ["file", "dir"])
def test_a_compact_leftover_is_removed_at_the_next_open(tmp_path, solved, leftover):
    db = copy(solved, tmp_path)
    tmp = db / "compact.tmp"
    if leftover == "dir":
        tmp.mkdir()
        (tmp / "data.mdb").write_bytes(b"x" * 4096)
    else:
        tmp.write_bytes(b"x" * 4096)
    ok(pndb("compact", db))
    assert not tmp.exists()


# ---------------------------------------------------------------- damage check must find


def rewrite_root(db, lo, hi):
    env = lmdb.open(str(db), max_dbs=6)
    nodes = env.open_db(b"nodes", create=False)
    with env.begin(write=True) as txn:
        rec = Node._make(NODE.unpack(txn.get(bytes(16), db=nodes)))
        txn.put(bytes(16), NODE.pack(*Node.leaf(lo, hi, flags=rec.flags, work=rec.work)), db=nodes)
    env.close()


def test_check_finds_a_root_value_its_children_do_not_give(tmp_path, partial):
    """A midway root claimed first-wins (tictactoe is a draw): its open children do not
    contradict it, but nothing implies it; check says so, status and solve refuse it."""
    db = copy(partial, tmp_path)
    rewrite_root(db, 2, 2)
    p = pndb("check", db)
    assert p.returncode == 1 and "first-wins" in p.stdout, p.stdout
    assert_user_error(pndb("status", db), "damaged")
    assert_user_error(pndb("solve", "tictactoe", "--db", db, "--quiet"), "damaged")


DAMAGED_META = [
    ("rules", b"[1, 2]"),
    ("root", b'"zz"'),  # not a key's hex
    ("root", b"7"),  # not a string
    ("start", b"7"),  # not a position's fields
    ("start", b'{"moves": "", "cells": [], "first": 1, "second": 1}'),  # stones its cells do not give
    ("start", b'{"moves": "b2", "cells": [4], "first": 16, "second": 0}'),  # a position, not the root's
    ("start", b"{}"),
]


@pytest.mark.parametrize("entry, value", DAMAGED_META)
def test_damaged_meta_entries(tmp_path, solved, entry, value):
    """A damaged meta entry the commands rely on (the rules, the root, the start) is one line,
    "damaged", for every command that reads it: solve neither fails with a traceback nor
    writes a new start over it, export writes no book."""
    for n, args in enumerate([
        ["solve", "tictactoe", "--db", "DB", "--quiet"], ["export", "DB", "-o", tmp_path / "b.pnbook"],
        ["status", "DB"], ["show", "DB"],
    ]):  # fmt: skip
        db = copy(solved, tmp_path, f"db{n}")
        env = lmdb.open(str(db), max_dbs=6)
        meta = env.open_db(b"meta", create=False)
        with env.begin(write=True) as txn:
            txn.put(entry.encode(), value, db=meta)
        env.close()
        assert_user_error(pndb(*(db if a == "DB" else a for a in args)), "damaged")
        env = lmdb.open(str(db), max_dbs=6, readonly=True)
        with env.begin() as txn:
            assert txn.get(entry.encode(), db=env.open_db(b"meta", create=False, txn=txn)) == value
        env.close()
    assert not (tmp_path / "b.pnbook").exists()


def zero_page(db, table, index):
    """Zero the ``index``-th leaf page under the root (a branch page) of ``table``."""
    env = lmdb.open(str(db), readonly=True, max_dbs=6)
    with env.begin() as txn:
        record = txn.get(table.encode())  # the table's MDB_db record: its root page last
    psize = env.stat()["psize"]
    env.close()
    root = struct.unpack_from("<Q", record, 40)[0]
    with open(db / "data.mdb", "r+b") as f:
        f.seek(root * psize)
        page = f.read(psize)
        flags, lower = struct.unpack_from("<HH", page, 10)
        assert flags & 1, "the table's root is a branch page"
        offset = struct.unpack_from("<H", page, 16 + 2 * index)[0]
        lo, hi, top = struct.unpack_from("<HHH", page, offset)
        f.seek((lo | hi << 16 | top << 32) * psize)
        f.write(bytes(psize))


def test_a_zeroed_page_is_damage_not_an_abort(tmp_path, solved):
    """A zeroed leaf page of the parent links: LMDB aborted `check` and `compact` at an
    assertion (exit 134); every command that reads it all now says the database is damaged."""
    db = copy(solved, tmp_path)
    zero_page(db, "parents", 1)
    for args in (["check", db], ["compact", db], ["export", db, "-o", tmp_path / "b.pnbook"]):
        assert_user_error(pndb(*args), "damaged")
