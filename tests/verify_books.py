"""An independent writer of solution books, for the tests of tools/verify.py.

Why it exists: the verifier is there so that nobody has to trust pndb's solver, so its tests must
not depend on that solver either.  Everything here is written from docs/book-format.md and the
rules alone: a plain memoised minimax over bitboards, strategies extracted from its values,
canonical keys computed with naive loops, pairing certificates found by brute force, Connect Four
rule sets (Claimevens, Baseinverses and Verticals, with or without a threat) found by
backtracking, and the byte layout of format versions 1 and 2.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import zstandard

FIRST, DRAW, SECOND = "first-wins", "draw", "second-wins"
CODE = {FIRST: 1, SECOND: 2, DRAW: 3}
RANK = {SECOND: 0, DRAW: 1, FIRST: 2}


# --------------------------------------------------------------------------------------------
# An independent game model and solver
# --------------------------------------------------------------------------------------------


def grid_symmetries(w, h, keep=None):
    """The symmetries of the w x h rectangle (4) or square (8) as cell permutations."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (h - 1 - r, c),
        lambda r, c: (r, w - 1 - c),
        lambda r, c: (h - 1 - r, w - 1 - c),
    ]
    if w == h:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (w - 1 - c, r),
            lambda r, c: (c, h - 1 - r),
            lambda r, c: (w - 1 - c, h - 1 - r),
        ]
    perms = []
    for f in maps:
        p = [0] * (w * h)
        for r in range(h):
            for c in range(w):
                r2, c2 = f(r, c)
                p[r * w + c] = r2 * w + c2
        if keep is None or keep(p):
            perms.append(p)
    return perms


def k_in_a_row(w, h, k):
    pats = []
    for r in range(h):
        for c in range(w):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= a < h and 0 <= b < w for a, b in cells):
                    pats.append([a * w + b for a, b in cells])
    return pats


