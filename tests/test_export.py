"""`pndb export -o PATH` never clobbers what PATH is: a symlink is written through, a FIFO or a
character device in place, a database directory is refused, and a new book gets the user's
umask. Ctrl-C during an export or a verification exits 130 with no traceback and no temporary
file. Real files, FIFOs, terminals and processes throughout."""

import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
import tty
from pathlib import Path

import pytest
from conftest import assert_user_error, cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """(database, the bytes of its book written to a plain new file)."""
    d = tmp_path_factory.mktemp("solved")
    db = d / "t.lmdb"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0
    book = d / "t.pnbook"
    p = cli("export", db, "-o", book)
    assert p.returncode == 0, p.stderr
    return db, book.read_bytes()


def leftovers(directory):
    return sorted(x.name for x in Path(directory).iterdir() if x.name.endswith(".tmp"))


def test_export_through_a_symlink_replaces_the_file_it_names(solved, tmp_path):
    db, book = solved
    (tmp_path / "books").mkdir()
    real = tmp_path / "books" / "real.pnbook"
    real.write_bytes(b"an older book")
    link = tmp_path / "link.pnbook"
    link.symlink_to(real)
    assert cli("export", db, "-o", link).returncode == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == book
    assert leftovers(tmp_path) == leftovers(tmp_path / "books") == []


def test_export_through_a_dangling_symlink_creates_its_target(solved, tmp_path):
    db, book = solved
    link = tmp_path / "link.pnbook"
    link.symlink_to(tmp_path / "new.pnbook")
    assert cli("export", db, "-o", link).returncode == 0
    assert link.is_symlink() and (tmp_path / "new.pnbook").read_bytes() == book


def read_all(fd, into, size=None):
    """Read ``fd`` into the bytearray ``into`` until its end (or ``size`` bytes)."""
    while size is None or len(into) < size:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # a terminal's master side once the other side has closed
            break
        if not chunk:
            break
        into += chunk


def test_export_to_a_fifo_writes_into_it(solved, tmp_path):
    db, book = solved
    fifo = tmp_path / "book.fifo"
    os.mkfifo(fifo)
    got = bytearray()

    def reader():
        fd = os.open(fifo, os.O_RDONLY)
        read_all(fd, got)
        os.close(fd)

    t = threading.Thread(target=reader)
    t.start()
    p = cli("export", db, "-o", fifo)
    t.join(60)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert bytes(got) == book
    assert leftovers(tmp_path) == []


def test_export_to_a_character_device_writes_into_it(solved, tmp_path):
    """A terminal (the slave side of a pseudo-terminal, raw mode) stands for any character
    device such as /dev/null: the book goes through it unchanged, the device stays."""
    db, book = solved
    master, slave = os.openpty()
    tty.setraw(slave)
    device = os.ttyname(slave)
    got = bytearray()
    t = threading.Thread(target=read_all, args=(master, got, len(book)))
    t.start()
    try:
        p = cli("export", db, "-o", device)
        t.join(60)
    finally:
        os.close(slave)
        t.join(5)
        os.close(master)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode) if os.path.exists(device) else True
    assert bytes(got) == book


@pytest.mark.parametrize("name", ["data.mdb", "lock.mdb", "book.pnbook"])
def test_export_into_a_database_directory_is_refused(solved, tmp_path, name):
    db, _ = solved
    names = sorted(x.name for x in Path(db).iterdir())
    before = (Path(db) / "data.mdb").read_bytes()
    p = cli("export", db, "-o", Path(db) / name)
    assert_user_error(p, "database directory")
    assert (Path(db) / "data.mdb").read_bytes() == before
    assert sorted(x.name for x in Path(db).iterdir()) == names  # no book, no temporary file
    assert cli("check", db).returncode == 0


def test_export_through_a_symlink_into_a_database_directory_is_refused(solved, tmp_path):
    db, _ = solved
    link = tmp_path / "innocent.pnbook"
    link.symlink_to(Path(db) / "data.mdb")
    digest = hashlib.sha256((Path(db) / "data.mdb").read_bytes()).digest()
    assert_user_error(cli("export", db, "-o", link), "database directory")
    assert hashlib.sha256((Path(db) / "data.mdb").read_bytes()).digest() == digest


def test_a_new_book_gets_the_users_umask_and_a_replaced_one_keeps_its_mode(solved, tmp_path):
    db, _ = solved
    old = os.umask(0o027)
    try:
        assert cli("export", db, "-o", tmp_path / "new.pnbook").returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.pnbook").st_mode) == 0o640
    kept = tmp_path / "kept.pnbook"
    kept.write_bytes(b"")
    kept.chmod(0o604)
    assert cli("export", db, "-o", kept).returncode == 0
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o604


# ---------------------------------------------------------------- Ctrl-C


def start(*args):
    """A process of its own, stderr read line by line, showing each step's progress from its
    start (PNDB_PROGRESS_DELAY=0: the test waits for a line of the step it interrupts)."""
    return subprocess.Popen(
        [sys.executable, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=dict(os.environ, PNDB_PROGRESS_DELAY="0"),
    )  # fmt: skip


def interrupt_after(proc, line_starts):
    """Send SIGINT once stderr shows a line starting with ``line_starts``; (code, stderr)."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(line_starts):
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    proc.wait(120)
    return proc.returncode, "".join(seen) + rest


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A database whose export takes long enough to interrupt: connect4:5x4 (second-wins)."""
    d = tmp_path_factory.mktemp("big")
    db = d / "c.lmdb"
    p = cli("solve", "connect4:5x4", "--db", db, "--quiet", "--no-knowledge")
    assert p.returncode == 0, p.stderr
    return db


def test_ctrl_c_during_export_exits_130_and_leaves_no_temporary_file(big, tmp_path):
    proc = start("-m", "pndb", "export", big, "-o", tmp_path / "c.pnbook")
    code, err = interrupt_after(proc, "export:")
    assert code == 130, err
    assert "Traceback" not in err and err.strip().endswith("interrupted"), err
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_export_waits_for_a_fifo_reader(solved, tmp_path):
    db, _ = solved
    fifo = tmp_path / "book.fifo"
    os.mkfifo(fifo)
    proc = start("-m", "pndb", "export", db, "-o", fifo)
    code, err = interrupt_after(proc, "export: writing")
    assert code == 130, err
    assert "Traceback" not in err and err.strip().endswith("interrupted"), err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["book.fifo"]


@pytest.mark.parametrize("command", [["tools/verify.py"], ["-m", "pndb", "verify"]])
def test_ctrl_c_during_verification_exits_130(big, tmp_path, command):
    if "verify" in command:  # `pndb verify` runs tools/verify.py installed as pndb_tools
        pytest.importorskip("pndb_tools")
    book = tmp_path / "c.pnbook"
    assert cli("export", big, "-o", book).returncode == 0
    proc = start(*command, book)
    code, err = interrupt_after(proc, "verify:")
    assert code == 130, err
    assert "Traceback" not in err and err.strip().endswith("interrupted"), err
