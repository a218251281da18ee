"""Faults a user or a machine causes around the database and the command line: a full disk, a
read-only filesystem, damaged records, a tampered root, bad option values, closed input.

Each must give exit code 2 (or 1 for `check`) and one line on stderr, never a traceback or a
signal, and must leave a database that resumes to the right value. The full and read-only disks
are small tmpfs mounts (skipped where this process may not mount).
"""

import random
import shutil
import subprocess
from pathlib import Path

import lmdb
import pytest
from conftest import PNDB, REF_NAME, assert_user_error, cli, minimax, run_process

from pndb.store import NODE, PROOF
from pndb.values import Node



@pytest.fixture
def small_disk(tmp_path):
    """Mount a tmpfs of a given size under tmp_path; unmounted afterwards."""
    mounts = []

    def mount(name, size, options=""):
        where = tmp_path / name
        where.mkdir()
        opts = f"size={size}" + (f",{options}" if options else "")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({p.stderr.decode().strip()})")
        mounts.append(where)
        return where

    yield mount
    for where in mounts:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk):
    """Fill a filesystem to the last byte."""
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 16))
                f.flush()
        except OSError:
            pass


def test_disk_full_during_solve_is_named_and_resumes_elsewhere(small_disk, tmp_path):
    disk = small_disk("disk", "3m")
    db = disk / "db"
    p = run_process("solve", "connect4:5x4", "--inner-nodes", "0", "--db", db, "--quiet")
    line = assert_user_error(p, "full", "resume")
    assert "damaged" not in line
    assert run_process("check", db).returncode == 0
    moved = tmp_path / "moved"
    shutil.copytree(db, moved, ignore=shutil.ignore_patterns("solve.lock"))
    # resumed with the inner solver (the default), which finishes it in a second; the outer
    # search alone, as it was filled, takes half a minute
    p = run_process("solve", "connect4:5x4", "--db", moved, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"({REF_NAME[minimax('connect4:5x4', 0, 0)]})" in p.stdout


def test_creating_a_database_on_a_full_disk(small_disk):
    disk = small_disk("disk", "512k")
    fill(disk)
    p = run_process("solve", "tictactoe", "--db", disk / "db", "--quiet")
    assert p.returncode != -7, "SIGBUS"
    assert_user_error(p, "full")


def test_export_on_a_full_disk_leaves_no_temporary_file(small_disk, tmp_path):
    db = tmp_path / "db"
    assert cli("solve", "connect4:4x4", "--db", db, "--quiet").returncode == 0
    disk = small_disk("disk", "64k")
    fill(disk)
    p = cli("export", db, "-o", disk / "book.pnbook")
    assert_user_error(p, "book.pnbook")
    assert sorted(x.name for x in disk.iterdir()) == ["filler"]


def test_read_only_filesystem(small_disk, tmp_path):
    db = tmp_path / "db"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0
    ro = small_disk("ro", "1m", "ro")
    assert_user_error(run_process("solve", "tictactoe", "--db", ro / "db", "--quiet"))
    assert_user_error(cli("export", db, "-o", ro / "t.pnbook"))


def test_export_into_a_missing_directory(tmp_path):
    db = tmp_path / "db"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0
    assert_user_error(cli("export", db, "-o", tmp_path / "no" / "such" / "t.pnbook"), "t.pnbook")


# ---------------------------------------------------------------- damaged records


@pytest.fixture(scope="module")
def solved_with_proofs(tmp_path_factory):
    """connect4:4x4 solved with the inner solver: a DB with many proof records."""
    db = tmp_path_factory.mktemp("proofs") / "db"
    p = cli("solve", "connect4:4x4", "--db", db, "--inner-nodes", "300", "--quiet")
    assert p.returncode == 0, p.stderr
    return db


def edit_records(db, table, edit):
    """Apply ``edit(cursor)`` to the sub-database ``table`` of a closed DB, in one commit."""
    env = lmdb.open(str(db), max_dbs=4)
    try:
        sub = env.open_db(table.encode(), create=False)
        with env.begin(write=True) as txn:
            edit(txn, sub)
    finally:
        env.close()


@pytest.mark.parametrize("trial", range(16))
def test_check_finds_a_flipped_byte_in_a_proof_record(tmp_path, solved_with_proofs, trial):
    """Any byte of any proof record flipped: check says INCONSISTENT (exit 1), unless the flip
    gave another record that is itself a proof (another winning move), which check accepts."""
    db = tmp_path / "db"
    shutil.copytree(solved_with_proofs, db)
    rng = random.Random(trial)
    flipped = {}

    def flip(txn, sub):
        items = list(txn.cursor(db=sub))
        key, raw = rng.choice(items)
        i = rng.randrange(PROOF.size)
        raw = bytearray(raw)
        raw[i] ^= 1 << rng.randrange(8)
        flipped.update(key=bytes(key), index=i, record=PROOF.unpack(bytes(raw)))
        txn.put(key, bytes(raw), db=sub)

    edit_records(db, "proof", flip)
    p = cli("check", db)
    if p.returncode == 0:  # the flip must have left a valid proof: only a move may have changed
        assert flipped["index"] >= 2, flipped
    else:
        assert p.returncode == 1 and flipped["key"].hex() in p.stdout, (p.stdout, flipped)


def test_commands_on_a_record_of_the_wrong_size(tmp_path, solved_with_proofs):
    db = tmp_path / "db"
    shutil.copytree(solved_with_proofs, db)

    def shorten(txn, sub):
        key, raw = next(iter(txn.cursor(db=sub)))
        txn.put(key, bytes(raw)[:-1], db=sub)

    edit_records(db, "nodes", shorten)
    for args in (["check", db], ["status", db], ["export", db, "-o", tmp_path / "b.pnbook"]):
        assert_user_error(cli(*args), "damaged")


def test_solve_refuses_a_tampered_root(tmp_path):
    """A solved DB whose root record was rewritten to another value: solve must not report it."""
    db = tmp_path / "db"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0

    def rewrite_root(txn, sub):  # the empty board's key is 16 zero bytes
        rec = Node._make(NODE.unpack(txn.get(bytes(16), db=sub)))
        txn.put(bytes(16), NODE.pack(*Node.leaf(2, 2, flags=rec.flags, work=rec.work)), db=sub)

    edit_records(db, "nodes", rewrite_root)
    assert_user_error(cli("solve", "tictactoe", "--db", db, "--quiet"), "damaged")
    assert cli("check", db).returncode == 1


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize(
    "args, words",
    [
        (["solve", "tictactoe", "--db", "DB", "--max-seconds", "-1"], ["--max-seconds"]),
        (["solve", "tictactoe", "--db", "DB", "--max-seconds", "nan"], ["--max-seconds"]),
        (["solve", "tictactoe", "--db", "DB", "--max-seconds", "inf"], ["--max-seconds"]),
        (["solve", "tictactoe", "--db", "DB", "--max-nodes", "-1"], ["--max-nodes"]),
        (["solve", "tictactoe", "--db", "DB", "--inner-nodes", str(10**20)], ["--inner-nodes"]),
        (["solve", "tictactoe", "--db", "DB", "--inner-mb", str(10**8)], ["--inner-mb"]),
        (["solve", "tictactoe", "--db", "DB", "--checkpoint-seconds", "nan"], ["--checkpoint-seconds"]),
        (["solve", "tictactoe", "--db", "DB", "--checkpoint-seconds", "0"], ["--checkpoint-seconds"]),
        (["solve", "tictactoe", "--db", "DB", "--bogus"], ["--bogus"]),
        (["solve", "--db", "DB"], ["game"]),
        (["frobnicate"], ["frobnicate"]),
    ],
)
def test_bad_options_are_one_line(tmp_path, args, words):
    db = tmp_path / "db"
    assert_user_error(cli(*(db if a == "DB" else a for a in args)), *words)
    assert not db.exists()


def test_positions_file_that_is_not_utf8(tmp_path):
    f = tmp_path / "p.txt"
    f.write_bytes(b"33\n\xff\xfe\n")
    assert_user_error(cli("solve", "connect4:4x4", "--positions", f), "utf-8")


@pytest.mark.parametrize("text", ["", "\n\n   \n"])
def test_positions_file_without_positions(tmp_path, text):
    f = tmp_path / "p.txt"
    f.write_text(text)
    assert_user_error(cli("solve", "connect4:4x4", "--positions", f), "no positions")


def test_errors_are_short_and_printable(tmp_path):
    line = assert_user_error(cli("show", "tictactoe", "--moves", "a1\x00\x1b[31m" + "z" * 30000))
    assert len(line) <= 300 and "\x1b" not in line and "\x00" not in line


def test_play_with_closed_input(tmp_path):
    db = tmp_path / "db"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0
    assert cli("export", db, "-o", tmp_path / "t.pnbook").returncode == 0
    p = subprocess.run([PNDB, "play", str(tmp_path / "t.pnbook")], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert "Aborted" not in p.stdout + p.stderr
    assert_user_error(p, "input")


def test_ctrl_c_while_loading_is_not_a_traceback():
    """SIGINT while the console script is still importing its libraries (numpy's compiled
    modules are mapped, the command has not run): exit 130 (or 0 if it had finished), no
    traceback."""
    import signal
    import time

    proc = subprocess.Popen([PNDB, "games"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if "numpy" in Path(f"/proc/{proc.pid}/maps").read_text():
                break
        except OSError:
            break
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    assert proc.returncode in (0, 130), (proc.returncode, err)


def test_ctrl_c_does_not_wait_for_a_large_inner_search(tmp_path):
    """With a huge --inner-nodes, Ctrl-C stops the inner search between slices of its budget:
    the solve exits 130 with a consistent DB, and the root's recorded work is far below the
    budget it would otherwise have spent first."""
    import signal
    import time

    from pndb.store import open_existing

    db = tmp_path / "db"
    budget = 50_000_000
    cmd = [PNDB, "solve", "connect4", "--inner-nodes", str(budget), "--db", str(db), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (db / "data.mdb").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1.0)  # into the root's inner search (any moment will do: the point is the work)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert "Traceback" not in err
    assert run_process("check", db).returncode == 0
    store, *_ = open_existing(db)
    with store, store.view() as view:
        work = view.node(bytes(16)).work
    assert work < budget // 2, f"the root's inner search spent {work} of {budget} nodes before stopping"
