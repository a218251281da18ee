"""What the game families share of the game-family interface (docs/architecture.md): the named
types its methods return, 16-byte keys as arrays of two uint64 halves (the layout of a book's
records, and what the batched methods take), and those batched methods written position by
position (:class:`PerPosition`) for a family without kernels for them.
"""

from typing import NamedTuple

import numpy as np


class Canonical(NamedTuple):
    """A position's canonical key and the index of a symmetry that maps the position onto it."""

    key: bytes
    symmetry: int


class Children(NamedTuple):
    """The children of an ongoing position, in move order, one per symmetry class: canonical
    keys, the moves (of the parent's orientation) and each child's status."""

    keys: list
    moves: list
    statuses: list


class Summary(NamedTuple):
    board: str
    cells: int
    symmetries: int
    patterns: int
    rules: list


def is_int(value):
    """A JSON integer: true/false and 3.0 are not (Python's bool is an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def key_bytes(a, b):
    """The 16-byte key of two key halves (big-endian: key order is the halves' numeric order)."""
    return int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big")


def keys_from_arrays(ka, kb):
    """16-byte keys from arrays of key halves."""
    raw = np.stack([ka, kb], axis=1).astype(">u8").tobytes()
    return [raw[16 * i : 16 * i + 16] for i in range(len(ka))]


def arrays_from_keys(keys):
    """The key halves of 16-byte keys, as two uint64 arrays: keys_from_arrays undone."""
    halves = np.frombuffer(b"".join(keys), ">u8").reshape(-1, 2).astype(np.uint64)
    return halves[:, 0].copy(), halves[:, 1].copy()


class PerPosition:
    """The batched methods of the game-family interface (what the book's walk calls: a depth's
    positions at once, as arrays of key halves), one position at a time through ``position``,
    ``children``, ``play``, ``key``, ``status``, ``first_to_move`` and ``legal_moves``: for a
    family whose positions are few enough, or whose kernels do not batch them."""

    def positions_of(self, a, b):
        return [self.position(k) for k in keys_from_arrays(a, b)]

    def first_to_move_of_many(self, a, b):
        """first_to_move of many canonical keys (arrays of key halves), as a bool array."""
        return np.array([self.first_to_move(p) for p in self.positions_of(a, b)], bool)

    def children_of_many(self, a, b):
        """(counts, moves, key_a, key_b, statuses) of the ongoing positions of many canonical
        keys: row i holds the counts[i] children of position i in move order (as ``children``
        gives them), the rest of the row unused."""
        kids = [self.children(p) for p in self.positions_of(a, b)]
        width = max([len(k.keys) for k in kids], default=0)
        counts = np.array([len(k.keys) for k in kids], np.int64)
        moves = np.zeros((len(kids), width), np.int64)
        ka, kb = np.zeros((len(kids), width), np.uint64), np.zeros((len(kids), width), np.uint64)
        statuses = np.zeros((len(kids), width), np.int64)
        for i, k in enumerate(kids):
            n = len(k.keys)
            if n:
                moves[i, :n] = k.moves
                ka[i, :n], kb[i, :n] = arrays_from_keys(k.keys)
                statuses[i, :n] = k.statuses
        return counts, moves, ka, kb, statuses

    def after_moves(self, a, b, moves):
        """(key_a, key_b, statuses) of the positions of many canonical keys after one move each
        (in the key's orientation)."""
        after = [self.play(p, int(m)) for p, m in zip(self.positions_of(a, b), np.asarray(moves).tolist())]
        ka, kb = arrays_from_keys([self.key(p) for p in after]) if after else (np.empty(0, np.uint64),) * 2
        return ka, kb, np.array([self.status(p) for p in after], np.int64)

    def illegal_of_many(self, a, b, moves):
        """Where each of ``moves`` is not a legal move at the position of its canonical key (a
        damaged proof record's move), as a bool array."""
        pairs = zip(self.positions_of(a, b), np.asarray(moves).tolist())
        return np.array([m not in self.legal_moves(p) for p, m in pairs], bool)

    def certificates_hold_of_many(self, a, b, certs):
        """Where each of ``certs`` holds at the position of its canonical key (arrays of key
        halves), as a bool array: certificate_holds of each."""
        pairs = zip(self.positions_of(a, b), certs)
        return np.array([self.certificate_holds(p, c) for p, c in pairs], bool)
