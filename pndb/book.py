"""The solution book: writing it from a solved database, reading it, looking positions up.

The format is docs/book-format.md: one zstandard frame holding a magic, a JSON header (the rules,
the start position, the value) and sorted 18-byte records (canonical key, move in the key's
orientation, value code). ``export_book`` walks each strategy the value needs from the start:
the owner's move at owner-to-move positions (from the proof table of the inner solver, else from
a stored child that is good enough), every move at the opponent's positions.
"""

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import zstandard

from pndb import __version__
from pndb.games import GameError, game_from_rules, shown
from pndb.games import kernels as K
from pndb.games.spec import is_int
from pndb.search import STATUS_INTERVAL, VALUE_NAMES, DagSearch, good_for, proof_move, split_key
from pndb.store import NO_MOVE

MAGIC = b"PNBOOK\x00\x01"
FORMAT_VERSION = 1
RECORD = np.dtype([("a", ">u8"), ("b", ">u8"), ("move", "u1"), ("value", "u1")])
VALUE_CODES = {"unknown": 0, "first-wins": 1, "second-wins": 2, "draw": 3, "first-wont-win": 4, "second-wont-win": 5}
CODE_NAMES = {v: k for k, v in VALUE_CODES.items()}
INTERVAL_OF = {name: interval for interval, name in VALUE_NAMES.items()}
# value -> the strategies that prove it: (question, proven); the owner is the first player when proven
STRATEGIES = {
    "first-wins": [(0, True)],
    "second-wins": [(1, False)],
    "draw": [(1, True), (0, False)],
    "first-wont-win": [(0, False)],
    "second-wont-win": [(1, True)],
    "unknown": [],
}


class BookError(ValueError):
    """A file that is not a readable book, or a book that cannot be written; one line."""


class ExportError(RuntimeError):
    """The database does not hold what a complete book needs."""


# ---------------------------------------------------------------- writing


def export_book(store, game, out_path, partial=False):
    """Write the book of the store's start position; returns the header written."""
    with store.read() as txn:
        start = store.get_meta(txn, "start")
        root_hex = store.get_meta(txn, "root")
        root_rec = store.get_node(txn, bytes.fromhex(root_hex)) if root_hex else None
    if root_rec is None:
        raise ExportError("the database has no solve yet; run `pndb solve` first")
    value = VALUE_NAMES[(root_rec[0], root_rec[1])]
    if value not in ("first-wins", "second-wins", "draw") and not partial:
        raise ExportError(f"not solved yet (known so far: {value}); solve on, or export with --partial")
    walker = StrategyWalker(store, game)
    walker.dag.begin()
    try:
        records = {}
        for q, proven in STRATEGIES[value]:
            records.update(walker.strategy(bytes.fromhex(root_hex), q, proven))
    finally:
        walker.dag.end()
    header = {
        "format": "pndb-book",
        "format_version": FORMAT_VERSION,
        "pndb_version": __version__,
        "game": game.spec,
        "rules": game.rules_data(),
        "start": start,
        "value": value,
        "partial": bool(partial),
        "records": len(records),
        "record_size": RECORD.itemsize,
    }
    write_book(out_path, header, records)
    return header


@dataclass
class StrategyWalker:
    """Follows one player's strategy through the stored DAG and the proof table."""

    store: object
    game: object

    def __post_init__(self):
        self.dag = DagSearch(self.store, self.game)

    def interval(self, key):
        """What the database proved about a position: node record and proof record together."""
        node = self.dag.get(key)
        proof = self.store.get_proof(self.dag.txn, key)
        lo, hi = 0, 2
        for rec in (node, proof):
            if rec is not None:
                lo, hi = max(lo, rec[0]), min(hi, rec[1])
        return lo, hi

    def owner_move(self, key, q, proven):
        """The strategy owner's move at ``key``: from the proof table, else a good stored child."""
        move = proof_move(self.store.get_proof(self.dag.txn, key), q, proven)
        if move is not None:
            return move
        keys, moves, statuses = self.dag.children(key)
        for k, m, st in zip(keys, moves.tolist(), statuses.tolist()):
            lo, hi = self.interval(k) if st == K.ONGOING else STATUS_INTERVAL[st]
            if good_for(lo, hi, q, proven):
                return m
        return None

    def strategy(self, root, q, proven):
        """key -> (move, value code) at every owner-to-move position of the strategy."""
        records = {}
        seen = set()
        stack = [root]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            a, b = split_key(key)
            if K.status(np.uint64(a), np.uint64(b), self.game.tables) != K.ONGOING:
                continue
            keys, moves, statuses = self.dag.children(key)
            if (a.bit_count() == b.bit_count()) == proven:
                move = self.owner_move(key, q, proven)
                if move is None:
                    raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                records[key] = (move, VALUE_CODES[VALUE_NAMES[self.interval(key)]])
                i = moves.tolist().index(move)
                if statuses[i] not in GAME_OVER:
                    stack.append(keys[i])
            else:
                stack.extend(k for k, st in zip(keys, statuses) if st not in GAME_OVER)
        return records


