"""The LMDB database of one solve: nodes, parent links, meta and proof records.

One environment (a directory) per game. Named sub-databases:

- ``meta``: JSON values: schema version, the game spec and its rules, start position, counters.
- ``nodes``: canonical key (16 bytes) -> fixed-size node record (:data:`NODE`).
- ``parents``: dupsort, child key -> parent keys; how a change reaches every parent.
- ``proof``: key -> proof record (:data:`PROOF`) for positions the inner solver proved, so that an
  exported book reaches terminal positions without searching again.
- ``certs``: dupsort, key -> certificates (kind byte, payload) that decide a position.
- ``graphs``: only in a graph-keyed database (meta ``keys`` is ``"graph"``, `pndb solve
  --graph-keys`): node key -> the canonical board key of the node's representative position and
  its full graph key (pndb.games.placement.graphkey). The DAG's nodes and links are keyed by node keys
  there; proof records and the certificates the inner search found stay keyed by board keys.
- ``positions``: only for a game whose keys cannot be read back (``game.stored_positions``: Go's
  keys digest a position and its history): node key -> the record of the position it names
  (pndb.games.stored), written in the checkpoint that writes the node.
- ``series``: checkpoint number (8 bytes, big-endian) -> a point of the solve's time series
  (pndb.timeseries: root numbers, nodes, size, rate...), written with its checkpoint, thinned to a
  bounded count. A database written before it existed has none: an empty series.

All writes of a checkpoint go into one write transaction (:meth:`Store.commit`); a kill at any
moment leaves the last committed checkpoint. One writer (a solve or a compact) at a time: it holds
``solve.lock``. Any number of readers (status, check, export, the API) may read meanwhile; every
open Store holds a shared lock on the database directory, which only the swap of a compacted
file (:meth:`Store.compact_file`) takes exclusively.
"""

import ctypes
import errno
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import lmdb
import numpy as np

from pndb import timeseries
from pndb.values import NO_MOVE, Certificate, F, Node, Proof

SCHEMA_VERSION = 1
GRAPH_KEYS = "graph"  # meta "keys" of a DAG keyed by graph keys (absent: board keys)
INITIAL_MAP_BYTES = 256 << 20
MAX_DBS = 8
LOCK_FILE_BYTES = 64 << 10  # more than LMDB's reader table needs (about 8 KB)
LOW_SPACE_BYTES = 64 << 20  # a failed commit with less free space than this is a full disk
ALONE_WAIT_SECONDS = 10.0  # how long a compact waits for readers to close the database
COMPACT_TMP = "compact.tmp"  # the name a compacted copy has for the moment before it replaces data.mdb

# lo, hi, flags, pad, work, pn/dn for "value >= first-wins", pn/dn for "value >= draw"
NODE = struct.Struct("<BBBxIQQQQ")
# lo, hi, move for "value >= first-wins", move for "value >= draw"
PROOF = struct.Struct("<BBBB")
# the same records as numpy rows, for reading a batch of them at once (ReadView.*_rows)
NODE_ROW = np.dtype([("lo", "u1"), ("hi", "u1"), ("flags", "u1"), ("pad", "u1"), ("work", "<u4"),
                     ("pn0", "<u8"), ("dn0", "<u8"), ("pn1", "<u8"), ("dn1", "<u8")])  # fmt: skip
PROOF_ROW = np.dtype([("lo", "u1"), ("hi", "u1"), ("move0", "u1"), ("move1", "u1")])
assert NODE_ROW.itemsize == NODE.size and PROOF_ROW.itemsize == PROOF.size


class StoreError(RuntimeError):
    """A database that cannot be used as asked; the message says why in one line."""