class Game:
    """A placement game as the test sees it (rules data + naive move generation)."""

    def __init__(
        self, game, width, height, patterns, symmetries, forbidden=(), cap=None, gravity=False, cells=None
    ):
        self.game, self.width, self.height = game, width, height
        self.n = width * height
        self.cells = list(range(self.n)) if cells is None else list(cells)
        self.patterns = [list(p) for p in patterns]
        self.masks = [sum(1 << c for c in p) for p in self.patterns]
        self.symmetries = symmetries
        self.forbidden = set(forbidden)
        self.cap = cap
        self.gravity = gravity

    def rules_json(self):
        """A fresh copy each time: tests patch headers in place."""
        return json.loads(
            json.dumps(
                {
                    "name": self.game,
                    "width": self.width,
                    "height": self.height,
                    "cells": self.cells,
                    "win_patterns": self.patterns,
                    "symmetries": self.symmetries,
                    "first_move_forbidden": sorted(self.forbidden),
                    "disc_cap": self.cap,
                    "gravity": self.gravity,
                    "move_order": None,
                }
            )
        )

    def moves(self, f, s):
        occ = f | s
        if self.gravity:
            out = []
            for col in range(self.width):
                for r in range(self.height - 1, -1, -1):
                    c = r * self.width + col
                    if c in self.cells and not occ >> c & 1:
                        out.append(c)
                        break
        else:
            out = [c for c in self.cells if not occ >> c & 1]
        if occ == 0:
            out = [c for c in out if c not in self.forbidden]
        return out

    def result(self, f, s):
        for m in self.masks:
            if f & m == m:
                return FIRST
            if s & m == m:
                return SECOND
        if self.cap is not None and bin(f | s).count("1") >= self.cap:
            return DRAW
        if not self.moves(f, s):
            return DRAW
        return None

    def play(self, f, s, c):
        return (f | 1 << c, s) if bin(f).count("1") == bin(s).count("1") else (f, s | 1 << c)

    def canonical(self, f, s):
        """Naive canonical key: the smallest (image(first), image(second)) and its symmetry."""
        best = None
        for p in self.symmetries:
            fi = sum(1 << p[i] for i in range(self.n) if f >> i & 1)
            si = sum(1 << p[i] for i in range(self.n) if s >> i & 1)
            if best is None or (fi, si) < best[0]:
                best = ((fi, si), p)
        return best

    def name(self, c):
        if self.gravity:
            return str(c % self.width + 1)
        return "abcdefghijklmnopqrstuvwxyz"[c % self.width] + str(c // self.width + 1)


def solve(g: Game):
    """Plain memoised minimax: value(f, s) for every reachable position."""
    memo = {}

    def value(f, s):
        key = (f, s)
        v = memo.get(key)
        if v is None:
            v = g.result(f, s)
            if v is None:
                first = bin(f).count("1") == bin(s).count("1")
                vals = [RANK[value(*g.play(f, s, c))] for c in g.moves(f, s)]
                v = [SECOND, DRAW, FIRST][max(vals) if first else min(vals)]
            memo[key] = v
        return v

    return value


def best_move(g: Game, value, f, s, owner):
    """The owner's best move by minimax value (ties: the lowest cell)."""
    return sorted(g.moves(f, s), key=lambda c: RANK[value(*g.play(f, s, c))], reverse=owner == 0)[0]


def build_records(g: Game, value, start=(0, 0)):
    """The records a complete book of the start value needs: each strategy walked from the start
    (the owner's best move, every reply of the opponent), one record per canonical key."""
    v0 = value(*start)
    plans = {FIRST: [(0, 2)], SECOND: [(1, 0)], DRAW: [(0, 1), (1, 1)]}[v0]
    recs = {}
    for owner, thr in plans:
        strategy_records(g, value, start, owner, thr, recs)
    return v0, recs


def strategy_records(g: Game, value, start, owner, thr, recs):
    """Add to ``recs`` the records of one player's strategy (forcing at least ``thr`` for the
    first player, at most for the second; outcome ranks as in RANK) walked from the start."""
    seen, stack = set(), [start]
    while stack:
        f, s = stack.pop()
        if (f, s) in seen or g.result(f, s) is not None:
            continue
        seen.add((f, s))
        mover = 0 if bin(f).count("1") == bin(s).count("1") else 1
        kids = g.moves(f, s)
        if mover == owner:
            c = best_move(g, value, f, s, owner)
            r = RANK[value(*g.play(f, s, c))]
            assert (r >= thr) if owner == 0 else (r <= thr)
            key, p = g.canonical(f, s)
            recs.setdefault(key, (p[c], CODE[value(f, s)]))
            kids = [c]
        for c in kids:
            stack.append(g.play(f, s, c))
    return recs


def certificate_entry(key, kind: int, payload: bytes) -> bytes:
    """One certificate as book-format.md lays it out: key, kind, payload length, payload."""
    return struct.pack(">QQBH", key[0], key[1], kind, len(payload)) + payload


def certificate_entries(certs) -> list[bytes]:
    """The certificate table of ``certs`` ({key: (kind, payload)}), sorted by key."""
    return [certificate_entry(k, kind, payload) for k, (kind, payload) in sorted(certs.items())]


def book_bytes(
    g: Game, value, recs, *, certs=None, cert_entries=None, start_cells=(), header_patch=None, partial=False
):
    """Serialise a book exactly as docs/book-format.md lays it out: format version 1, or version
    2 when certificates are given, as ``certs`` ({key: (kind, payload)}) or as ``cert_entries``,
    the table's entries verbatim in file order (for tampering with its structure)."""
    if cert_entries is None and certs is not None:
        cert_entries = certificate_entries(certs)
    version = 1 if cert_entries is None else 2
    f = s = 0
    for i, c in enumerate(start_cells):
        if i % 2 == 0:
            f |= 1 << c
        else:
            s |= 1 << c
    header = {
        "format": "pndb-book",
        "format_version": version,
        "pndb_version": "test",
        "game": g.game,
        "rules": g.rules_json(),
        "start": {
            "moves": "".join(g.name(c) for c in start_cells),
            "cells": list(start_cells),
            "first": f,
            "second": s,
        },
        "value": value,
        "partial": partial,
        "records": len(recs),
        "record_size": 18,
    }
    if version == 2:
        header["certificates"] = len(cert_entries)
        header["certificate_bytes"] = sum(len(e) for e in cert_entries)
    if header_patch:
        header_patch(header)
    hj = json.dumps(header).encode()
    body = b"".join(struct.pack(">QQBB", kf, ks, m, v) for (kf, ks), (m, v) in sorted(recs.items()))
    magic = b"PNBOOK\x00\x01" if version == 1 else b"PNBOOK\x00\x02"
    return magic + struct.pack(">I", len(hj)) + hj + body + b"".join(cert_entries or ())


def compress(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def write(tmp_path, name, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(compress(data))
    return p


def replay(g: Game, cells):
    f = s = 0
    for c in cells:
        assert c in g.moves(f, s), f"reported line is not legal play at {g.name(c)}"
        f, s = g.play(f, s, c)
    return f, s


# --------------------------------------------------------------------------------------------
# Games and books
# --------------------------------------------------------------------------------------------


def mnk(m, n, k):
    return Game(f"mnk:{m},{n},{k}", m, n, k_in_a_row(m, n, k), grid_symmetries(m, n))


def connect4(w, h):
    mirror = [
        [r * w + c for r in range(h) for c in range(w)],
        [r * w + (w - 1 - c) for r in range(h) for c in range(w)],
    ]
    return Game(f"connect4:{w}x{h}", w, h, k_in_a_row(w, h, 4), mirror, gravity=True)


class Solved:
    def __init__(self, g, start_cells=()):
        self.g = g
        self.value_fn = solve(g)
        self.start_cells = tuple(start_cells)
        self.start = replay(g, start_cells)
        self.value, self.recs = build_records(g, self.value_fn, self.start)

    def bytes(self, recs=None, **kw):
        return book_bytes(
            self.g,
            kw.pop("value", self.value),
            self.recs if recs is None else recs,
            start_cells=self.start_cells,
            **kw,
        )


# --------------------------------------------------------------------------------------------
# Pairing certificates (format version 2)
# --------------------------------------------------------------------------------------------

KIND_PAIRING = 1
NO_MOVE = 255
# value code -> (low, high) outcome ranks, as in book-format.md
INTERVAL = {0: (0, 2), 1: (2, 2), 2: (0, 0), 3: (1, 1), 4: (0, 1), 5: (1, 2)}
CODE_OF_INTERVAL = {v: k for k, v in INTERVAL.items()}


def meet(a: int, b: int) -> int:
    """The value code that states both codes (they must not contradict)."""
    lo, hi = max(INTERVAL[a][0], INTERVAL[b][0]), min(INTERVAL[a][1], INTERVAL[b][1])
    assert lo <= hi, f"value codes {a} and {b} contradict"
    return CODE_OF_INTERVAL[(lo, hi)]


def uncovered_patterns(g: Game, f, s, defender, pairs):
    """The win patterns with no stone of the defender that hold no whole pair (book-format.md,
    "Kind 1: pairing", rule 3); empty when the pairs cover every pattern."""
    mine = f if defender == 1 else s
    masks = [(1 << x) | (1 << y) for x, y in pairs]
    return [p for p, m in zip(g.patterns, g.masks) if not m & mine and not any(m & pm == pm for pm in masks)]


def find_pairing(g: Game, f, s, defender):
    """A pairing for the defender at (f, s), found by brute force, or None: disjoint pairs of
    empty playable cells such that every pattern free of the defender's stones holds a pair.
    Backtracking on the uncovered pattern with the fewest candidate pairs."""
    if g.gravity:
        return None
    occ = f | s
    empty = [c for c in g.cells if not occ >> c & 1]

    def extend(pairs, used):
        todo = uncovered_patterns(g, f, s, defender, pairs)
        if not todo:
            return pairs
        best = None
        for p in todo:
            free = [c for c in p if c in empty and c not in used]
            cands = [(x, y) for i, x in enumerate(free) for y in free[i + 1 :]]
            if best is None or len(cands) < len(best):
                best = cands
        for x, y in best:
            found = extend(pairs + [(x, y)], used | {x, y})
            if found is not None:
                return found
        return None

    return extend([], frozenset())


def pairing_payload(defender, pairs) -> bytes:
    return bytes([defender] + [c for pair in pairs for c in pair])


def payload_pairing(payload: bytes):
    """(defender, pairs) of a kind 1 payload."""
    return payload[0], list(zip(payload[1::2], payload[2::2]))


def pairing_certificate(g: Game, f, s, owner):
    """``find`` of :func:`build_certified` for kind 1: a pairing with ``owner`` defending."""
    pairs = find_pairing(g, f, s, owner + 1)
    return None if pairs is None else (KIND_PAIRING, pairing_payload(owner + 1, pairs))


def build_certified(g: Game, start, move_for, bound_for, find=pairing_certificate):
    """Records and certificates of a draw book: each player's drawing strategy walked from the
    start.  Where ``find(g, f, s, owner)`` gives a certificate for the strategy's owner on the
    canonical position (a pairing with the owner defending, or a Connect Four rule set with the
    owner as controller: either payload starts with owner + 1), the position gets the
    certificate and a record without a move, and the line ends; elsewhere the owner plays
    ``move_for(f, s, owner)``.  ``bound_for(f, s, owner)`` is the value code the strategy
    proves there; a record holds the meet of the codes of the strategies that reach it.

    Positions are visited once per canonical key, as the verifier walks, so every certificate
    written is one the verifier reaches (a tampered one cannot hide off its walk)."""
    recs, certs = {}, {}

    def record(key, move, code):
        m0, c0 = recs.get(key, (NO_MOVE, 0))
        recs[key] = (m0 if m0 != NO_MOVE else move, meet(c0, code))

    for owner in (0, 1):
        defender = owner + 1
        seen, stack = set(), [start]
        while stack:
            f, s = stack.pop()
            if g.result(f, s) is not None:
                continue
            key, p = g.canonical(f, s)
            if key in seen:
                continue
            seen.add(key)
            if key not in certs:
                found = find(g, key[0], key[1], owner)
                if found is not None:
                    certs[key] = found
            if key in certs and certs[key][1][0] == defender:
                record(key, NO_MOVE, bound_for(f, s, owner))
                continue
            mover = 0 if bin(f).count("1") == bin(s).count("1") else 1
            kids = g.moves(f, s)
            if mover == owner:
                c = move_for(f, s, owner)
                record(key, p[c], bound_for(f, s, owner))
                kids = [c]
            elif key in recs:
                record(key, NO_MOVE, bound_for(f, s, owner))
            stack.extend(g.play(f, s, c) for c in kids)
    return recs, certs


def pairing_strategy(g: Game, max_depth: int):
    """``move_for`` of drawing strategies that head for pairings: a depth-limited AND-OR search
    whose leaves are positions where the owner has a pairing as defender, or games that ended
    no worse than a draw for the owner.  Needs no solver, so it works on boards minimax cannot
    finish in a test."""
    memo = {}  # (canonical key, owner) -> True, or the largest depth known not to be enough

    def ok(f, s, owner, depth):
        r = g.result(f, s)
        if r is not None:
            return r == DRAW or r == (FIRST if owner == 0 else SECOND)
        key = (g.canonical(f, s)[0], owner)
        known = memo.get(key, -1)
        if known is True or known >= depth:
            return known is True
        good = find_pairing(g, f, s, owner + 1) is not None
        if not good and depth > 0:
            kids = (g.play(f, s, c) for c in g.moves(f, s))
            mover = 0 if bin(f).count("1") == bin(s).count("1") else 1
            test = any if mover == owner else all
            good = test(ok(cf, cs, owner, depth - 1) for cf, cs in kids)
        memo[key] = True if good else depth
        return good

    def move_for(f, s, owner):
        for depth in range(max_depth):
            for c in g.moves(f, s):
                if ok(*g.play(f, s, c), owner, depth):
                    return c
        raise AssertionError(f"no move reaches a pairing within {max_depth} plies")

    return move_for


class Certified:
    """A draw book with pairing certificates: ``recs`` {key: (move, code)}, ``certs`` {key:
    (kind, payload)}."""

    def __init__(self, g: Game, move_for, bound_for, find=pairing_certificate):
        self.g = g
        self.recs, self.certs = build_certified(g, (0, 0), move_for, bound_for, find)

    def bytes(self, recs=None, certs=None, **kw):
        return book_bytes(
            self.g,
            kw.pop("value", DRAW),
            self.recs if recs is None else recs,
            certs=self.certs if certs is None else certs,
            **kw,
        )


def certified_by_minimax(g: Game, find=pairing_certificate) -> Certified:
    """Minimax strategies, cut short by certificates; record codes are the exact values."""
    value = solve(g)
    return Certified(
        g, lambda f, s, owner: best_move(g, value, f, s, owner), lambda f, s, owner: CODE[value(f, s)], find
    )


def certified_by_search(g: Game, max_depth: int) -> Certified:
    """Strategies that head for pairings (no solver); each record's code is what the strategies
    that reach it prove: at least a draw (5) for the first player's, at most (4) for the
    second's, a draw (3) where both meet."""
    return Certified(g, pairing_strategy(g, max_depth), lambda f, s, owner: 5 if owner == 0 else 4)


# --------------------------------------------------------------------------------------------
# Connect Four rule-set certificates (kind 2)
# --------------------------------------------------------------------------------------------

KIND_CONNECT4 = 2
CLAIMEVEN, BASEINVERSE, VERTICAL, AFTEREVEN, LOWINVERSE, HIGHINVERSE, BASECLAIM, BEFORE = range(1, 9)
NO_THREAT = 255


def connect4_payload(controller, threat, instances, combination=()) -> bytes:
    """A kind 2 payload: C, T (then X and L, the ``combination``, when T = 254), k, then each
    instance as (rule code, m, its m cells)."""
    out = [controller, threat, *combination, len(instances)]
    for code, cells in instances:
        out += [code, len(cells), *cells]
    return bytes(out)


def payload_instances(payload: bytes):
    """(controller, threat, [(code, cells), ...]) of a kind 2 payload without a threat
    combination (T != 254)."""
    assert payload[1] != 254
    out, pos = [], 3
    for _ in range(payload[2]):
        m = payload[pos + 1]
        out.append((payload[pos], tuple(payload[pos + 2 : pos + 2 + m])))
        pos += 2 + m
    return payload[0], payload[1], out


def connect4_threats(g: Game, f, s):
    """The cells the player not to move may use as a threat (book-format.md, "Kind 2",
    condition 3): vacant, not in the bottom row, the cell below vacant, in a row (from the top)
    of the parity of the vacant count, completing a group with three of that player's stones."""
    w, n = g.width, g.n
    occ = f | s
    nvac = n - bin(occ).count("1")
    mine = s if bin(f).count("1") == bin(s).count("1") else f
    out = []
    for t in range(n - w):
        if occ >> t & 1 or occ >> (t + w) & 1 or (t // w) % 2 != nvac % 2:
            continue
        if any(m >> t & 1 and (m & ~(1 << t)) & mine == m & ~(1 << t) for m in g.masks):
            out.append(t)
    return out


def find_connect4_certificate(g: Game, f, s, threat=NO_THREAT):
    """Claimevens, Baseinverses and Verticals (rules 1 to 3 of "Kind 2") that solve every problem
    at (f, s) for the player not to move, found by backtracking (disjoint squares make them
    compatible), or None.  Region, parity and problems are computed here from the definition,
    independently of tools/verify.py."""
    w, n = g.width, g.n
    occ = f | s
    nvac = n - bin(occ).count("1")
    mover = 0 if bin(f).count("1") == bin(s).count("1") else 1
    mine = s if mover == 0 else f
    if nvac == 0 or any(f & m == m or s & m == m for m in g.masks):
        return None
    if threat == NO_THREAT and nvac % 2:
        return None
    region = {c for c in range(n) if not occ >> c & 1}
    top = [0] * w
    dead = 0
    if threat != NO_THREAT:
        tc, tr = threat % w, threat // w
        region -= {r * w + tc for r in range(tr + 2)}
        top[tc] = tr + 2
        dead = sum(1 << (r * w + tc) for r in range(tr + 1))

    def even(c):
        return (c // w - top[c % w]) % 2 == 0

    def playable(c):
        return c in region and (c + w >= n or occ >> (c + w) & 1)

    cands = []  # (code, cells, squares, cells a problem must hold to be solved)
    for c in sorted(region):
        if c + w < n and c + w in region:
            if even(c):
                cands.append((CLAIMEVEN, (c + w, c), 1 << c | 1 << (c + w), 1 << c))
            else:
                cands.append((VERTICAL, (c + w, c), 1 << c | 1 << (c + w), 1 << c | 1 << (c + w)))
    base = [c for c in range(n) if playable(c)]
    for i, x in enumerate(base):
        for y in base[i + 1 :]:
            cands.append((BASEINVERSE, (x, y), 1 << x | 1 << y, 1 << x | 1 << y))
    problems = [m for m in g.masks if not m & mine and not m & dead]

    def extend(chosen, used):
        todo = [p for p in problems if not any(p & c[3] == c[3] for c in chosen)]
        if not todo:
            return chosen
        best = None
        for p in todo:
            opts = [c for c in cands if p & c[3] == c[3] and not c[2] & used]
            if best is None or len(opts) < len(best):
                best = opts
        for c in best:
            found = extend(chosen + [c], used | c[2])
            if found is not None:
                return found
        return None

    found = extend([], 0)
    if found is None:
        return None
    return connect4_payload(2 - mover, threat, [(c[0], c[1]) for c in found])


def connect4_certificate(g: Game, f, s, owner):
    """``find`` of :func:`build_certified` for kind 2: a certificate for ``owner`` as controller
    (no threat), or None."""
    if (0 if bin(f).count("1") == bin(s).count("1") else 1) == owner:
        return None
    payload = find_connect4_certificate(g, f, s)
    return None if payload is None else (KIND_CONNECT4, payload)