GAME_OVER = (K.FIRST_WON, K.SECOND_WON, K.DRAW)


def write_book(path, header, records):
    """Write header and records (key -> (move, value code)) as a book file."""
    arr = np.empty(len(records), RECORD)
    for i, (key, (move, code)) in enumerate(sorted(records.items())):
        a, b = split_key(key)
        arr[i] = (a, b, move, code)
    head = json.dumps(header, sort_keys=True).encode()
    raw = MAGIC + len(head).to_bytes(4, "big") + head + arr.tobytes()
    data = zstandard.ZstdCompressor(level=10, write_checksum=True).compress(raw)
    tmp = Path(str(path) + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


# ---------------------------------------------------------------- reading

MAGICS = {1: MAGIC, 2: b"PNBOOK\x00\x02"}  # format version -> magic
MAX_HEADER = 16 << 20  # bytes of JSON header a reader accepts
CERT_HEAD = 19  # key (16), kind (1), payload length (2)
PAIRING = 1
RESERVED_KINDS = {2: "Connect Four rules"}
CHUNK = 1 << 16  # records read, checked and kept per step


class Certificate(NamedTuple):
    """A version 2 certificate as stored: its kind and its payload (docs/book-format.md)."""

    kind: int
    payload: bytes


@dataclass
class Book:
    """A book as read: the header, the records, the rules rebuilt, the certificates by key."""

    header: dict
    records: np.ndarray  # RECORD, strictly ascending by key
    game: object
    certificates: dict = field(default_factory=dict)  # 16-byte canonical key -> Certificate

    @property
    def value(self):
        return self.header["value"]

    def index(self, ka, kb):
        """The row of the record with canonical key (ka, kb), or None."""
        lo = np.searchsorted(self.records["a"], ka, "left")
        hi = np.searchsorted(self.records["a"], ka, "right")
        i = lo + np.searchsorted(self.records["b"][lo:hi], kb, "left")
        return int(i) if i < hi and self.records["b"][i] == kb else None

    def lookup(self, a, b):
        """(move on the board as it stands or None, value name or None) for the position (a, b);
        BookError when the book's move is not legal there."""
        t = self.game.tables
        ka, kb, s = K.canonical(np.uint64(a), np.uint64(b), t.sym_bytes)
        i = self.index(ka, kb)
        if i is None:
            return None, None
        move, code = int(self.records["move"][i]), int(self.records["value"][i])
        if move == NO_MOVE:
            return None, CODE_NAMES[code]
        cell = self.game.symmetries[s].index(move)  # the cell whose image is the stored move
        if not int(K.legal_mask(np.uint64(a), np.uint64(b), t)) >> cell & 1:
            where = position_text(self.game, a, b)
            raise BookError(f"the book's move {grid_name(self.game, cell)} at {where} is not legal there")
        return cell, CODE_NAMES[code]


def position_text(game, a, b):
    """A position as a user can find it: where each player's stones are (grid coordinates, also
    with gravity, where a column digit would not say which cell)."""
    if not a | b:
        return "the empty board"

    def names(x):
        return " ".join(grid_name(game, c) for c in range(64) if x >> c & 1) or "no cell"

    return f"the position with X on {names(a)} and O on {names(b)}"


def grid_name(game, cell):
    """A cell by its column letter and row, with gravity too (cell index beyond 26 columns)."""
    row, col = divmod(cell, game.width)
    return f"{chr(97 + col)}{row + 1}" if game.width <= 26 else f"cell {cell}"


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
    try:
        with open(path, "rb") as f:
            return read_content(Inflater(f))
    except OSError as e:
        raise BookError(f"cannot read {shown(path)}: {e.strerror}") from None
    except BookError as e:
        raise BookError(f"{shown(path)}: {e}") from None


def read_content(inflater):
    head = inflater.read(12, "the magic")
    version = next((v for v, magic in MAGICS.items() if head[:8] == magic), None)
    if version is None:
        raise BookError("not a pndb book (bad magic)" if head[:6] != MAGIC[:6] else
                        f"book layout {head[6:8].hex()} is not one this pndb reads (0001, 0002)")  # fmt: skip
    size = int.from_bytes(head[8:12], "big")
    if size > MAX_HEADER:
        raise BookError(f"the book header claims {size} bytes, more than {MAX_HEADER >> 20} MiB")
    try:
        header = json.loads(inflater.read(size, "the header").decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BookError("the book header is not UTF-8 JSON") from None
    game = check_header(header, version)
    records = read_records(inflater, header["records"], game)
    book = Book(header, records, game)
    if version == 2:
        read_certificates(inflater, book)
    inflater.check_end()
    return book


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
    allowed = VALUE_CODES if header["partial"] else ("first-wins", "second-wins", "draw")
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
    if not isinstance(rules, dict) or not isinstance(rules.get("symmetries"), list):
        raise BookError("the book's rules do not list their symmetries")
    try:
        game = game_from_rules(rules, name)
    except GameError as e:
        raise BookError(f"the book's rules are unusable: {e}") from None
    check_start(header["start"], game)
    return game


def check_start(start, game):
    """The start position: its cells, played from the empty board, give its two bitboards."""
    if not isinstance(start, dict) or not isinstance(start.get("moves"), str):
        raise BookError("the book header's start is not a position")
    cells, first, second = start.get("cells"), start.get("first"), start.get("second")
    if not (isinstance(cells, list) and len(cells) <= game.ncells and all(is_int(c) for c in cells)):
        raise BookError("the book header's start cells are not a list of cells")
    a = b = 0
    for cell in cells:
        t = game.tables
        if K.status(np.uint64(a), np.uint64(b), t) != K.ONGOING or not (
            0 <= cell < 64 and int(K.legal_mask(np.uint64(a), np.uint64(b), t)) >> cell & 1
        ):
            raise BookError(f"the book's start cells are not a game: cell {shown(cell)} cannot be played")
        if K.first_to_move(np.uint64(a), np.uint64(b)):
            a |= 1 << cell
        else:
            b |= 1 << cell
    if (first, second) != (a, b) or not (is_int(first) and is_int(second)):
        raise BookError("the book header's start stones are not those of its start cells")


def read_records(inflater, count, game):
    """The records, read and checked a chunk at a time (a damaged book is refused at its first
    bad chunk, before the rest is inflated): keys strictly ascending and positions of the game,
    value codes known, moves 255 or an empty playable cell."""
    playable = np.zeros(256, dtype=bool)
    playable[list(game.cells)] = True
    cell_mask = np.uint64(sum(1 << c for c in game.cells))
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
        lead = np.bitwise_count(a).astype(np.int64) - np.bitwise_count(b).astype(np.int64)
        stray = (a & b != 0) | ((a | b) & ~cell_mask != 0) | ~np.isin(lead, (0, 1))
        bad = {
            "its key is not above the key of the record before it": ~above,
            "it is not a position of the game": stray,
            "its value code is unknown": value > max(CODE_NAMES),
            "its move is not a playable cell": (move != NO_MOVE) & ~playable[move],
            "its move is an occupied cell": (move != NO_MOVE)
            & ((a | b) >> np.minimum(move, 63).astype(np.uint64) & np.uint64(1) != 0),
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
    previous = b""
    for i in range(count):
        head = inflater.read(CERT_HEAD, f"certificate {i}")
        key, kind, n = head[:16], head[16], int.from_bytes(head[17:19], "big")
        used += CERT_HEAD + n
        if used > declared:
            raise BookError(f"the book is damaged: certificate {i} runs past the header's certificate_bytes")
        payload = inflater.read(n, f"certificate {i}")
        if key <= previous:
            raise BookError(f"the book is damaged: certificate {i}: its key is not above the one before it")
        previous = key
        a, b = int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")
        row = book.index(a, b)
        if row is None:
            raise BookError(f"the book is damaged: certificate {i}: its position has no record")
        value = CODE_NAMES[int(book.records["value"][row])]
        problem = certificate_problem(book.game, a, b, kind, payload, value)
        if problem:
            raise BookError(f"the book is damaged: certificate {i}: {problem}")
        book.certificates[key] = Certificate(kind, payload)
    if used != declared:
        raise BookError(f"the book is damaged: its certificates take {used} bytes, not {declared}")


def certificate_problem(game, a, b, kind, payload, value):
    """What is structurally wrong with a certificate at the canonical position (a, b) whose
    record has the value ``value``, or None. Whether it proves anything is the verifier's
    business."""
    if kind in RESERVED_KINDS:
        return f"kind {kind} is reserved ({RESERVED_KINDS[kind]}) and not defined yet"
    if kind != PAIRING:
        return f"kind {kind} is unknown"
    if game.gravity:
        return "a pairing certificate in a game with gravity"
    if len(payload) % 2 != 1 or payload[0] not in (1, 2):
        return "a pairing payload is a defender (1 or 2) and pairs of cells"
    cells = payload[1:]
    if any(c not in game.cells or (a | b) >> c & 1 for c in cells):
        return "a paired cell is not an empty playable cell"
    if len(set(cells)) != len(cells):
        return "a cell occurs twice in its pairs"
    lo, hi = INTERVAL_OF[value]
    proven_lo, proven_hi = INTERVAL_OF["first-wont-win" if payload[0] == 2 else "second-wont-win"]
    if lo < proven_lo or hi > proven_hi:
        return f"its record's value {value} does not include what a pairing for player {payload[0]} proves"
    return None


def start_position(book):
    start = book.header.get("start") or {}
    return int(start.get("first", 0)), int(start.get("second", 0))


def known_interval(book, a, b, lookahead=1):
    """What the book tells about the position (a, b): its record's value intersected with what
    its children's records give (``lookahead`` plies deep), as an interval."""
    t = book.game.tables
    state = K.status(np.uint64(a), np.uint64(b), t)
    if state != K.ONGOING:
        return STATUS_INTERVAL[state]
    _, name = book.lookup(a, b)
    lo, hi = INTERVAL_OF[name] if name is not None else (0, 2)
    if lookahead > 0:
        n, moves, _, _, _ = K.children(np.uint64(a), np.uint64(b), t, False)
        kids = [known_interval(book, *K.play(np.uint64(a), np.uint64(b), m), lookahead - 1) for m in moves[:n]]
        pick = max if K.first_to_move(np.uint64(a), np.uint64(b)) else min
        lo, hi = max(lo, pick(k[0] for k in kids)), min(hi, pick(k[1] for k in kids))
    if lo > hi:
        raise BookError(f"the book's values contradict each other at {position_text(book.game, a, b)}")
    return lo, hi


def move_values(book, a, b):
    """[(cell, value name)] for every legal move at (a, b), as far as the book knows."""
    t = book.game.tables
    legal = int(K.legal_mask(np.uint64(a), np.uint64(b), t))
    out = []
    for cell in book.game.order:
        if legal >> cell & 1:
            ca, cb = K.play(np.uint64(a), np.uint64(b), cell)
            out.append((cell, VALUE_NAMES[known_interval(book, int(ca), int(cb))]))
    return out


def book_reply(book, a, b):
    """The book's move at (a, b): its strategy move when it has one, else one of the moves it
    knows best for the player to move (at random among equals, so that games vary)."""
    move, _ = book.lookup(a, b)
    if move is not None:
        return move
    options = [(cell, INTERVAL_OF[value]) for cell, value in move_values(book, a, b)]
    pick = max if K.first_to_move(np.uint64(a), np.uint64(b)) else min
    target = pick(interval for _, interval in options)
    return random.choice([cell for cell, interval in options if interval == target])