def free_bytes(path):
    """Bytes free for us on the filesystem holding ``path``."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def disk_full_error(path):
    return StoreError(
        f"the disk holding {path} is full; nothing committed is lost: free some space and run the "
        "same command again to resume"
    )


def allocate_lock_file(path):
    """Give LMDB's lock file real blocks before LMDB maps it: on a full filesystem (tmpfs
    especially) a mapped page without blocks kills the process with SIGBUS at first touch."""
    fd = os.open(path / "lock.mdb", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size < LOCK_FILE_BYTES:
            os.posix_fallocate(fd, 0, LOCK_FILE_BYTES)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise disk_full_error(path) from None
        raise
    finally:
        os.close(fd)


def default_path(game):
    return Path("db") / f"{game.db_name()}.lmdb"


def encode_meta(value):
    return json.dumps(value, sort_keys=True).encode()


class Store:
    """An open pndb database. ``writer=True`` takes the single-writer lock."""

    series_limit = timeseries.MAX_POINTS  # kept points of the time series (pndb.timeseries)

    def __init__(self, path, writer=False, create=False):
        self.path = Path(path)
        self.lock_file = None
        self.dir_lock = None
        self.lmdb_lock = None
        self.env = None
        if not create and not (self.path / "data.mdb").exists():
            raise StoreError(f"no pndb database at {self.path}")
        if writer:
            self.path.mkdir(parents=True, exist_ok=True)
            self.lock_file = open(self.path / "solve.lock", "w")
            try:
                fcntl.flock(self.lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.lock_file.close()
                raise StoreError(
                    f"another pndb solve or compact is writing {self.path}; one writer per database"
                ) from None
            remove_compact_leftovers(self.path)
            allocate_lock_file(self.path)
        self.share_directory()
        existed = (self.path / "data.mdb").exists()
        try:
            self.env = lmdb.open(
                str(self.path), map_size=self.map_bytes(), max_dbs=MAX_DBS, readonly=not writer,
                create=create, lock=True,
            )  # fmt: skip
            # LMDB maps the file and trusts its meta page: reading a page past the end of a
            # truncated file would kill the process (SIGBUS), so compare the sizes first
            needed = self.used_bytes()
            if self.file_bytes() < needed:
                self.close()
                raise StoreError(f"{self.path}/data.mdb is truncated ({self.file_bytes()} of {needed} bytes)")
            if writer and existed:
                self.refuse_foreign_content()
            self.open_tables(create=writer)
        except lmdb.Error as e:
            self.close()
            raise StoreError(
                f"{self.path} is not a readable pndb database ({str(e).splitlines()[0]})"
            ) from None

    def share_directory(self):
        """Hold a shared lock on the database directory while this Store is open; it waits
        while a compact swaps the file (which holds the lock exclusively for that moment)."""
        self.dir_lock = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self.dir_lock, fcntl.LOCK_SH)

    def used_bytes(self):
        """The bytes of data.mdb that LMDB's current meta page accounts for."""
        return (self.env.info()["last_pgno"] + 1) * self.env.stat()["psize"]

    def refuse_foreign_content(self):
        """Before a writer writes into an existing data.mdb: refuse one that holds anything but
        pndb's tables. An LMDB file without them is another program's data, or a pndb database
        read through a stale lock file (LMDB then shows an empty meta page); creating tables
        there would commit empty tables over the real ones. A file with nothing in it beyond
        its meta pages (a first solve killed at once) is new."""
        with self.env.begin() as txn:
            names = {bytes(k) for k, _ in txn.cursor()}
        if b"meta" in names or (not names and self.file_bytes() <= self.used_bytes()):
            return
        self.close()
        raise StoreError(
            f"{self.path}/data.mdb is an LMDB database without pndb's tables; pndb will not write over "
            "it: if it is a pndb database, close every program using it and run the command again; "
            "otherwise choose another --db"
        )

    def open_tables(self, create):
        self.meta = self.env.open_db(b"meta", create=create)
        self.nodes = self.env.open_db(b"nodes", create=create)
        self.parents = self.env.open_db(b"parents", dupsort=True, dupfixed=True, create=create)
        self.proof = self.env.open_db(b"proof", create=create)
        try:  # a database written before certificates existed has no such table: nothing in it
            self.certs = self.env.open_db(b"certs", dupsort=True, create=create)
        except lmdb.NotFoundError:
            self.certs = None
        try:  # a database written before the time series existed has none: an empty series
            self.series = self.env.open_db(b"series", create=create)
        except lmdb.NotFoundError:
            self.series = None
        self.graphs = None
        try:  # only in a database of a game whose positions are stored (open_for_game makes it)
            self.positions = self.env.open_db(b"positions", create=False)
        except lmdb.NotFoundError:
            self.positions = None
        with self.env.begin() as txn:
            keys = txn.get(b"keys", db=self.meta)
        self.graph_keyed = keys is not None and decode_meta(b"keys", keys) == GRAPH_KEYS
        if self.graph_keyed:
            self.open_graphs(create)

    def open_graphs(self, create):
        """Open the graph-key table (pndb.games.placement.graphkey), creating it when ``create``."""
        try:
            self.graphs = self.env.open_db(b"graphs", create=create)
        except lmdb.NotFoundError:
            raise StoreError(f"{self.path} is graph-keyed but has no graph-key table") from None
        self.graph_keyed = True

    def open_positions(self):
        """Create the table of position records (pndb.games.stored) where it is missing."""
        if self.positions is None:
            self.positions = self.env.open_db(b"positions", create=True)

    def close(self):
        if self.env is not None:
            self.env.close()
            self.env = None
        if self.lmdb_lock is not None:  # (after the environment: closing it drops LMDB's locks)
            os.close(self.lmdb_lock)
            self.lmdb_lock = None
        if self.dir_lock is not None:
            os.close(self.dir_lock)
            self.dir_lock = None
        if self.lock_file:
            self.lock_file.close()
            self.lock_file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def file_bytes(self):
        f = self.path / "data.mdb"
        return f.stat().st_size if f.exists() else 0

    def map_bytes(self):
        """The map size an environment of this database opens with: room to grow past the file."""
        return max(INITIAL_MAP_BYTES, self.file_bytes() * 2)

    def read_every_page(self):
        """Read every record of every table in a child process (pndb.pages) before a command
        that reads them all: LMDB trusts its pages, and a damaged one (a zeroed page, say) can
        make it abort the process at an assertion instead of reporting an error. StoreError
        ("damaged", with LMDB's words) when the child fails."""
        package_parent = str(Path(__file__).resolve().parent.parent)
        code = (
            f"import sys; sys.path.insert(0, {package_parent!r}); "
            "from pndb.pages import read_pages; read_pages(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))"
        )
        args = [str(self.path), str(self.map_bytes()), str(MAX_DBS)]
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
        if p.returncode != 0:
            lines = p.stderr.strip().splitlines() or [f"exit code {p.returncode}"]
            raise StoreError(f"the database is damaged ({lines[-1]})")

    def view(self, game=None):
        """A read-only view of the stored DAG (a short read transaction: close it soon)."""
        return ReadView(self, game)

    def all_meta(self):
        with self.view() as view:
            return view.all_meta()

    # ------------------------------------------------------------ writing

    def commit(
        self, nodes=(), links=(), proofs=(), meta=None, drop_nodes=(), drop_links=(), certs=(), graphs=(),
        positions=(), point=None,
    ):
        """Write one checkpoint in one transaction; on MapFullError grow the map and retry.

        ``nodes``: (key, Node); ``links``: (child, parent); ``proofs``: (key, Proof);
        ``certs``: (key, Certificate); ``graphs``: (node key, graphkey.GraphEntry);
        ``positions``: (key, the record of its position: pndb.games.stored); ``meta``:
        name -> JSON value; ``drop_nodes``, ``drop_links``: what to delete first; ``point``: the
        checkpoint's timeseries.SeriesPoint, its ``nodes`` and ``db_bytes`` filled in here (the
        nodes as this transaction leaves them).
        """
        nodes, links, proofs, certs = list(nodes), list(links), list(proofs), list(certs)
        graphs, positions = list(graphs), list(positions)
        while True:
            try:
                with self.env.begin(write=True) as txn:
                    for key in drop_nodes:
                        txn.delete(key, db=self.nodes)
                    for child, parent in drop_links:
                        txn.delete(child, parent, db=self.parents)
                    pack = NODE.pack
                    for key, rec in nodes:
                        txn.put(key, pack(*rec), db=self.nodes)
                    for child, parent in links:
                        txn.put(child, parent, db=self.parents, dupdata=True)
                    for key, rec in proofs:
                        txn.put(key, PROOF.pack(*rec), db=self.proof)
                    for key, cert in certs:
                        txn.put(key, bytes([cert.kind]) + cert.payload, db=self.certs, dupdata=True)
                    for key, entry in graphs:
                        txn.put(key, entry.board + entry.graph, db=self.graphs)
                    for key, record in positions:
                        txn.put(key, record, db=self.positions)
                    for name, value in (meta or {}).items():
                        txn.put(name.encode(), encode_meta(value), db=self.meta)
                    if point is not None:
                        count = txn.stat(self.nodes)["entries"]  # (not ``nodes``: a retry writes them again)
                        self.record_point(txn, point._replace(nodes=count, db_bytes=self.file_bytes()))
                return
            except lmdb.MapFullError:
                self.env.set_mapsize(self.env.info()["map_size"] * 2)
            except lmdb.Error:
                # LMDB reports a write that found no room as EIO or ENOSPC; the transaction was
                # not committed, so the database still holds the previous checkpoint
                if free_bytes(self.path) < LOW_SPACE_BYTES:
                    raise disk_full_error(self.path) from None
                raise

    def record_point(self, txn, point):
        """Write a timeseries.SeriesPoint in the write transaction ``txn`` and drop the points
        its thinning no longer keeps: the last one before, unless kept; every other kept one
        when the stride doubles."""
        last, limit = point.checkpoint, self.series_limit
        cursor = txn.cursor(db=self.series)
        if timeseries.thinning(last, limit):
            numbers = [timeseries.decode_key(k) for k in cursor.iternext(keys=True, values=False)]
        else:
            numbers = [timeseries.decode_key(cursor.key())] if cursor.last() else []
        for number in numbers:
            if number < last and not timeseries.kept(number, last, limit):
                txn.delete(timeseries.encode_key(number), db=self.series)
        txn.put(timeseries.encode_key(last), timeseries.encode(point), db=self.series)

    def compact_file(self):
        """Rewrite data.mdb without its free pages (LMDB never shrinks a file by itself): a
        compacted copy beside it, fsynced, renamed over it, opened again.

        The swap happens only while nothing else has the database open. LMDB keeps the last
        transaction id in lock.mdb, shared by every process that has the file open, and reads
        the meta page that id names: a process that opened the database before the swap would
        read the new file through the old id (a compacted copy's other meta page is empty),
        and a write would commit empty tables over the real ones. So this writer first takes
        the directory lock exclusively (every open Store holds it shared: it waits up to
        ALONE_WAIT_SECONDS for them to close, and Stores opened meanwhile wait for the swap),
        then, with its own environment closed, LMDB's lock on lock.mdb (which any LMDB program
        holds while it has the file open; those opening meanwhile wait), so that the
        environment opened afterwards reads the new file's meta page afresh. The copy is an
        unnamed file where the filesystem allows (a kill leaves nothing behind) and is named
        compact.tmp only to be renamed; the new file must hold the same root record and counts
        before this returns. Readers already open when the swap is refused are never touched.
        """
        self.take_directory()
        try:
            before = self.fingerprint()
            size = max(INITIAL_MAP_BYTES, self.write_compacted_copy() * 2)
            self.env.close()
            self.env = None
            self.lmdb_lock = lock_lmdb(self.path)
            os.replace(self.path / COMPACT_TMP, self.path / "data.mdb")
            fsync_directory(self.path)
            self.env = lmdb.open(str(self.path), map_size=size, max_dbs=MAX_DBS, lock=True)
            self.open_tables(create=False)
            if self.fingerprint() != before:
                raise StoreError(
                    f"the compacted {self.path}/data.mdb does not read back as the database did; close "
                    f"every program using it and run `pndb check {self.path}`"
                )
        finally:
            remove_compact_leftovers(self.path)
            fcntl.flock(self.dir_lock, fcntl.LOCK_SH)

    def take_directory(self):
        """The directory lock alone (see compact_file), waiting for other Stores to close."""
        deadline = time.monotonic() + ALONE_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(self.dir_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    fcntl.flock(self.dir_lock, fcntl.LOCK_SH)
                    raise StoreError(
                        f"{self.path}: its records are compacted, but other pndb processes (status, "
                        f"check, export, the API) kept it open for {ALONE_WAIT_SECONDS:.0f} s, so the "
                        "file is not shrunk: run the compact again when they have finished"
                    ) from None
                time.sleep(0.02)

    def fingerprint(self):
        """The counts and the root record: what a compacted file must read back the same."""
        with self.view() as view:
            root = view.meta("root")
            return view.counts(), root and view.node(bytes.fromhex(root))

    def write_compacted_copy(self):
        """Write a compacted copy of the database as compact.tmp, fsynced; its size in bytes.
        A full disk is the full-disk error, with nothing of the copy left."""
        try:
            fd = os.open(self.path, os.O_TMPFILE | os.O_RDWR, 0o600)
            named = False
        except (AttributeError, OSError) as e:  # a system or filesystem without unnamed files
            if isinstance(e, OSError) and e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
            fd = os.open(self.path / COMPACT_TMP, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            named = True
        try:
            os.fchmod(fd, (self.path / "data.mdb").stat().st_mode & 0o777)
            self.env.copyfd(fd, compact=True)
            os.fsync(fd)
            if not named:
                link_unnamed(fd, self.path / COMPACT_TMP)
            return os.fstat(fd).st_size
        except (lmdb.Error, OSError):
            if free_bytes(self.path) < LOW_SPACE_BYTES:
                raise disk_full_error(self.path) from None
            raise
        finally:
            os.close(fd)


def positions_of(found, keys):
    """Where each of ``found`` (some of the distinct 16-byte ``keys``) is in ``keys``, as an
    array: the keys as numpy bytes, sorted and searched (a dict of a batch's keys cost more
    than the batch's read from LMDB)."""
    want = np.frombuffer(b"".join(keys), "S16")  # numpy orders them as bytes
    order = np.argsort(want, kind="stable")
    return order[np.searchsorted(want, np.frombuffer(b"".join(found), "S16"), sorter=order)]


def remove_compact_leftovers(path):
    """Remove the copy a killed or failed compact left (a directory in older versions)."""
    tmp = Path(path) / COMPACT_TMP
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp)
    else:
        tmp.unlink(missing_ok=True)


def lock_lmdb(path):
    """LMDB's own lock (byte 0 of lock.mdb), taken exclusively while this process has no
    environment open: a descriptor holding it, or StoreError when another program has the
    database open. Close it only after the environment opened next: closing any descriptor
    of lock.mdb drops all this process's locks on it, LMDB's too."""
    fd = os.open(path / "lock.mdb", os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
    except OSError:
        os.close(fd)
        raise StoreError(
            f"{path}: its records are compacted, but another program has it open, so the file is "
            "not shrunk: run the compact again when it has finished"
        ) from None
    return fd


def link_unnamed(fd, target):
    """Give the unnamed (O_TMPFILE) file ``fd`` the name ``target``: linkat through /proc with
    AT_SYMLINK_FOLLOW (os.link calls link(), which does not follow the /proc link)."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, at_symlink_follow = -100, 0x400
    if libc.linkat(at_fdcwd, f"/proc/self/fd/{fd}".encode(), at_fdcwd, bytes(target), at_symlink_follow):
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(target))


def fsync_directory(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ReadView:
    """A read-only view of a stored DAG in one read transaction: nodes, proofs, parent links,
    meta, and (given the game) each node's children. What book export, the integrity check and
    status read; the search reads through its write-back cache (pndb.cache) instead."""

    def __init__(self, store, game=None):
        self.store = store
        self.game = game
        self.txn = store.env.begin()
        if game is not None and store.graph_keyed:
            from pndb.games.placement.graphkey import GraphKeyedGame

            self.game = game if isinstance(game, GraphKeyedGame) else GraphKeyedGame(game, self)
        elif game is not None and store.positions is not None:
            from pndb.games.stored import StoredPositions

            self.game = game if isinstance(game, StoredPositions) else StoredPositions(game, self)

    def close(self):
        if self.txn is not None:
            self.txn.abort()
            self.txn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def node(self, key):
        raw = self.txn.get(key, db=self.store.nodes)
        return None if raw is None else decode(Node, NODE, key, raw)

    def proof(self, key):
        """The Proof of ``key``, or None; a node key's is its representative's."""
        key = self.board_key(key)
        raw = self.txn.get(key, db=self.store.proof)
        return None if raw is None else decode(Proof, PROOF, key, raw)

    def proofs_of(self, board_keys):
        """The Proofs stored for those of ``board_keys`` that have one, as a dict: one call
        into LMDB for a whole batch of the inner search's records."""
        found = self.txn.cursor(db=self.store.proof).getmulti(board_keys)
        return {k: decode(Proof, PROOF, k, v) for k, v in found}

    def node_rows(self, keys):
        """The Nodes of ``keys`` as NODE_ROW rows, in one call; a key without a node gets a row
        that knows nothing (the interval [second-wins, first-wins], zero numbers)."""
        return self.rows_of(self.store.nodes, keys, NODE_ROW, hi=F)

    def proof_rows(self, keys):
        """The Proofs of ``keys`` as PROOF_ROW rows, in one call; EMPTY_PROOF's where none."""
        return self.rows_of(self.store.proof, keys, PROOF_ROW, hi=F, move0=NO_MOVE, move1=NO_MOVE)

    def rows_of(self, table, keys, dtype, **unknown):
        """The records of ``keys`` in ``table`` as rows of ``dtype`` (zeros but the fields of
        ``unknown`` where a key has none): one call into LMDB, the bytes read as one array."""
        rows = np.zeros(len(keys), dtype)
        for name, value in unknown.items():
            rows[name] = value
        found = self.txn.cursor(db=table).getmulti(keys)
        if found:
            got, raw = zip(*found)
            if set(map(len, raw)) != {dtype.itemsize}:
                name = "node" if dtype is NODE_ROW else "proof"
                raise StoreError(f"the database is damaged: a {name} record of the wrong size")
            rows[positions_of(got, keys)] = np.frombuffer(b"".join(raw), dtype)
        return rows

    def certificates(self, key):
        """The Certificates stored for ``key`` (a position may have one per defender); a node
        key's and its representative's."""
        if self.store.certs is None:
            return []
        out = []
        for k in dict.fromkeys((key, self.board_key(key))):
            cur = self.txn.cursor(db=self.store.certs)
            if cur.set_key(k):
                out += [decode_certificate(k, v) for v in cur.iternext_dup()]
        return out

    def certificates_of(self, keys):
        """The Certificates stored for those of ``keys`` (board keys) that have one, as a dict
        key -> [Certificate], in one call."""
        if self.store.certs is None:
            return {}
        out = {}
        for k, v in self.txn.cursor(db=self.store.certs).getmulti(keys, dupdata=True):
            out.setdefault(k, []).append(decode_certificate(k, v))
        return out

    def graph(self, key):
        """The graphkey.GraphEntry of a node key, or None."""
        from pndb.games.placement.graphkey import GraphEntry

        raw = self.txn.get(key, db=self.store.graphs) if self.store.graphs is not None else None
        if raw is None:
            return None
        if len(key) != 16 or len(raw) <= 16:
            raise StoreError(f"the database is damaged: a graph-key record of {len(raw)} bytes")
        return GraphEntry(bytes(raw[:16]), bytes(raw[16:]))

    def position_record(self, key):
        """The record of the position a node key names (pndb.games.stored), or None."""
        raw = self.txn.get(key, db=self.store.positions) if self.store.positions is not None else None
        return None if raw is None else bytes(raw)

    def board_key(self, key):
        """The board key of the representative of a node key; a board key itself."""
        if not self.store.graph_keyed or not (key[0] == 0xFF and key[8] == 0xFF):
            return key
        entry = self.graph(key)
        return key if entry is None else entry.board

    def all_certificates(self):
        """(key, Certificate) for every stored certificate."""
        if self.store.certs is not None:
            for k, v in self.txn.cursor(db=self.store.certs):
                yield k, decode_certificate(k, v)

    def parents(self, key):
        cur = self.txn.cursor(db=self.store.parents)
        if not cur.set_key(key):
            return []
        return list(cur.iternext_dup())

    def children(self, key):
        """The Children (keys, moves, statuses) of the ongoing position of ``key``."""
        return self.game.children(self.game.position(key))

    def meta(self, name, default=None):
        raw = self.txn.get(name.encode(), db=self.store.meta)
        return default if raw is None else decode_meta(name.encode(), raw)

    def all_meta(self):
        return {
            bytes(k).decode(errors="replace"): decode_meta(k, v)
            for k, v in self.txn.cursor(db=self.store.meta)
        }

    def nodes(self):
        """(key, Node) for every stored node, in key order."""
        for k, v in self.txn.cursor(db=self.store.nodes):
            yield k, decode(Node, NODE, k, v)

    def series(self):
        """The solve's time series: a timeseries.SeriesPoint per kept checkpoint, in order (none in
        a database written before the series existed)."""
        if self.store.series is None:
            return []
        records = self.txn.cursor(db=self.store.series).iternext(keys=False)
        try:
            return [timeseries.decode(v) for v in records]
        except ValueError:
            raise StoreError("the database is damaged: a point of its time series is not pndb's") from None

    def series_count(self):
        """How many points the time series holds."""
        return self.txn.stat(self.store.series)["entries"] if self.store.series is not None else 0

    def links(self):
        """(child, parent) for every parent link."""
        yield from self.txn.cursor(db=self.store.parents)

    def proofs(self):
        for k, v in self.txn.cursor(db=self.store.proof):
            yield k, decode(Proof, PROOF, k, v)

    def counts(self):
        return {
            "nodes": self.txn.stat(self.store.nodes)["entries"],
            "parent_links": self.txn.stat(self.store.parents)["entries"],
            "proof_records": self.txn.stat(self.store.proof)["entries"],
            "certificates": self.txn.stat(self.store.certs)["entries"] if self.store.certs is not None else 0,
            **({"graph_keys": self.txn.stat(self.store.graphs)["entries"]} if self.store.graph_keyed else {}),
            **({"positions": self.txn.stat(self.store.positions)["entries"]} if self.store.positions else {}),
        }


def decode(record, layout, key, raw):
    """A Node or Proof from its bytes; StoreError for bytes that cannot be one."""
    if len(key) != 16 or len(raw) != layout.size:
        raise StoreError(
            f"the database is damaged: a {record.__name__.lower()} record of {len(raw)} bytes "
            f"under a key of {len(key)} bytes"
        )
    return record._make(layout.unpack(raw))


def decode_certificate(key, raw):
    if len(key) != 16 or len(raw) < 1:
        raise StoreError("the database is damaged: an empty certificate record")
    return Certificate(raw[0], bytes(raw[1:]))


def decode_meta(name, raw):
    try:
        value = json.loads(bytes(raw))
    except (ValueError, RecursionError):
        raise StoreError(f"the database is damaged: meta entry {bytes(name)[:40]!r} is not JSON") from None
    name = bytes(name)
    if not isinstance(value, META_TYPES.get(name, object)) or (name == b"root" and not is_key_hex(value)):
        raise StoreError(f"the database is damaged: meta entry {bytes(name)[:40]!r} is not what pndb writes")
    return value


META_TYPES = {b"root": str, b"game": str, b"rules": dict, b"start": dict}  # what readers rely on


def is_key_hex(text):
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


def open_for_game(path, game, writer, graph_keys=None):
    """Open (creating if a writer) the DB at ``path`` for ``game``; refuse a DB of another game.

    ``graph_keys``: True for a DAG keyed by graph keys, False for board keys, None to follow the
    database; a database keeps the keys it was created with, and asking for the others is an
    error (its nodes could not be read as the other keys)."""
    path = Path(path)
    exists = (path / "data.mdb").exists()
    if not exists and not writer:
        raise StoreError(f"no pndb database at {path}")
    store = Store(path, writer=writer, create=writer)
    with store.view() as view:
        schema, spec, rules = view.meta("schema"), view.meta("game"), view.meta("rules")
        stored = any(view.counts().values())
    if schema is None:
        if not writer or stored:
            store.close()
            raise StoreError(f"{path} is {'a damaged' if stored else 'an empty'} database (it has no schema)")
        meta = {"schema": SCHEMA_VERSION, "game": game.spec, "rules": game.rules_data()}
        if graph_keys:
            meta["keys"] = GRAPH_KEYS
            store.open_graphs(create=True)
        if game.stored_positions:
            store.open_positions()
        store.commit(meta=meta)
    elif schema != SCHEMA_VERSION:
        store.close()
        raise StoreError(f"{path} has schema {schema}; this pndb reads schema {SCHEMA_VERSION}")
    elif not same_rules(rules, game.rules_data()):
        store.close()
        raise StoreError(f"{path} holds a solve of {spec}, not of {game.spec}")
    elif graph_keys is not None and graph_keys != store.graph_keyed:
        store.close()
        if graph_keys:
            raise StoreError(f"{path} holds a solve keyed by board keys; solve it without --graph-keys")
        raise StoreError(f"{path} holds a solve keyed by graph keys; resume it with --graph-keys")
    return store


def same_rules(stored, rules):
    """The rules decide (not the name): a file: game is the same game wherever its file lies."""

    def strip(r):
        return {k: v for k, v in json.loads(encode_meta(r)).items() if k != "name"}

    return strip(stored) == strip(rules)


def open_existing(path):
    """Open an existing DB for reading; returns (store, game spec, rules data)."""
    if not os.path.isdir(path):
        raise StoreError(f"no pndb database at {path}")
    store = Store(path)
    with store.view() as view:
        schema, spec, rules = view.meta("schema"), view.meta("game"), view.meta("rules")
    if schema != SCHEMA_VERSION or spec is None:
        store.close()
        raise StoreError(f"{path} is not a pndb database of schema {SCHEMA_VERSION}")
    return store, spec, rules
