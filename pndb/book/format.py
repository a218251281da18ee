"""The book file format (docs/book-format.md): writing it, reading it whole and checked.

One zstandard frame holding a magic, a JSON header (the rules, the start position, the value)
and sorted 18-byte records (canonical key, move in the key's orientation, value code), then, in
format version 2, the certificates. ``write_atomically`` never clobbers what the output path is.
"""

import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import zstandard

from pndb.games import GameError, family_of, game_from_rules, shown
from pndb.games.interface import is_int
from pndb.values import NO_MOVE, Certificate, Status, Value

MAGIC = b"PNBOOK\x00\x01"
FORMAT_VERSION = 1
RECORD = np.dtype([("a", ">u8"), ("b", ">u8"), ("move", "u1"), ("value", "u1")])
VALUE_CODES = {
    Value.UNKNOWN: 0,
    Value.FIRST_WINS: 1,
    Value.SECOND_WINS: 2,
    Value.DRAW: 3,
    Value.FIRST_WONT_WIN: 4,
    Value.SECOND_WONT_WIN: 5,
}
CODE_VALUES = {v: k for k, v in VALUE_CODES.items()}
# zstandard's compression level: 6 compresses a book of 14 MB (qango6:tournament) in a third of
# level 10's time, to a file 9% larger (2.47 MB against 2.26); any level reads the same
LEVEL = 6
INTERVAL_CODES = {(v.lo, v.hi): code for v, code in VALUE_CODES.items()}


class BookError(ValueError):
    """A file that is not a readable book, or a book that cannot be written; one line."""


# ---------------------------------------------------------------- writing


def write_book(path, header, records, certs=None):
    """Write header and records (RECORD rows sorted by key) as a book file: format version 1,
    or version 2 when there are certificates (key -> {Certificate}), sorted by key and payload.
    Returns the number of bytes written."""
    arr = np.asarray(records, RECORD)
    table = b"".join(
        key + bytes([cert.kind]) + len(cert.payload).to_bytes(2, "big") + cert.payload
        for key in sorted(certs or {})
        for cert in sorted(certs[key])
    )
    magic = MAGIC
    if certs:
        magic = MAGICS[2]
        count = sum(len(c) for c in certs.values())
        header.update(format_version=2, certificates=count, certificate_bytes=len(table))
    head = json.dumps(header, sort_keys=True).encode()
    raw = magic + len(head).to_bytes(4, "big") + head + arr.tobytes() + table
    data = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).compress(raw)
    write_atomically(Path(path), data)
    return len(data)


def write_atomically(path, data):
    """Write ``data`` to ``path`` without ever clobbering what ``path`` is: a regular file (or
    a new one) gets a unique temporary file beside it, fsynced, then renamed over it, so that
    a crash, a full disk or Ctrl-C leaves the old file or the whole new one; a symlink is
    followed and the file it names is replaced, never the link; a FIFO or a character device
    (a pipe, a terminal, /dev/null) is written in place. Anything else, and any path in a
    database directory, is refused. A new file gets the user's umask, a replaced one keeps
    its permission bits."""
    target, st = output_target(path)
    if st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        return write_in_place(path, data)
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise BookError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:  # also Ctrl-C: no temporary file stays behind
        os.unlink(tmp)
        if isinstance(e, OSError):
            raise BookError(f"cannot write {path}: {e.strerror}") from None
        raise


def output_target(path):
    """(the real path, its stat or None when it does not exist) of a book's output ``path``, or
    a BookError saying in one line why a book may not be written there: neither a regular
    file, a pipe nor a character device, or a path in a database directory. Export asks it
    before its walk, so that a refusal comes first; write_atomically asks again."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise BookError(f"cannot write {path}: {e.strerror}") from None
    special = st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode))
    if st is not None and not special and not stat.S_ISREG(st.st_mode):
        raise BookError(f"cannot write {path}: it is not a regular file, a pipe or a character device")
    if not special and (target.parent / "data.mdb").exists():
        raise BookError(f"cannot write {path}: {target.parent} is a database directory")
    return target, st


def write_in_place(path, data):
    """Write ``data`` into a FIFO or a character device as it is (no temporary file, no rename)."""
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise BookError(f"cannot write {path}: {e.strerror}") from None


def current_umask():
    """The process's umask (read by setting it, and set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------- reading


