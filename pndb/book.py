"""The solution book: writing it from a solved database, reading it, looking positions up.

The format is docs/book-format.md: one zstandard frame holding a magic, a JSON header (the rules,
the start position, the value) and sorted 18-byte records (canonical key, move in the key's
orientation, value code). ``export_book`` walks each strategy the value needs from the start:
the owner's move at owner-to-move positions (from the proof table of the inner solver, else from
a stored child that is good enough), every move at the opponent's positions.
"""

import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zstandard

from pndb import __version__
from pndb.games import game_from_rules
from pndb.values import GAME_OVER, NO_MOVE, Fact, Status, Value, good_for, status_value

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
# value -> the strategies that prove it; the owner is the first player when proven
STRATEGIES = {
    Value.FIRST_WINS: [Fact(0, True)],
    Value.SECOND_WINS: [Fact(1, False)],
    Value.DRAW: [Fact(1, True), Fact(0, False)],
    Value.FIRST_WONT_WIN: [Fact(0, False)],
    Value.SECOND_WONT_WIN: [Fact(1, True)],
    Value.UNKNOWN: [],
}


class BookError(ValueError):
    """A file that is not a readable book, or a book that cannot be written; one line."""


class ExportError(RuntimeError):
    """The database does not hold what a complete book needs."""


# ---------------------------------------------------------------- writing


def export_book(store, game, out_path, partial=False):
    """Write the book of the store's start position; returns the header written."""
    with store.view(game) as view:
        start = view.meta("start")
        root_hex = view.meta("root")
        root_rec = view.node(bytes.fromhex(root_hex)) if root_hex else None
        if root_rec is None:
            raise ExportError("the database has no solve yet; run `pndb solve` first")
        value = root_rec.value
        if not value.exact and not partial:
            raise ExportError(
                f"not solved yet (known so far: {value.name}); solve on, or export with --partial"
            )
        walker = StrategyWalker(view)
        records = {}
        for fact in STRATEGIES[value]:
            records.update(walker.strategy(bytes.fromhex(root_hex), fact))
    header = {
        "format": "pndb-book",
        "format_version": FORMAT_VERSION,
        "pndb_version": __version__,
        "game": game.spec,
        "rules": game.rules_data(),
        "start": start,
        "value": value.name,
        "partial": bool(partial),
        "records": len(records),
        "record_size": RECORD.itemsize,
    }
    write_book(out_path, header, records)
    return header


@dataclass
class StrategyWalker:
    """Follows one player's strategy through a read view of the DAG and its proof table."""

    view: object  # a store.ReadView with the game

    def interval(self, key):
        """What the database proved about a position: node record and proof record together."""
        lo, hi = 0, 2
        for rec in (self.view.node(key), self.view.proof(key)):
            if rec is not None:
                lo, hi = max(lo, rec.lo), min(hi, rec.hi)
        return lo, hi

    def owner_move(self, key, fact, children):
        """The strategy owner's move at ``key``: from the proof table, else a good stored child."""
        proof = self.view.proof(key)
        move = proof.strategy_move(fact) if proof is not None else None
        if move is not None:
            return move
        for k, m, st in zip(*children):
            v = self.interval(k) if st == Status.ONGOING else (status_value(st).lo, status_value(st).hi)
            if good_for(*v, fact):
                return m
        return None

    def strategy(self, root, fact):
        """key -> (move, value code) at every owner-to-move position of the strategy."""
        game = self.view.game
        records = {}
        seen = set()
        stack = [root]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            pos = game.position(key)
            if game.status(pos) != Status.ONGOING:
                continue
            children = game.children(pos)
            keys, moves, statuses = children
            if game.first_to_move(pos) == fact.proven:
                move = self.owner_move(key, fact, children)
                if move is None:
                    raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                records[key] = (move, VALUE_CODES[Value.of(*self.interval(key))])
                i = moves.index(move)
                if statuses[i] not in GAME_OVER:
                    stack.append(keys[i])
            else:
                stack.extend(k for k, st in zip(keys, statuses) if st not in GAME_OVER)
        return records


def write_book(path, header, records):
    """Write header and records (key -> (move, value code)) as a book file."""
    arr = np.empty(len(records), RECORD)
    for i, (key, (move, code)) in enumerate(sorted(records.items())):
        arr[i] = (int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big"), move, code)
    head = json.dumps(header, sort_keys=True).encode()
    raw = MAGIC + len(head).to_bytes(4, "big") + head + arr.tobytes()
    data = zstandard.ZstdCompressor(level=10, write_checksum=True).compress(raw)
    write_atomically(Path(path), data)


def write_atomically(path, data):
    """Write ``data`` to ``path`` so that a crash or a full disk leaves the old file or the whole
    new one: a unique temporary file beside it, fsynced, then renamed over it."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise BookError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise BookError(f"cannot write {path}: {e.strerror}") from None


# ---------------------------------------------------------------- reading


@dataclass
class Book:
    header: dict
    records: np.ndarray  # RECORD, sorted by key
    game: object

    @property
    def value(self):
        return Value.named(self.header["value"])

    def lookup(self, pos):
        """(move on the board as it stands or None, Value or None) for the position ``pos``."""
        key, symmetry = self.game.canonical(pos)
        ka, kb = int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")
        lo = np.searchsorted(self.records["a"], ka, "left")
        hi = np.searchsorted(self.records["a"], ka, "right")
        i = lo + np.searchsorted(self.records["b"][lo:hi], kb, "left")
        if i >= hi or self.records["b"][i] != kb:
            return None, None
        move, code = int(self.records["move"][i]), int(self.records["value"][i])
        move = None if move == NO_MOVE else self.game.move_to_board(symmetry, move)
        return move, CODE_VALUES.get(code)


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


def known_interval(book, pos, lookahead=1):
    """What the book tells about the position: its record's value intersected with what its
    children's records give (``lookahead`` plies deep), as an interval."""
    game = book.game
    state = game.status(pos)
    if state != Status.ONGOING:
        v = status_value(state)
        return v.lo, v.hi
    _, value = book.lookup(pos)
    lo, hi = (value.lo, value.hi) if value is not None else (0, 2)
    if lookahead > 0:
        kids = [known_interval(book, game.play(pos, m), lookahead - 1) for m in game.legal_moves(pos)]
        pick = max if game.first_to_move(pos) else min
        lo, hi = max(lo, pick(k[0] for k in kids)), min(hi, pick(k[1] for k in kids))
    return lo, hi


def move_values(book, pos):
    """[(move, Value)] for every legal move at ``pos``, as far as the book knows."""
    game = book.game
    return [(m, Value.of(*known_interval(book, game.play(pos, m)))) for m in game.legal_moves(pos)]


def book_reply(book, pos):
    """The book's move at ``pos``: its strategy move when it has one, else one of the moves it
    knows best for the player to move (at random among equals, so that games vary)."""
    move, _ = book.lookup(pos)
    if move is not None:
        return move
    options = [(m, (v.lo, v.hi)) for m, v in move_values(book, pos)]
    pick = max if book.game.first_to_move(pos) else min
    target = pick(interval for _, interval in options)
    return random.choice([m for m, interval in options if interval == target])
