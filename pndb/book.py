"""The solution book: writing it from a solved database, reading it, looking positions up.

The format is docs/book-format.md: one zstandard frame holding a magic, a JSON header (the rules,
the start position, the value) and sorted 18-byte records (canonical key, move in the key's
orientation, value code). ``export_book`` walks each strategy the value needs from the start:
the owner's move at owner-to-move positions (from the proof table of the inner solver, else from
a stored child that is good enough), every move at the opponent's positions.
"""

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zstandard

from pndb import __version__
from pndb.games import game_from_rules
from pndb.games import kernels as K
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


@dataclass
class Book:
    header: dict
    records: np.ndarray  # RECORD, sorted by key
    game: object

    @property
    def value(self):
        return self.header["value"]

    def lookup(self, a, b):
        """(move on the board as it stands or None, value name or None) for the position (a, b)."""
        t = self.game.tables
        ka, kb, s = K.canonical(np.uint64(a), np.uint64(b), t.sym_bytes)
        lo = np.searchsorted(self.records["a"], ka, "left")
        hi = np.searchsorted(self.records["a"], ka, "right")
        i = lo + np.searchsorted(self.records["b"][lo:hi], kb, "left")
        if i >= hi or self.records["b"][i] != kb:
            return None, None
        move, code = int(self.records["move"][i]), int(self.records["value"][i])
        if move != NO_MOVE:
            move = self.game.symmetries[s].index(move)  # the cell whose image is the stored move
        else:
            move = None
        return move, CODE_NAMES.get(code)


def read_book(path):
    """Read a book file; BookError with a one-line reason when it is not a readable book."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise BookError(f"cannot read {path}: {e.strerror}") from None
    try:
        raw = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 34)
    except zstandard.ZstdError as e:
        raise BookError(f"{path} is not a pndb book or is damaged ({e})") from None
    if raw[:8] != MAGIC:
        raise BookError(f"{path} is not a pndb book (bad magic)")
    n = int.from_bytes(raw[8:12], "big")
    try:
        header = json.loads(raw[12 : 12 + n])
        count = int(header["records"])
        version = header["format_version"]
        game = game_from_rules(header["rules"], header["game"])
    except Exception as e:  # any malformed header is the same failure for the reader
        raise BookError(f"{path}: the book header is damaged ({type(e).__name__})") from None
    if version != FORMAT_VERSION:
        raise BookError(f"{path}: book format {version}; this pndb reads format {FORMAT_VERSION}")
    body = raw[12 + n :]
    if len(body) != count * RECORD.itemsize:
        raise BookError(f"{path} is truncated or damaged: {len(body)} record bytes for {count} records")
    return Book(header, np.frombuffer(body, RECORD), game)


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