MAGICS = {1: MAGIC, 2: b"PNBOOK\x00\x02"}  # format version -> magic
MAGIC_PREFIX = MAGIC[:6]  # every version's: "PNBOOK", then two bytes of layout
MAX_HEADER = 16 << 20  # bytes of JSON header a reader accepts
CERT_HEAD = 19  # key (16), kind (1), payload length (2)
CHUNK = 1 << 16  # records read, checked and kept per step


@dataclass
class Book:
    """A book as read: the header, the records, the rules rebuilt, the certificates by key."""

    header: dict
    records: np.ndarray  # RECORD, strictly ascending by key
    game: object
    certificates: dict = field(default_factory=dict)  # 16-byte canonical key -> [Certificate]

    @property
    def value(self):
        return Value.named(self.header["value"])

    def index(self, ka, kb):
        """The row of the record with canonical key (ka, kb), or None."""
        lo = np.searchsorted(self.records["a"], ka, "left")
        hi = np.searchsorted(self.records["a"], ka, "right")
        i = lo + np.searchsorted(self.records["b"][lo:hi], kb, "left")
        return int(i) if i < hi and self.records["b"][i] == kb else None

    def lookup(self, pos):
        """(move on the board as it stands or None, Value or None) for the position ``pos``;
        BookError when the book's move is not legal there."""
        key, symmetry = self.game.canonical(pos)
        i = self.index(int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big"))
        if i is None:
            return None, None
        move, code = int(self.records["move"][i]), int(self.records["value"][i])
        if move == NO_MOVE:
            return None, CODE_VALUES[code]
        cell = self.game.move_to_board(symmetry, move)
        if cell not in self.game.legal_moves(pos):
            where = self.game.position_text(pos)
            raise BookError(f"the book's move {self.game.board_name(cell)} at {where} is not legal there")
        return cell, CODE_VALUES[code]


class Inflater:
    """The content of the one zstandard frame of a book file, read in bounded steps.

    Each step feeds at most 256 compressed bytes: zstd regenerates at most 128 KiB from a block
    of 4 bytes or more, so a step yields at most 8 MiB, and reading n bytes holds no more than
    n + 8 MiB, whatever the frame would inflate to."""

    STEP = 256

    def __init__(self, f):
        self.file = f
        self.src = memoryview(f.read(1 << 20))
        try:
            params = zstandard.get_frame_parameters(self.src)
        except zstandard.ZstdError:
            raise BookError("not a pndb book (not a zstandard frame)") from None
        if not params.has_checksum:
            raise BookError("the book is damaged: its zstandard frame has no checksum")
        self.dobj = zstandard.ZstdDecompressor().decompressobj()
        self.out = bytearray()

    def step(self):
        if self.dobj.eof:
            return False
        if not self.src:
            self.src = memoryview(self.file.read(1 << 20))
            if not self.src:
                return False
        try:
            self.out += self.dobj.decompress(self.src[: self.STEP])
        except zstandard.ZstdError as e:
            raise BookError(f"the book is damaged ({shown(e)})") from None
        self.src = self.src[self.STEP :]
        return True

    def read(self, n, what):
        """The next n bytes of content; BookError naming ``what`` when the content ends first."""
        while len(self.out) < n and self.step():
            pass
        if len(self.out) < n:
            raise BookError(f"the book is truncated or damaged: its content ends within {what}")
        data = bytes(self.out[:n])
        del self.out[:n]
        return data

    def check_end(self):
        """BookError unless the content and the frame end here and nothing follows the frame."""
        while not self.out and self.step():
            pass
        if self.out:
            raise BookError("the book is damaged: bytes follow its last record or certificate")
        if not self.dobj.eof:
            raise BookError("the book is truncated: its zstandard frame ends early")
        if self.dobj.unused_data or self.src or self.file.read(1):
            raise BookError("the book is damaged: bytes follow its zstandard frame")


def read_book(path):
    """Read a book file (format version 1 or 2), checking its whole structure; BookError with a
    one-line reason when it is not a well-formed book. What the records prove is the
    verifier's business (tools/verify.py); the moves a reader plays are checked by ``lookup``."""
    return read_file(path, read_content)


def read_header(path):
    """(header, game) of a book file, checked as read_book checks them, without reading its
    records: a quick look at a book of any size."""
    return read_file(path, lambda inflater: read_head(inflater)[:2])


def is_book(path):
    """Whether the file at ``path`` looks like a book, by its magic: a zstandard frame whose
    content starts with "PNBOOK" (whether it is a well-formed one is read_book's to say)."""
    try:
        with open(path, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as content:
            return content.read(len(MAGIC_PREFIX)) == MAGIC_PREFIX
    except (OSError, zstandard.ZstdError):
        return False


def read_file(path, read):
    """``read(Inflater)`` on the book file at ``path``, its errors as one-line BookErrors."""
    try:
        with open(path, "rb") as f:
            return read(Inflater(f))
    except OSError as e:
        raise BookError(f"cannot read {shown(path)}: {e.strerror}") from None
    except BookError as e:
        raise BookError(f"{shown(path)}: {e}") from None


def read_content(inflater):
    header, game, version = read_head(inflater)
    records = read_records(inflater, header["records"], game)
    book = Book(header, records, game)
    if version == 2:
        read_certificates(inflater, book)
    inflater.check_end()
    return book


def read_head(inflater):
    """(header, game, format version) from the start of a book's content."""
    head = inflater.read(12, "the magic")
    version = next((v for v, magic in MAGICS.items() if head[:8] == magic), None)
    if version is None:
        raise BookError("not a pndb book (bad magic)" if head[:6] != MAGIC_PREFIX else
                        f"book layout {head[6:8].hex()} is not one this pndb reads (0001, 0002)")  # fmt: skip
    size = int.from_bytes(head[8:12], "big")
    if size > MAX_HEADER:
        raise BookError(f"the book header claims {size} bytes, more than {MAX_HEADER >> 20} MiB")
    try:
        header = json.loads(inflater.read(size, "the header").decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BookError("the book header is not UTF-8 JSON") from None
    return header, check_header(header, version), version


def check_header(header, version):
    """The header's game, once every field the reader relies on has its type and a sane value."""
    if not isinstance(header, dict):
        raise BookError("the book header is not a JSON object")
    counts = ["records"] + (["certificates", "certificate_bytes"] if version == 2 else [])
    fields = ["format", "format_version", "game", "rules", "start", "value", "partial", "record_size"]
    for key in fields + counts:
        if key not in header:
            raise BookError(f"the book header lacks '{key}'")
    if header["format"] != "pndb-book":
        raise BookError("the book header's format is not 'pndb-book'")
    if not is_int(header["format_version"]) or header["format_version"] != version:
        raise BookError(f"the book header's format_version is not {version}, the version of its magic")
    name = header["game"]
    if not isinstance(name, str) or not name.isprintable() or len(name) > 1000:
        raise BookError("the book header's game is not a printable name")
    if not isinstance(header["partial"], bool):
        raise BookError("the book header's partial is not true or false")
    allowed = [v.name for v in VALUE_CODES] if header["partial"] else ("first-wins", "second-wins", "draw")
    if not isinstance(header["value"], str) or header["value"] not in allowed:
        raise BookError(f"the book header's value is not one of {', '.join(allowed)}")
    for key in counts:
        if not is_int(header[key]) or header[key] < 0:
            raise BookError(f"the book header's {key} is not a count")
    if not is_int(header["record_size"]) or header["record_size"] != RECORD.itemsize:
        raise BookError(f"the book header's record_size is not {RECORD.itemsize}")
    certs = header.get("certificates", 0)
    if version == 2 and not CERT_HEAD * certs <= header["certificate_bytes"] <= (CERT_HEAD + 0xFFFF) * certs:
        raise BookError("the book header's certificate_bytes do not fit its certificates")
    rules = header["rules"]
    if not isinstance(rules, dict):
        raise BookError("the book's rules are not a JSON object")
    try:
        game = game_from_rules(rules, name)
    except GameError as e:
        raise BookError(f"the book's rules are unusable: {e}") from None
    problem = game.book_rules_problem(rules)
    if problem is not None:
        raise BookError(f"the book's rules {problem}")
    check_start(header["start"], game)
    return game


def check_start(start, game):
    """The start position: its cells, played from the empty board, give its stones."""
    problem = start_problem(start, game)
    if problem is not None:
        raise BookError(f"the book header's start {problem}")


def start_problem(start, game):
    """What is wrong with a start position as a solve stores it (the moves, the cells played
    from the empty board, the stones they give: a book's header and a database's meta hold
    one), or None when it is a position of ``game``."""
    if not isinstance(start, dict) or not isinstance(start.get("moves"), str):
        return "is not a position"
    cells = start.get("cells")
    if not (isinstance(cells, list) and all(is_int(c) for c in cells)):
        return "cells are not a list of cells"
    pos = game.parse_moves("")[0]  # the empty board
    for cell in cells:
        if game.status(pos) != Status.ONGOING or cell not in game.legal_moves(pos):
            return f"cells are not a game: cell {shown(cell)} cannot be played"
        pos = game.play(pos, cell)
    try:
        stored = family_of(game).codec.position(start)
    except GameError:
        stored = None
    if stored != pos:
        return "stones are not those of its start cells"
    return None


def read_records(inflater, count, game):
    """The records, read and checked a chunk at a time (a damaged book is refused at its first
    bad chunk, before the rest is inflated): keys strictly ascending, value codes known, and
    keys and moves as the game's family says (``game.record_problems``)."""
    body = bytearray()
    last = None
    for start in range(0, count, CHUNK):
        n = min(CHUNK, count - start)
        rec = np.frombuffer(inflater.read(n * RECORD.itemsize, f"record {start + n - 1}"), RECORD)
        a, b, move, value = rec["a"], rec["b"], rec["move"], rec["value"]
        # each record's key against the one before it (the first record of the book has none)
        pa, pb = last or (a[:1], b[:1])
        pa, pb = np.concatenate((pa, a[:-1])), np.concatenate((pb, b[:-1]))
        above = (a > pa) | ((a == pa) & (b > pb))
        above[0] |= last is None
        bad = {
            "its key is not above the key of the record before it": ~above,
            "its value code is unknown": value > max(CODE_VALUES),
            **game.record_problems(a, b, move),
        }
        for reason, mask in bad.items():
            if mask.any():
                raise BookError(f"the book is damaged: record {start + int(np.argmax(mask))}: {reason}")
        last = (a[-1:], b[-1:])
        body += rec.tobytes()
    records = np.frombuffer(body, RECORD)
    records.flags.writeable = False
    return records


def read_certificates(inflater, book):
    """Read the version 2 certificates into ``book.certificates``, checking their structure."""
    count, declared = book.header["certificates"], book.header["certificate_bytes"]
    used = 0
    previous = (b"",)
    for i in range(count):
        head = inflater.read(CERT_HEAD, f"certificate {i}")
        key, kind, n = head[:16], head[16], int.from_bytes(head[17:19], "big")
        used += CERT_HEAD + n
        if used > declared:
            raise BookError(f"the book is damaged: certificate {i} runs past the header's certificate_bytes")
        payload = inflater.read(n, f"certificate {i}")
        if (key, kind, payload) <= previous:
            raise BookError(
                f"the book is damaged: certificate {i}: it does not follow the one before it "
                "(key, kind, payload)"
            )
        previous = (key, kind, payload)
        row = book.index(int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big"))
        if row is None:
            raise BookError(f"the book is damaged: certificate {i}: its position has no record")
        value = CODE_VALUES[int(book.records["value"][row])]
        problem = book.game.certificate_problem(key, Certificate(kind, payload), value)
        if problem:
            raise BookError(f"the book is damaged: certificate {i}: {problem}")
        book.certificates.setdefault(key, []).append(Certificate(kind, payload))
    if used != declared:
        raise BookError(f"the book is damaged: its certificates take {used} bytes, not {declared}")
