#!/usr/bin/env python3
"""Standalone verifier of pndb solution books (``.pnbook``).

Why this file exists: a book is pndb's claim that a game has a given value.  Nobody should have to
trust pndb's search code to believe it, so this program re-checks the claim with its own, separate
implementation of everything that matters: the file format (docs/book-format.md), the rules
(docs/game-format.md for the rules data in the header, and the rules of the built-in games written
down in docs/games.md, rebuilt here from that description), the symmetries, the canonical keys, and the
game tree walk.  It deliberately imports nothing from ``pndb``: a bug shared by the solver and the
checker would otherwise go unnoticed.  It uses only the standard library, numpy and zstandard.

Usage::

    python tools/verify.py BOOK [--quiet]

It reads format versions 1 and 2.  In version 2 a position may be decided by a certificate:
kind 1 (pairing) and kind 2 (Connect Four rule sets after Allis) are checked here from the
format's definitions wherever a strategy walk reaches them.  Books of Go (header rules with
``"family": "go"``) are read and walked by tools/verify_go.py, from docs/go.md and
docs/go-book-format.md: every line is replayed from the start with its full history.
Decompression is bounded: the header is read first (at most 16 MiB), then no more than the size
it declares.

Exit codes:

* 0 -- the book proves its value from its start position;
* 1 -- the book is well formed but is not a proof of what it claims: a hole (no record, an
  illegal book move, a line that ends on the wrong side of the value, a record whose value code
  contradicts the claim, an invalid certificate on a line), a partial book, or rules that are
  not those of the named game;
* 2 -- the file is not a readable book: not zstandard / bad magic, no content checksum,
  truncated or corrupt, content longer or shorter than the header declares, malformed header or
  rules data (including a listed "symmetry" that is not one, and more than 1024 symmetries or
  10,000 win patterns listed: the caps of game-format.md), unknown format version, a damaged
  certificate table (order, a key without a record, an unknown kind, a malformed payload).

Tests import it (``sys.path`` insert of ``tools/``) and call :func:`verify_file` or :func:`main`.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import json
import re
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import zstandard

MAGIC_PREFIX = b"PNBOOK"
MAGIC_VERSIONS = {b"\x00\x01": 1, b"\x00\x02": 2}  # the magic's last two bytes -> format version
MAX_HEADER = 16 << 20  # the longest header a reader accepts (book-format.md, "Format version 2")
CHUNK = 1 << 20  # decompression step: one chunk is held at a time while the size is checked
RECORD_SIZE = 18
NO_MOVE = 255
CERT_HEAD = 19  # key (16), kind (1), payload length (2)
KIND_PAIRING, KIND_CONNECT4 = 1, 2
MASK64 = (1 << 64) - 1
# Caps on the rules data, the same as pndb's own (game-format.md, "Limits"): beyond them a hostile
# header is refused at once instead of keeping the verifier busy.
MAX_PATTERNS = 10000  # win_patterns listed
MAX_SYMMETRIES = 1024  # symmetries listed

# Outcomes, ordered as in the book format: second-wins < draw < first-wins.
SECOND_WINS, DRAW, FIRST_WINS = 0, 1, 2
OUTCOME_NAME = {SECOND_WINS: "second-wins", DRAW: "draw", FIRST_WINS: "first-wins"}
CLAIMS = {"first-wins": FIRST_WINS, "second-wins": SECOND_WINS, "draw": DRAW}
PARTIAL_VALUES = {"unknown", "first-wins", "second-wins", "draw", "first-wont-win", "second-wont-win"}
# Record value code -> (low, high) interval of outcomes, and its name.
CODE_INTERVAL = {
    0: (SECOND_WINS, FIRST_WINS),
    1: (FIRST_WINS, FIRST_WINS),
    2: (SECOND_WINS, SECOND_WINS),
    3: (DRAW, DRAW),
    4: (SECOND_WINS, DRAW),
    5: (DRAW, FIRST_WINS),
}
CODE_NAME = {
    0: "unknown",
    1: "first-wins",
    2: "second-wins",
    3: "draw",
    4: "first-wont-win",
    5: "second-wont-win",
}
PLAYER_NAME = ("first player", "second player")

RULE_KEYS = {
    "name",
    "width",
    "height",
    "cells",
    "win_patterns",
    "symmetries",
    "first_move_forbidden",
    "disc_cap",
    "gravity",
    "move_order",
}


class BookError(Exception):
    """The file is not a readable, well-formed book (exit code 2)."""


class NotProven(Exception):
    """The book is well formed but does not prove what it claims (exit code 1)."""


@dataclass
class Report:
    """What :func:`verify_file` found.  ``hole`` is the failing line as cell indices from the
    empty board (start moves included), ``hole_moves`` the same in the game's notation."""

    ok: bool
    exit_code: int
    message: str
    game: str | None = None
    value: str | None = None
    records: int = 0
    positions: int = 0
    seconds: float = 0.0
    hole: list[int] | None = None
    hole_moves: str | None = None
    format_version: int = 1
    certificates: int = 0  # in the book (format version 2)
    certificates_used: int = 0  # times a valid certificate ended a line of a strategy

    @property
    def rate(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def column_letters(col: int) -> str:
    """Column name: a..z, then aa, ab, ... (pndb limits named boards to 26 columns; wider grids
    only occur in ``file:`` games and still need a readable name)."""
    s = ""
    col += 1
    while col:
        col, r = divmod(col - 1, 26)
        s = chr(97 + r) + s
    return s


def _column_index(letters: str) -> int:
    v = 0
    for ch in letters:
        v = v * 26 + (ord(ch) - 96)
    return v - 1


def minimal_patterns(patterns) -> frozenset:
    """Drop duplicates and every pattern that contains another one: such a pattern can never be
    the first one completed, so it does not change the game (pndb drops them too).  Comparing and
    symmetry-checking the minimal sets means redundant patterns can neither cause a spurious
    mismatch nor hide a real one.

    Why bitmasks bucketed by size: a pattern can only contain a smaller one, so each size class is
    tested at once (numpy, in chunks) against the minimal patterns of the smaller sizes; 10,000
    patterns take well under a second instead of the minutes of pairwise set comparisons."""
    uniq = {frozenset(p) for p in patterns}
    by_size: dict[int, list] = {}
    for p in uniq:
        by_size.setdefault(len(p), []).append(p)
    kept: list[frozenset] = []
    kept_masks = np.zeros(0, dtype=np.uint64)
    for size in sorted(by_size):
        group = by_size[size]
        masks = np.array([sum(1 << c for c in p) for p in group], dtype=np.uint64)
        keep = np.ones(len(group), dtype=bool)
        if len(kept_masks):
            step = max(1, (1 << 22) // len(kept_masks))
            for i in range(0, len(group), step):
                part = masks[i : i + step, None]
                keep[i : i + step] = ~((kept_masks[None, :] & ~part) == 0).any(axis=1)
        kept += [p for p, k in zip(group, keep) if k]
        kept_masks = np.concatenate([kept_masks, masks[keep]])
    return frozenset(kept)


class Rules:
    """A placement game's rules in normalised form, built from game-format data.

    Normalisation keeps only what changes play: win patterns are the minimal set of live
    patterns (a pattern on a non-playable cell can never complete), the first-move restriction
    is intersected with the playable cells, and a disc cap at or above the number of cells is
    the same as no cap."""

    def __init__(
        self, width, height, cells, patterns, forbidden, disc_cap, gravity, symmetries, raw_patterns=None
    ):
        self.width = width
        self.height = height
        self.n = width * height
        self.cells = frozenset(cells)
        live = [frozenset(p) for p in patterns if set(p) <= self.cells]
        self.patterns = minimal_patterns(live)
        self.raw_pattern_count = len(raw_patterns if raw_patterns is not None else patterns)
        self.forbidden = frozenset(forbidden) & self.cells
        self.disc_cap = disc_cap if disc_cap is not None and disc_cap < len(self.cells) else None
        self.gravity = bool(gravity)
        self.symmetries = [tuple(p) for p in symmetries]
        # Gravity columns: the playable cells of each column, bottom (highest row) first.
        self.columns = [
            [r * width + c for r in range(height - 1, -1, -1) if r * width + c in self.cells]
            for c in range(width)
        ]

    # --- notation ---------------------------------------------------------------------------
    def cell_name(self, c: int) -> str:
        r, col = divmod(c, self.width)
        return f"{column_letters(col)}{r + 1}"

    def move_name(self, c: int) -> str:
        """A move in the game's notation: a cell name, or the column digit with gravity."""
        if self.gravity:
            return str(c % self.width + 1)
        return self.cell_name(c)

    def line_name(self, cells) -> str:
        if not cells:
            return "(the empty board)"
        if self.gravity and self.width <= 9:
            return "".join(self.move_name(c) for c in cells)
        return " ".join(self.move_name(c) for c in cells)

    def parse_moves(self, text: str) -> list[str]:
        """Split a move string (run together, or separated by spaces or commas) into tokens."""
        if not isinstance(text, str):
            raise BookError("malformed header: start.moves is not a string")
        t = text.strip().lower()
        if self.gravity:
            if self.width <= 9 and re.fullmatch(r"[\d\s,]*", t):
                return [ch for ch in t if ch.isdigit()]
            if re.fullmatch(r"[\d\s,]*", t):
                return [tok for tok in re.split(r"[\s,]+", t) if tok]
        elif re.fullmatch(r"(?:[a-z]+\d+|[\s,])*", t):
            return re.findall(r"[a-z]+\d+", t)
        raise BookError(f"malformed header: start.moves {text!r} is not a move sequence of this game")

    def token_cell(self, token: str, occupied: int) -> int | None:
        """The cell a move token puts a stone on, or None if the token names no playable cell."""
        if self.gravity:
            col = int(token) - 1
            if not 0 <= col < self.width:
                return None
            for c in self.columns[col]:
                if not (occupied >> c) & 1:
                    return c
            return None  # column full: reported as illegal by the caller
        m = re.fullmatch(r"([a-z]+)(\d+)", token)
        col, row = _column_index(m.group(1)), int(m.group(2)) - 1
        if not (0 <= col < self.width and 0 <= row < self.height):
            return None
        return row * self.width + col


def _grid_index_list(obj, where: str, n: int, allow_empty=True) -> list[int]:
    if not isinstance(obj, list) or not all(_is_int(x) for x in obj):
        raise BookError(f"malformed rules: {where} must be a list of cell indices")
    if not allow_empty and not obj:
        raise BookError(f"malformed rules: {where} is empty")
    bad = [x for x in obj if not 0 <= x < n]
    if bad:
        raise BookError(f"malformed rules: {where} has cell {bad[0]} off the {n}-cell grid")
    return obj


def rules_from_json(obj) -> Rules:
    """Parse and validate game-format rules data as found in a book header.

    Every listed symmetry is kept for :func:`check_symmetries`; here only the shape of the data
    is checked.  In a book, ``symmetries`` must be an explicit list (book-format.md)."""
    if not isinstance(obj, dict):
        raise BookError("malformed header: rules is not a JSON object")
    extra = sorted(set(obj) - RULE_KEYS)
    if extra:
        raise BookError(f"malformed rules: unknown key {extra[0]!r}")
    for k in ("width", "height", "win_patterns"):
        if k not in obj:
            raise BookError(f"malformed rules: missing {k!r}")
    w, h = obj["width"], obj["height"]
    if not (_is_int(w) and _is_int(h) and w >= 1 and h >= 1):
        raise BookError("malformed rules: width and height must be positive integers")
    n = w * h
    if n > 64:
        raise BookError(f"malformed rules: {w}x{h} grid has {n} cells, more than 64")
    cells = obj.get("cells")
    cells = list(range(n)) if cells is None else _grid_index_list(cells, "cells", n)
    if len(set(cells)) != len(cells):
        raise BookError("malformed rules: cells lists a cell twice")
    pats = obj["win_patterns"]
    if not isinstance(pats, list):
        raise BookError("malformed rules: win_patterns must be a list of cell lists")
    if len(pats) > MAX_PATTERNS:
        raise BookError(
            f"malformed rules: {len(pats)} win_patterns listed, more than the {MAX_PATTERNS} allowed"
        )
    for i, p in enumerate(pats):
        _grid_index_list(p, f"win_patterns[{i}]", n, allow_empty=False)
    forb = obj.get("first_move_forbidden")
    forb = [] if forb is None else _grid_index_list(forb, "first_move_forbidden", n)
    cap = obj.get("disc_cap")
    if cap is not None and not (_is_int(cap) and cap >= 0):
        raise BookError("malformed rules: disc_cap must be null or a non-negative integer")
    grav = obj.get("gravity", False)
    if grav is None:
        grav = False
    if not isinstance(grav, bool):
        raise BookError("malformed rules: gravity must be true or false")
    mo = obj.get("move_order")
    if mo is not None:
        _grid_index_list(mo, "move_order", n)
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise BookError("malformed rules: name must be a string")
    syms = obj.get("symmetries")
    if not isinstance(syms, list):
        raise BookError(
            "malformed rules: a book's rules.symmetries must be an explicit list of "
            "permutations (found %s)" % json.dumps(syms)
        )
    if not syms:
        raise BookError("malformed rules: symmetries is empty (the identity must be listed)")
    if len(syms) > MAX_SYMMETRIES:
        raise BookError(
            f"malformed rules: {len(syms)} symmetries listed, more than the {MAX_SYMMETRIES} allowed"
        )
    for i, p in enumerate(syms):
        _grid_index_list(p, f"symmetries[{i}]", n)
        if len(p) != n or len(set(p)) != n:
            raise BookError(f"malformed rules: symmetries[{i}] is not a permutation of the {n} grid cells")
    return Rules(w, h, cells, pats, forb, cap, grav, syms)


def check_symmetries(rules: Rules) -> None:
    """Reject any listed permutation that is not a true symmetry of the game, and a list that is
    not a group.

    Why: canonical keys merge every position with its images.  A permutation that does not map
    the cells, the win patterns, the first-move restriction and (with gravity) the columns onto
    themselves would merge positions of different value, and one record would then "prove"
    positions it says nothing about.  The group property makes the canonical key a function of
    the symmetry class, as the format assumes.

    Why generators: the listed permutations are taken in order, and each one not yet generated by
    the earlier ones becomes a generator; only generators are checked against the rules (a
    product of symmetries is one), and the group is regenerated from the identity by composing
    with the generators, every product having to be listed.  Each new generator at least doubles
    the group, so there are at most log2(1024) of them, and the work is |G| times that many
    compositions instead of |G| squared."""
    ident = tuple(range(rules.n))
    seen = {}
    for i, p in enumerate(rules.symmetries):
        if p in seen:
            raise BookError(f"invalid symmetries: symmetries[{i}] repeats symmetries[{seen[p]}]")
        seen[p] = i
    if ident not in seen:
        raise BookError("invalid symmetries: the identity is not listed")
    gens: list[tuple] = []
    group = {ident}
    for i, p in enumerate(rules.symmetries):
        if p in group:
            continue
        check_preserves_rules(rules, p, f"symmetries[{i}] is not a symmetry of the game:")
        gens.append(p)
        group = {ident}
        todo = [ident]
        while todo:
            x = todo.pop()
            for g in gens:
                y = tuple(x[c] for c in g)  # x after g
                if y in group:
                    continue
                if y not in seen:
                    raise BookError(
                        f"invalid symmetries: the list is not a group (symmetries"
                        f"[{seen[x]}] after symmetries[{seen[g]}] is not listed)"
                    )
                group.add(y)
                todo.append(y)


def check_preserves_rules(rules: Rules, p: tuple, what: str) -> None:
    """Raise BookError unless ``p`` maps the cells, the win patterns, the first-move restriction
    and (with gravity) the columns onto themselves; ``what`` starts the message."""
    if frozenset(p[c] for c in rules.cells) != rules.cells:
        c = next(c for c in sorted(rules.cells) if p[c] not in rules.cells)
        raise BookError(
            f"{what} it maps playable cell {rules.cell_name(c)} to "
            f"{rules.cell_name(p[c])}, which is not playable"
        )
    for pat in sorted(rules.patterns, key=sorted):
        img = frozenset(p[c] for c in pat)
        if img not in rules.patterns:
            raise BookError(
                f"{what} it maps win pattern "
                f"{' '.join(rules.cell_name(c) for c in sorted(pat))} to "
                f"{' '.join(rules.cell_name(c) for c in sorted(img))}, "
                f"which is not a win pattern"
            )
    if frozenset(p[c] for c in rules.forbidden) != rules.forbidden:
        c = next(c for c in sorted(rules.forbidden) if p[c] not in rules.forbidden)
        raise BookError(
            f"{what} it maps {rules.cell_name(c)} (forbidden as first stone) to "
            f"{rules.cell_name(p[c])} (allowed)"
        )
    if rules.gravity:
        cols = {tuple(col) for col in rules.columns}
        for ci, col in enumerate(rules.columns):
            img = tuple(p[c] for c in col)
            if img not in cols:
                raise BookError(
                    f"{what} it does not map column {ci + 1} (bottom to top) onto "
                    f"a column, so it does not commute with gravity"
                )


# --- the built-in games, rebuilt from docs/games.md -----------------------------------------


def _lines(width, height, k):
    """All k consecutive cells in a row, column or diagonal (both directions)."""
    out = []
    for r in range(height):
        for c in range(width):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                r2, c2 = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= r2 < height and 0 <= c2 < width:
                    out.append([(r + dr * i) * width + c + dc * i for i in range(k)])
    return out


def _squares(width, height):
    return [
        [r * width + c, r * width + c + 1, (r + 1) * width + c, (r + 1) * width + c + 1]
        for r in range(height - 1)
        for c in range(width - 1)
    ]


QANGO6_AREAS = [
    [0, 1, 6],
    [4, 5, 11],
    [24, 30, 31],
    [29, 34, 35],
    [2, 7, 12],
    [3, 10, 17],
    [18, 25, 32],
    [23, 28, 33],
    [8, 13, 14],
    [9, 15, 16],
    [19, 20, 26],
    [21, 22, 27],
]
QANGO7_AREAS = [
    [0, 1, 7],
    [5, 6, 13],
    [35, 42, 43],
    [41, 47, 48],
    [2, 8, 14],
    [4, 12, 20],
    [28, 36, 44],
    [34, 40, 46],
    [3, 9, 10],
    [11, 18, 19],
    [15, 21, 22],
    [16, 17, 23],
    [25, 31, 32],
    [26, 27, 33],
    [29, 30, 37],
    [38, 39, 45],
]
QANGO7_CORNERS = {0, 1, 7, 5, 6, 13, 35, 42, 43, 41, 47, 48}


def reference_rules(game: str) -> Rules | None:
    """The rules of a built-in game, built from docs/games.md (not from pndb).  None for ``file:``
    games.  Raises NotProven for a name that is neither built in nor ``file:``: the verifier
    cannot vouch for rules it does not know, so it fails closed."""
    ident: list = []  # symmetries are not compared against a fixed list, only validated
    g = game.strip()
    if g.startswith("file:"):
        return None
    if g == "tictactoe":
        g = "mnk:3,3,3"
    if g == "connect4":
        g = "connect4:7x6"
    if g == "qango6:burg":
        g = "qango6:castle"
    m = re.fullmatch(r"mnk:(\d+),(\d+),(\d+)", g)
    if m:
        w, h, k = map(int, m.groups())
        if not (w >= 1 and h >= 1 and w * h <= 64 and k >= 1):
            raise NotProven(f"game {game!r} is not a valid m,n,k-game")
        return Rules(w, h, range(w * h), _lines(w, h, k), [], None, False, ident)
    m = re.fullmatch(r"connect4:(\d+)x(\d+)", g)
    if m:
        w, h = map(int, m.groups())
        if not (w >= 1 and h >= 1 and w * h <= 64):
            raise NotProven(f"game {game!r} is not a valid Connect Four board")
        return Rules(w, h, range(w * h), _lines(w, h, 4), [], None, True, ident)
    if g in ("qango6", "qango6:castle", "qango6:tournament"):
        pats = _lines(6, 6, 5) + _squares(6, 6) + QANGO6_AREAS
        forb = []
        if g == "qango6:castle":
            forb = [7, 10, 14, 15, 20, 21, 25, 28]
        elif g == "qango6:tournament":
            forb = [r * 6 + c for r in range(1, 5) for c in range(1, 5)]
        return Rules(6, 6, range(36), pats, forb, None, False, ident, raw_patterns=pats)
    pats7 = _lines(7, 7, 5) + _squares(7, 7) + QANGO7_AREAS
    if g in ("qango7", "qango7:nocap"):
        return Rules(7, 7, range(49), pats7, [], 40 if g == "qango7" else None, False, ident)
    if g in ("qango7plus", "qango7plus:edges", "qango7plus:tournament"):
        cells = [c for c in range(49) if c not in QANGO7_CORNERS]
        pats = [p for p in pats7 if not set(p) & QANGO7_CORNERS]
        forb = []
        if g == "qango7plus:edges":
            cs = set(cells)

            def on_edge(c):
                r, col = divmod(c, 7)
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    r2, c2 = r + dr, col + dc
                    if not (0 <= r2 < 7 and 0 <= c2 < 7) or r2 * 7 + c2 not in cs:
                        return True
                return False

            forb = [c for c in cells if not on_edge(c)]
        elif g == "qango7plus:tournament":
            forb = [c for c in cells if c not in (11, 19, 29, 37)]  # e2 f3 b5 c6 allowed
        return Rules(7, 7, cells, pats, forb, None, False, ident)
    raise NotProven(
        f"unknown game {game!r}: its rules cannot be checked against a reference "
        f"(custom games are named file:...)"
    )


def compare_rules(ref: Rules, got: Rules, game: str) -> list[str]:
    """What differs between the named game's rules and the header's (empty: the same game)."""
    diffs = []
    if (ref.width, ref.height) != (got.width, got.height):
        return [f"the grid is {got.width}x{got.height}, {game} is played on {ref.width}x{ref.height}"]
    names = lambda cs: " ".join(ref.cell_name(c) for c in sorted(cs))  # noqa: E731
    if ref.cells != got.cells:
        miss, extra = ref.cells - got.cells, got.cells - ref.cells
        parts = []
        if miss:
            parts.append(f"missing {names(miss)}")
        if extra:
            parts.append(f"extra {names(extra)}")
        diffs.append(f"cells differ from {game}: " + ", ".join(parts))
    if ref.patterns != got.patterns:
        miss = sorted(ref.patterns - got.patterns, key=sorted)
        extra = sorted(got.patterns - ref.patterns, key=sorted)
        parts = []
        if miss:
            parts.append(f"{len(miss)} missing (e.g. {names(miss[0])})")
        if extra:
            parts.append(f"{len(extra)} not in the game (e.g. {names(extra[0])})")
        diffs.append(
            f"win patterns differ from {game} ({len(got.patterns)} minimal patterns, "
            f"{game} has {len(ref.patterns)}): " + ", ".join(parts)
        )
    if ref.forbidden != got.forbidden:
        diffs.append(
            f"first-move restriction differs from {game}: forbidden "
            f"[{names(got.forbidden)}], {game} forbids [{names(ref.forbidden)}]"
        )
    if ref.disc_cap != got.disc_cap:
        diffs.append(f"disc cap differs from {game}: {got.disc_cap} (null: none), {game} has {ref.disc_cap}")
    if ref.gravity != got.gravity:
        diffs.append(f"gravity differs from {game}: {got.gravity}, {game} has {ref.gravity}")
    return diffs


# --------------------------------------------------------------------------------------------
# The engine: moves, wins, canonical keys
# --------------------------------------------------------------------------------------------


def inverse_permutations(perms, n: int) -> list[list[int]]:
    """For each permutation p of range(n) (p[i] the image of i), its inverse."""
    out = []
    for p in perms:
        inv = [0] * n
        for i, pi in enumerate(p):
            inv[pi] = i
        out.append(inv)
    return out


def _make_canon(perms, n):
    """Build ``canon(first, second) -> (key, k)``: the canonical key as one int
    ``(image(first) << 64) | image(second)`` (so int order = the format's bytewise order) and
    the index of a symmetry that gives it.

    Why generated code: this runs for every child of every position checked.  Permuting a
    bitboard through per-symmetry, per-byte lookup tables (image of byte j holding value b) turns
    64 bit tests into a handful of list lookups, and unrolling the loops into straight-line
    Python removes most interpreter overhead."""
    nb = (n + 7) // 8
    ns: dict = {}
    src = ["def canon(f, s):"]
    for j in range(nb):
        src.append(f"    f{j} = (f >> {8 * j}) & 255")
        src.append(f"    s{j} = (s >> {8 * j}) & 255")
    for k, p in enumerate(perms):
        terms = []
        for j in range(nb):
            ts = [0] * 256
            for b in range(1, 256):  # the image of b is that of b without its lowest bit, plus one
                low = b & -b
                i = 8 * j + low.bit_length() - 1
                ts[b] = ts[b ^ low] | (1 << p[i] if i < n else 0)
            tf = [img << 64 for img in ts]
            ns[f"F{k}_{j}"], ns[f"S{k}_{j}"] = tf, ts
            terms += [f"F{k}_{j}[f{j}]", f"S{k}_{j}[s{j}]"]
        src.append(f"    k{k} = " + " | ".join(terms))
    src.append("    best = k0")
    src.append("    bi = 0")
    for k in range(1, len(perms)):
        src.append(f"    if k{k} < best:")
        src.append(f"        best = k{k}")
        src.append(f"        bi = {k}")
    src.append("    return best, bi")
    exec("\n".join(src), ns)  # noqa: S102 - generated from numbers only
    return ns["canon"]


class Engine:
    """Move generation, win detection and canonical keys for one Rules."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.n = rules.n
        self.cellmask = sum(1 << c for c in rules.cells)
        self.forbidmask = sum(1 << c for c in rules.forbidden)
        self.cap = rules.disc_cap if rules.disc_cap is not None else 1 << 30
        by_cell = [[] for _ in range(self.n)]
        self.masks = []
        for pat in rules.patterns:
            m = sum(1 << c for c in pat)
            self.masks.append(m)
            for c in pat:
                by_cell[c].append(m)
        self.pats_by_cell = [tuple(x) for x in by_cell]
        # (mask, cells) in a fixed order, so that a message names the same pattern every run
        self.patterns_in_order = [
            (sum(1 << c for c in cells), cells) for cells in sorted(sorted(p) for p in rules.patterns)
        ]
        self.canon = _make_canon(rules.symmetries, self.n)
        self.inverse = inverse_permutations(rules.symmetries, self.n)
        self.column_of = {c: ci for ci, col in enumerate(rules.columns) for c in col}

    def legal(self, f: int, s: int) -> list[int]:
        occ = f | s
        if self.rules.gravity:
            out = []
            for col in self.rules.columns:
                for c in col:
                    if not (occ >> c) & 1:
                        out.append(c)
                        break
        else:
            e = self.cellmask & ~occ
            out = []
            while e:
                low = e & -e
                out.append(low.bit_length() - 1)
                e ^= low
        if occ == 0 and self.forbidmask:
            out = [c for c in out if not (self.forbidmask >> c) & 1]
        return out

    def illegal_reason(self, f: int, s: int, c: int) -> str | None:
        """Why the current player may not put a stone on cell c (None if they may)."""
        r = self.rules
        occ = f | s
        if c not in r.cells:
            return f"{r.cell_name(c)} is not a playable cell"
        if (occ >> c) & 1:
            return f"{r.cell_name(c)} is occupied"
        if occ == 0 and c in r.forbidden:
            return f"{r.cell_name(c)} is forbidden for the first stone"
        if r.gravity:
            col = r.columns[self.column_of[c]]
            low = next(x for x in col if not (occ >> x) & 1)
            if low != c:
                return (
                    f"{r.cell_name(c)} is not where a stone dropped in column "
                    f"{self.column_of[c] + 1} lands ({r.cell_name(low)})"
                )
        return None

    def winner(self, f: int, s: int) -> int | None:
        """Outcome if a player owns a whole win pattern (checks both players; used only for the
        start position, where the last move is not known)."""
        for m in self.masks:
            if f & m == m:
                return FIRST_WINS
            if s & m == m:
                return SECOND_WINS
        return None

    def static_outcome(self, f: int, s: int) -> int | None:
        """The outcome of a finished position, None if play goes on."""
        w = self.winner(f, s)
        if w is not None:
            return w
        if (f | s).bit_count() >= self.cap or not self.legal(f, s):
            return DRAW
        return None


# --------------------------------------------------------------------------------------------
# Reading the file
# --------------------------------------------------------------------------------------------


class Pairing(NamedTuple):
    """A kind 1 certificate's payload (book-format.md, "Kind 1: pairing")."""

    defender: int  # 1: the first player defends, 2: the second player
    pairs: tuple  # ((x, y), ...) cells of the canonical orientation


# Kind 2 rule codes (book-format.md, "Kind 2: Connect Four rule sets")
CLAIMEVEN, BASEINVERSE, VERTICAL, AFTEREVEN, LOWINVERSE, HIGHINVERSE, BASECLAIM, BEFORE = range(1, 9)
SPECIALBEFORE = 9
RULE_NAME = {
    CLAIMEVEN: "Claimeven",
    BASEINVERSE: "Baseinverse",
    VERTICAL: "Vertical",
    AFTEREVEN: "Aftereven",
    LOWINVERSE: "Lowinverse",
    HIGHINVERSE: "Highinverse",
    BASECLAIM: "Baseclaim",
    BEFORE: "Before",
    SPECIALBEFORE: "Specialbefore",
}
RULE_CELLS = {
    CLAIMEVEN: 2,
    BASEINVERSE: 2,
    VERTICAL: 2,
    AFTEREVEN: 4,
    LOWINVERSE: 4,
    HIGHINVERSE: 6,
    BASECLAIM: 4,
}  # Before: 4 + 2e; Specialbefore: 4 + 2e with e >= 1 (the special pair is one of the e pairs)
NO_THREAT = 255
COMBINATION = 254  # T of a threat combination: the bytes X and L follow


class RuleInstance(NamedTuple):
    """One instance of a kind 2 certificate: the rule code and its cells, in the payload's order
    (cells of the canonical orientation)."""

    rule: int
    cells: tuple


class RuleSet(NamedTuple):
    """A kind 2 certificate's payload."""

    controller: int  # 1: the first player, 2: the second player
    threat: int  # a cell, NO_THREAT or COMBINATION
    instances: tuple  # RuleInstance, ...
    combination: tuple = ()  # (X, L) when threat is COMBINATION: crossing cell, low cell


@dataclass(frozen=True)
class Certificate:
    """One certificate of a version 2 book: ``content`` is a Pairing (kind 1), a RuleSet
    (kind 2), or None (kind 3, Go's margin bound, has no payload)."""

    kind: int
    content: Pairing | RuleSet | None


@dataclass
class Book:
    header: dict
    rules: Rules
    keys: list  # canonical keys as ints (first << 64 | second), ascending
    moves: bytes
    values: bytes
    version: int = 1
    certificates: dict = field(default_factory=dict)  # canonical key -> Certificate


class Layout(NamedTuple):
    """What the magic and the header say about the decompressed content."""

    version: int
    header: dict
    body_start: int  # 12 + L
    size: int  # 12 + L + 18 * N (+ B in version 2): the whole decompressed content


def read_compressed(path) -> tuple[bytes, zstandard.FrameParameters]:
    """The file's bytes and its zstandard frame parameters.  A frame without a content checksum
    is refused up front (book-format.md, "Layout": the frame has one), so that every byte the
    verifier reads has been checked against it."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise BookError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        params = zstandard.get_frame_parameters(raw)
    except zstandard.ZstdError:
        raise BookError("not a book: the file is not a zstandard frame") from None
    if not params.has_checksum:
        raise BookError("corrupt book: the zstandard frame has no content checksum")
    return raw, params


def _read_exact(reader, n: int) -> bytes:
    """Up to n bytes from a stream reader (fewer only where the content ends)."""
    parts, got = [], 0
    while got < n:
        chunk = reader.read(min(n - got, CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def read_head(reader) -> Layout:
    """Read the magic, L and the header from the stream, and the size they declare.

    Why streaming: the content's size is known only from the header, and a hostile frame may
    decompress to gigabytes; reading at most 12 + 16 MiB before the header is checked bounds
    what a file can make the verifier allocate (book-format.md, "Format version 2")."""
    head = _read_exact(reader, 12)
    if len(head) < 12:
        raise BookError(
            f"truncated book: the content ends after {len(head)} bytes, before the "
            f"magic and the header length"
        )
    if head[:6] != MAGIC_PREFIX:
        raise BookError("not a book: bad magic (expected PNBOOK)")
    version = MAGIC_VERSIONS.get(head[6:8])
    if version is None:
        raise BookError(
            f"unknown book layout: magic version bytes {head[6:8].hex()} (this verifier reads 0001 and 0002)"
        )
    (hlen,) = struct.unpack(">I", head[8:12])
    if hlen > MAX_HEADER:
        raise BookError(f"malformed header: header length {hlen} bytes is over the 16 MiB limit")
    text = _read_exact(reader, hlen)
    if len(text) < hlen:
        raise BookError(f"truncated book: header length {hlen} runs past the end of the data")
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BookError(f"malformed header: not UTF-8 JSON ({e})") from None
    if not isinstance(header, dict):
        raise BookError("malformed header: not a JSON object")
    return Layout(version, header, 12 + hlen, 12 + hlen + declared_body_size(header, version))


def declared_body_size(header: dict, version: int) -> int:
    """18 * N, plus B in version 2: the bytes that follow the header (book-format.md)."""
    if header.get("format") != "pndb-book":
        raise BookError(f"malformed header: format is {header.get('format')!r}, not 'pndb-book'")
    fv = header.get("format_version")
    if fv not in MAGIC_VERSIONS.values():
        raise BookError(f"unknown format_version {fv!r} (this verifier reads versions 1 and 2)")
    if fv != version:
        raise BookError(
            f"malformed header: format_version {fv!r} does not match the magic (version bytes 000{version})"
        )
    for k in ("records", "record_size"):
        if k not in header:
            raise BookError(f"malformed header: missing {k!r}")
    if header["record_size"] != RECORD_SIZE:
        raise BookError(f"malformed header: record_size {header['record_size']!r}, expected 18")
    if not _is_int(header["records"]) or header["records"] < 0:
        raise BookError("malformed header: records is not a non-negative integer")
    size = header["records"] * RECORD_SIZE
    if version == 2:
        for k in ("certificates", "certificate_bytes"):
            if not _is_int(header.get(k)) or header[k] < 0:
                raise BookError(f"malformed header: {k} is not a non-negative integer")
        size += header["certificate_bytes"]
    return size


def body_size_message(layout: Layout, got: str) -> str:
    """One line comparing what follows the header with what the header declares."""
    h = layout.header
    want = f"{h['records']} records = {h['records'] * RECORD_SIZE} bytes"
    if layout.version == 2:
        want += f", {h['certificates']} certificates in {h['certificate_bytes']} bytes"
    what = "record bytes" if layout.version == 1 else "record and certificate bytes"
    return f"corrupt book: {got} {what}, the header declares {want}"


def check_declared_size(params: zstandard.FrameParameters, layout: Layout) -> None:
    """A frame that states its content size must state the size the header declares."""
    cs = params.content_size
    if cs in (zstandard.CONTENTSIZE_UNKNOWN, zstandard.CONTENTSIZE_ERROR) or cs == layout.size:
        return
    if cs < layout.body_start:
        raise BookError(
            f"corrupt book: the zstandard frame declares {cs} bytes of content, fewer "
            f"than the {layout.body_start} of the magic and the header"
        )
    raise BookError(body_size_message(layout, f"the zstandard frame holds {cs - layout.body_start}"))


def check_body_length(reader, layout: Layout) -> None:
    """Decompress the rest in chunks, counting: exactly size - (12 + L) bytes must follow the
    header.  Nothing beyond one byte past the declared size is ever decompressed, and only one
    chunk is held at a time."""
    want = layout.size - layout.body_start
    got = 0
    while got <= want:
        chunk = reader.read(min(want + 1 - got, CHUNK))
        if not chunk:
            break
        got += len(chunk)
    if got > want:
        raise BookError(body_size_message(layout, f"more than {want}"))
    if got < want:
        raise BookError(body_size_message(layout, str(got)))


def decompress_checked(raw: bytes) -> bytes:
    """The whole content, once :func:`check_body_length` has shown that the frame yields exactly
    the declared size (so this cannot allocate more).  This pass is the one that sees the end of the
    frame: the content checksum verified, nothing missing after the content, nothing after the
    frame -- a stream reader stops silently where its input ends."""
    dobj = zstandard.ZstdDecompressor().decompressobj()
    data = dobj.decompress(raw)
    if not dobj.eof:
        raise BookError("truncated book: the zstandard frame ends early (its checksum is missing)")
    if dobj.unused_data:
        raise BookError(f"corrupt book: {len(dobj.unused_data)} bytes follow the zstandard frame")
    return data


def decompress_book(path) -> tuple[Layout, bytes]:
    """Decompress a book with the bound of book-format.md: the magic and header first (at most
    16 MiB), then no more than the size the header declares; anything else is a BookError."""
    raw, params = read_compressed(path)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw)
        layout = read_head(reader)
        check_declared_size(params, layout)
        check_body_length(reader, layout)
        return layout, decompress_checked(raw)
    except zstandard.ZstdError as e:
        raise BookError(f"corrupt book: {e}") from None


def check_header(header: dict) -> None:
    """The header fields the proof relies on (book-format.md, "Header")."""
    for k in ("game", "rules", "start", "value", "partial"):
        if k not in header:
            raise BookError(f"malformed header: missing {k!r}")
    if not isinstance(header["game"], str):
        raise BookError("malformed header: game is not a string")
    if not isinstance(header["partial"], bool):
        raise BookError("malformed header: partial is not true/false")
    allowed = PARTIAL_VALUES if header["partial"] else set(CLAIMS)
    if not isinstance(header["value"], str) or header["value"] not in allowed:
        raise BookError(
            f"malformed header: value {header['value']!r} is not one of {', '.join(sorted(allowed))}"
        )


def parse_records(body: bytes) -> tuple[list, bytes, bytes]:
    """Keys, moves and value codes of the records; keys strictly ascending, codes 0..5."""
    rec = np.frombuffer(body, dtype=np.dtype([("f", ">u8"), ("s", ">u8"), ("m", "u1"), ("v", "u1")]))
    f, s = rec["f"], rec["s"]
    if len(rec) > 1:
        up = (f[1:] > f[:-1]) | ((f[1:] == f[:-1]) & (s[1:] > s[:-1]))
        if not up.all():
            i = int(np.argmin(up))
            dup = f[i] == f[i + 1] and s[i] == s[i + 1]
            raise BookError(
                f"corrupt book: record {i + 1} {'repeats the key of' if dup else 'sorts before'}"
                f" record {i} (keys must be strictly ascending)"
            )
    bad = np.nonzero(rec["v"] > 5)[0]
    if len(bad):
        raise BookError(f"corrupt book: record {int(bad[0])} has value code {int(rec['v'][bad[0]])}")
    keys = [(a << 64) | b for a, b in zip(f.tolist(), s.tolist())]
    return keys, rec["m"].tobytes(), rec["v"].tobytes()


def position_name(rules: Rules, key: int) -> str:
    """A canonical key as the stones of each player (certificates are read before any walk, so
    no line of moves leads to them yet)."""
    f, s = key >> 64, key & MASK64
    stones = lambda x: " ".join(rules.cell_name(c) for c in range(64) if (x >> c) & 1) or "none"  # noqa: E731
    return f"canonical position: first {stones(f)}, second {stones(s)}"


def parse_pairing(payload: bytes, where: str) -> Pairing:
    """A kind 1 payload: the defender (1 or 2), then P pairs, n = 1 + 2P bytes."""
    if len(payload) % 2 != 1:
        raise BookError(
            f"corrupt book: {where}: a kind 1 payload of {len(payload)} bytes is not 1 + 2P bytes"
        )
    if payload[0] not in (1, 2):
        raise BookError(
            f"corrupt book: {where}: defender byte {payload[0]} is neither 1 (first "
            f"player) nor 2 (second player)"
        )
    return Pairing(payload[0], tuple(zip(payload[1::2], payload[2::2])))


def parse_ruleset(payload: bytes, where: str) -> RuleSet:
    """A kind 2 payload: C, T (then X and L when T = 254), k, then k instances (rule code, m,
    m cells), n = 3 + sum(2 + m), plus 2 when T = 254. Only the layout is checked here (known
    codes, m as the code requires: 4 + 2e for a Before, 4 + 2e with e >= 1 for a Specialbefore,
    whose special pair must be there); what the cells must satisfy is checked where a walk
    reaches the certificate."""
    lead = 5 if len(payload) >= 2 and payload[1] == COMBINATION else 3
    if len(payload) < lead:
        what = "5 leading bytes (T = 254 is followed by X and L)" if lead == 5 else "3 leading bytes"
        raise BookError(
            f"corrupt book: {where}: a kind 2 payload of {len(payload)} bytes is shorter than its {what}"
        )
    controller, threat, k = payload[0], payload[1], payload[lead - 1]
    combination = tuple(payload[2:4]) if lead == 5 else ()
    if controller not in (1, 2):
        raise BookError(
            f"corrupt book: {where}: controller byte {controller} is neither 1 (first "
            f"player) nor 2 (second player)"
        )
    pos, instances = lead, []
    for j in range(k):
        if pos + 2 > len(payload):
            raise BookError(
                f"corrupt book: {where}: instance {j} of {k} runs past the end of the "
                f"{len(payload)}-byte payload"
            )
        code, m = payload[pos], payload[pos + 1]
        if code not in RULE_NAME:
            raise BookError(f"corrupt book: {where}: instance {j} has unknown rule code {code}")
        want = RULE_CELLS.get(code)
        least = 6 if code == SPECIALBEFORE else 4
        if (m != want) if want is not None else (m < least or m % 2):
            need = want if want is not None else "4 + 2e" if least == 4 else "4 + 2e with e >= 1"
            raise BookError(
                f"corrupt book: {where}: instance {j} ({RULE_NAME[code]}) has {m} cells, not {need}"
            )
        if pos + 2 + m > len(payload):
            raise BookError(
                f"corrupt book: {where}: instance {j} of {k} runs past the end of the "
                f"{len(payload)}-byte payload"
            )
        instances.append(RuleInstance(code, tuple(payload[pos + 2 : pos + 2 + m])))
        pos += 2 + m
    if pos != len(payload):
        raise BookError(
            f"corrupt book: {where}: {len(payload) - pos} bytes follow the last of its {k} instances"
        )
    return RuleSet(controller, threat, tuple(instances), combination)


def parse_certificates(blob: bytes, count: int, keys: list, parsers: dict, name) -> dict:
    """The certificate table of a version 2 book, checked for structure only (book-format.md,
    "Format version 2"): C certificates filling exactly B bytes, sorted by key, kind and payload
    with no two alike, each with a record, a known kind, and a payload laid out as its kind
    requires. A key may have several certificates (one per defender, say): key -> [Certificate].
    ``parsers`` maps the family's kinds to their payload parsers (payload, where) -> content,
    ``name(key)`` names a certificate's position. Whether a certificate holds is checked where
    the walk reaches it."""
    certs = {}
    pos, prev = 0, (-1, -1, b"")
    for i in range(count):
        if pos + CERT_HEAD > len(blob):
            raise BookError(
                f"corrupt book: certificate {i} of {count} starts at byte {pos} of the "
                f"{len(blob)} certificate bytes and runs past their end"
            )
        kf, ks, kind, n = struct.unpack_from(">QQBH", blob, pos)
        key = (kf << 64) | ks
        where = f"certificate {i} ({name(key)})"
        if pos + CERT_HEAD + n > len(blob):
            raise BookError(
                f"corrupt book: {where}: its payload of {n} bytes runs past the end of the certificate bytes"
            )
        payload = blob[pos + CERT_HEAD : pos + CERT_HEAD + n]
        pos += CERT_HEAD + n
        if (key, kind, payload) <= prev:
            raise BookError(
                f"corrupt book: {where} {'repeats' if (key, kind, payload) == prev else 'sorts before'}"
                f" certificate {i - 1} (certificates must be strictly ascending by key, kind, payload)"
            )
        prev = (key, kind, payload)
        j = bisect.bisect_left(keys, key)
        if j == len(keys) or keys[j] != key:
            raise BookError(f"corrupt book: {where} has no record")
        if kind not in parsers:
            raise BookError(f"corrupt book: {where} has unknown kind {kind}")
        certs.setdefault(key, []).append(Certificate(kind, parsers[kind](payload, where)))
    if pos != len(blob):
        raise BookError(f"corrupt book: {len(blob) - pos} bytes follow the last of the {count} certificates")
    return certs


def read_layout(path) -> tuple[Layout, bytes]:
    """Decompress (bounded), check the layout byte by byte and the header fields every family
    shares; raise BookError (exit 2) with a one-line message on anything that is not a
    well-formed book, and NotProven (exit 1) for a partial book."""
    layout, data = decompress_book(path)
    header = layout.header
    check_header(header)
    if header["partial"]:
        raise NotProven(
            f"not a complete proof: partial book (exported from an unsolved database; "
            f"value so far {header['value']})"
        )
    return layout, data


def split_body(layout: Layout, data: bytes) -> tuple[list, bytes, bytes, bytes]:
    """The records (keys, moves, value codes) and the certificate bytes after them."""
    rec_end = layout.body_start + layout.header["records"] * RECORD_SIZE
    keys, moves, values = parse_records(data[layout.body_start : rec_end])
    return keys, moves, values, data[rec_end:]


PLACEMENT_CERTIFICATES = {KIND_PAIRING: parse_pairing, KIND_CONNECT4: parse_ruleset}


def placement_book(layout: Layout, data: bytes) -> Book:
    """A placement or Connect Four book: its rules, records and certificates."""
    header = layout.header
    rules = rules_from_json(header["rules"])
    keys, moves, values, blob = split_body(layout, data)
    certs = {}
    if layout.version == 2:
        certs = parse_certificates(
            blob, header["certificates"], keys, PLACEMENT_CERTIFICATES, lambda key: position_name(rules, key)
        )
    return Book(header, rules, keys, moves, values, layout.version, certs)


def read_book(path) -> Book:
    """A placement or Connect Four book, read and checked as :func:`read_layout` says."""
    return placement_book(*read_layout(path))


def is_go_book(header: dict) -> bool:
    """A Go book's rules say so (go-book-format.md, "Telling a Go book")."""
    rules = header.get("rules")
    return isinstance(rules, dict) and rules.get("family") == "go"


def go_family():
    """tools/verify_go.py, the Go family's reader and walk.  It uses this module's layout,
    errors and reports, and imports it as ``verify`` (or ``pndb_tools.verify``); run as a
    script this module is ``__main__``, so it is registered under its name first, lest a second
    copy bring exception classes of its own."""
    if __package__:
        from . import verify_go
    else:
        sys.modules.setdefault("verify", sys.modules[__name__])
        import verify_go
    return verify_go


def check_start(book: Book, eng: Engine) -> tuple[int, int, list[int]]:
    """The start position, replayed from its moves; it must equal the header's cells and
    bitboards (a book whose start does not match its moves proves something else)."""
    r = book.rules
    st = book.header["start"]
    if not isinstance(st, dict) or not {"moves", "cells", "first", "second"} <= set(st):
        raise BookError("malformed header: start needs moves, cells, first and second")
    cells = st["cells"]
    if not isinstance(cells, list) or not all(_is_int(c) for c in cells):
        raise BookError("malformed header: start.cells is not a list of cell indices")
    if not (_is_int(st["first"]) and _is_int(st["second"])):
        raise BookError("malformed header: start.first/second are not integers")
    tokens = r.parse_moves(st["moves"])
    if len(tokens) != len(cells):
        raise BookError(
            f"inconsistent start: moves {st['moves']!r} has {len(tokens)} moves, cells has {len(cells)}"
        )
    f = s = 0
    for i, (tok, c) in enumerate(zip(tokens, cells)):
        done = eng.static_outcome(f, s)
        if done is not None:
            raise BookError(f"inconsistent start: the game is over before move {i + 1} ({tok})")
        tc = r.token_cell(tok, f | s)
        if tc is None:
            raise BookError(f"inconsistent start: move {i + 1} ({tok}) is not a legal move")
        if tc != c:
            raise BookError(f"inconsistent start: move {i + 1} is {tok} (cell {tc}), start.cells says {c}")
        why = eng.illegal_reason(f, s, c)
        if why:
            raise BookError(f"inconsistent start: move {i + 1} ({tok}) is illegal: {why}")
        if i % 2 == 0:
            f |= 1 << c
        else:
            s |= 1 << c
    if (f, s) != (st["first"], st["second"]):
        raise BookError(f"inconsistent start: start.first/second are not the position after {st['moves']!r}")
    return f, s, list(cells)


# --------------------------------------------------------------------------------------------
# Certificates (format version 2)
# --------------------------------------------------------------------------------------------

# What a valid pairing proves, by defender: the second player defending, the first does not win;
# the first player defending, the second does not win (book-format.md, "Kind 1: pairing").
PAIRING_PROVES = {1: 5, 2: 4}  # defender -> value code (second-wont-win, first-wont-win)


class CertificateInvalid(Exception):
    """A certificate reached by a walk does not hold; the message says why (exit code 1)."""


def check_no_gravity(rules: Rules) -> None:
    """Rule 1 of a pairing: with gravity a reply on the paired cell may not be possible."""
    if rules.gravity:
        raise CertificateInvalid("the game has gravity; a pairing needs a game without gravity")


def pairs_on_board(eng: Engine, pairs, inv) -> list[tuple[int, int]]:
    """The pairs, given in the canonical orientation, as cells of the board as it stands.

    Why map instead of checking the canonical position: the symmetry maps the rules onto
    themselves, so the certificate holds on one exactly when it holds on the other
    (book-format.md, "Format version 2"), and on the board as it stands every cell named in a
    message is a cell of the line of moves the message reports."""
    for x, y in pairs:
        for c in (x, y):
            if c >= eng.n:
                raise CertificateInvalid(f"pair ({x}, {y}): cell {c} is off the {eng.n}-cell grid")
    return [(inv[x], inv[y]) for x, y in pairs]


def check_pair_cells(rules: Rules, f: int, s: int, pairs) -> None:
    """Rule 2 of a pairing: every cell playable and empty, x != y, no cell in two pairs."""
    occupied = f | s
    pair_of: dict[int, str] = {}
    for x, y in pairs:
        name = f"pair ({rules.cell_name(x)}, {rules.cell_name(y)})"
        for c in (x, y):
            if c not in rules.cells:
                raise CertificateInvalid(f"{name}: {rules.cell_name(c)} is not a playable cell")
            if (occupied >> c) & 1:
                raise CertificateInvalid(f"{name}: {rules.cell_name(c)} is occupied")
        if x == y:
            raise CertificateInvalid(f"{name}: a pair needs two different cells")
        for c in (x, y):
            if c in pair_of:
                raise CertificateInvalid(f"{pair_of[c]} and {name} share {rules.cell_name(c)}")
            pair_of[c] = name


def check_patterns_covered(eng: Engine, f: int, s: int, defender: int, pairs) -> None:
    """Rule 3 of a pairing: every win pattern without a defender's stone holds a whole pair.

    The rules' minimal live patterns suffice: a pattern with a non-playable cell can never be
    completed, and a pattern that contains a minimal one holds that one's pair whenever it holds
    no defender's stone itself."""
    defended = f if defender == 1 else s
    masks = [(1 << x) | (1 << y) for x, y in pairs]
    for mask, cells in eng.patterns_in_order:
        if mask & defended:
            continue
        if not any(mask & m == m for m in masks):
            names = " ".join(eng.rules.cell_name(c) for c in cells)
            raise CertificateInvalid(f"pattern {names} holds no pair")


def check_pairing(eng: Engine, f: int, s: int, pairing: Pairing, inv) -> None:
    """Raise CertificateInvalid unless the pairing holds at the position (f, s), the board as it
    stands, reached through the symmetry whose inverse is ``inv``."""
    check_no_gravity(eng.rules)
    pairs = pairs_on_board(eng, pairing.pairs, inv)
    check_pair_cells(eng.rules, f, s, pairs)
    check_patterns_covered(eng, f, s, pairing.defender, pairs)


def check_record_includes(code: int, proven: int) -> None:
    """The record of a certificate's key includes what the certificate proves (book-format.md,
    "Format version 2"): its interval lies inside the proven one."""
    lo, hi = CODE_INTERVAL[code]
    plo, phi = CODE_INTERVAL[proven]
    if lo < plo or hi > phi:
        raise CertificateInvalid(
            f"record value {CODE_NAME[code]} does not include what its "
            f"certificate proves ({CODE_NAME[proven]})"
        )


# --- Kind 2: Connect Four rule sets (book-format.md, "Kind 2: Connect Four rule sets") ----------

AFTER_LIKE = (AFTEREVEN, BEFORE, SPECIALBEFORE)
INVERSES = (LOWINVERSE, HIGHINVERSE)
SPECIAL = 0  # Part.rule of a Specialbefore's special part {s0} or {x} (lower = upper = the cell)


class Part(NamedTuple):
    """A part of an Aftereven, Before or Specialbefore: a Claimeven (below(s), s) or a Vertical
    part (s, above(s)), as (lower, upper); or a special part of a Specialbefore, one cell."""

    lower: int
    upper: int
    rule: int  # CLAIMEVEN, VERTICAL or SPECIAL


class Checked(NamedTuple):
    """What a valid instance means for compatibility and for the problems it solves."""

    rule: int
    name: str  # for messages: the rule and its cells
    squares: int  # bitmask
    parts: tuple  # Part, ... (Aftereven, Before, Specialbefore)
    claimevens: tuple  # (lower, upper), ...: its own, its parts', a Baseclaim's (p2, q)
    lowest: tuple  # (column, row of the lowest cell), ... (Lowinverse, Highinverse)
    contains: tuple  # bitmasks: it solves every problem that holds one of them whole
    meets_all: tuple  # bitmasks (Aftereven): it solves every problem that meets all of them


class C4Position:
    """The terms of the kind 2 definition at one position: region, parity, dead cells, under the
    win condition: none, the threat ``threat``, or (threat = COMBINATION) the threat combination
    ``combination`` = (X, L)."""

    def __init__(self, rules: Rules, f: int, s: int, threat: int, combination: tuple = ()):
        w, h = rules.width, rules.height
        self.rules, self.w, self.h, self.n = rules, w, h, w * h
        self.occupied = f | s
        self.vacant = ((1 << self.n) - 1) & ~self.occupied
        self.region = self.vacant
        self.dead = 0
        self.top = [0] * w
        self.threat = threat
        column = lambda col, rows: sum(1 << (r * w + col) for r in rows)  # noqa: E731
        if threat == COMBINATION:
            x, low = combination
            col, row = x % w, x // w
            self.region &= ~column(col, range(min(row + 2, h))) & ~column(low % w, range(h))
            u_row = low // w - 1  # U = above(L); dead: U and the cells above it of its row parity
            self.dead = (1 << x) | column(col, range(row - 1))
            self.dead |= column(low % w, range(u_row % 2, u_row + 1, 2))
            self.top[col] = row + 2
        elif threat != NO_THREAT:
            col, row = threat % w, threat // w
            self.region &= ~column(col, range(min(row + 2, h)))
            self.dead = column(col, range(row + 1))
            self.top[col] = row + 2

    def name(self, c: int) -> str:
        return self.rules.cell_name(c)

    def below(self, c: int) -> int | None:
        return c + self.w if c + self.w < self.n else None

    def above(self, c: int) -> int | None:
        return c - self.w if c >= self.w else None

    def empty(self, c: int) -> bool:
        return bool((self.region >> c) & 1)

    def playable(self, c: int) -> bool:
        """Directly playable: empty, and on the bottom row or above a stone."""
        b = self.below(c)
        return self.empty(c) and (b is None or bool((self.occupied >> b) & 1))

    def even(self, c: int) -> bool:
        return (c // self.w - self.top[c % self.w]) % 2 == 0

    def column_above(self, c: int) -> int:
        """The cells of c's column above c, up to the top row."""
        return sum(1 << x for x in range(c % self.w, c, self.w))

    def need_empty(self, cells) -> None:
        for c in cells:
            if not self.empty(c):
                why = (
                    "occupied"
                    if (self.occupied >> c) & 1
                    else "in the threat's column at or above below(T), outside the region"
                    if self.threat != COMBINATION
                    else "in the crossing cell's column at or above below(X), or in the low "
                    "cell's column, outside the region"
                )
                raise CertificateInvalid(f"{self.name(c)} is not empty: it is {why}")


def _mask(*cells) -> int:
    return sum(1 << c for c in cells)


def check_claimeven(b: C4Position, lower: int, upper: int) -> None:
    if b.below(upper) != lower:
        raise CertificateInvalid(f"lower {b.name(lower)} is not below upper {b.name(upper)}")
    if not b.even(upper):
        raise CertificateInvalid(f"upper {b.name(upper)} is odd")
    b.need_empty((lower, upper))


def check_vertical(b: C4Position, lower: int, upper: int) -> None:
    if b.below(upper) != lower:
        raise CertificateInvalid(f"lower {b.name(lower)} is not below upper {b.name(upper)}")
    if b.even(upper):
        raise CertificateInvalid(f"upper {b.name(upper)} is even")
    b.need_empty((lower, upper))


def group_empties(b: C4Position, cells, groups: set, opponent: int) -> list[int]:
    """The empty cells of an Aftereven's or Before's group, checked: four ascending cells that
    form a group with no stone of the opponent, every vacant cell in the region, at least one."""
    if list(cells) != sorted(set(cells)):
        raise CertificateInvalid("the group's cells are not given in ascending order")
    if _mask(*cells) not in groups:
        raise CertificateInvalid("its four cells are not a group")
    for c in cells:
        if (opponent >> c) & 1:
            raise CertificateInvalid(f"the group holds a stone of the player to move on {b.name(c)}")
    b.need_empty([c for c in cells if (b.vacant >> c) & 1])
    empties = [c for c in cells if b.empty(c)]
    if not empties:
        raise CertificateInvalid("the group has no empty cell")
    return empties


def before_parts(b: C4Position, empties, pairs, special: int | None = None) -> list[Part]:
    """The parts of a Before, or the other parts of a Specialbefore whose special cell s0 is
    ``special``, checked: the group's empty cells in different columns, above each an empty
    cell, and one pair per empty cell other than s0, in order, each the Claimeven below it or
    the Vertical part above it."""
    paired = [c for c in empties if c != special]
    if len(pairs) != len(paired):
        raise CertificateInvalid(f"{len(pairs)} pairs for the group's {len(paired)} empty cells")
    if len({c % b.w for c in empties}) != len(empties):
        raise CertificateInvalid("two empty cells of the group share a column")
    pair_of = dict(zip(paired, pairs))
    plist = []
    for c in empties:
        up = b.above(c)
        if up is None:
            raise CertificateInvalid(f"empty cell {b.name(c)} of the group is in the top row")
        b.need_empty((up,))
        if c == special:
            continue
        x, y = pair_of[c]
        if (x, y) == (b.below(c), c):
            check_claimeven(b, x, y)
            plist.append(Part(x, y, CLAIMEVEN))
        elif (x, y) == (c, up):
            plist.append(Part(x, y, VERTICAL))
        else:
            raise CertificateInvalid(
                f"pair {b.name(x)} {b.name(y)} for {b.name(c)} is neither "
                f"the Claimeven below it nor the Vertical part above it"
            )
    return plist


def check_instance(b: C4Position, inst: RuleInstance, groups: set, opponent: int) -> Checked:
    """Raise CertificateInvalid unless the instance satisfies its rule's requirement; else what it
    solves and what compatibility needs of it."""
    rule, cells = inst.rule, inst.cells
    name = f"{RULE_NAME[rule]} {' '.join(b.name(c) for c in cells)}"
    parts: tuple = ()
    claimevens: tuple = ()
    lowest: tuple = ()
    meets_all: tuple = ()
    squares = _mask(*cells)
    if rule == CLAIMEVEN:
        lower, upper = cells
        check_claimeven(b, lower, upper)
        contains, claimevens = (_mask(upper),), ((lower, upper),)
    elif rule == BASEINVERSE:
        x, y = cells
        if not x < y:
            raise CertificateInvalid(f"{b.name(x)} does not come before {b.name(y)} (x < y)")
        for c in cells:
            if not b.playable(c):
                raise CertificateInvalid(f"{b.name(c)} is not directly playable")
        contains = (_mask(x, y),)
    elif rule == VERTICAL:
        check_vertical(b, *cells)
        contains = (_mask(*cells),)
    elif rule == LOWINVERSE:
        l1, u1, l2, u2 = cells
        check_vertical(b, l1, u1)
        check_vertical(b, l2, u2)
        if not l1 % b.w < l2 % b.w:
            raise CertificateInvalid(f"column of {b.name(l1)} is not left of that of {b.name(l2)}")
        contains = (_mask(u1, u2), _mask(l1, u1), _mask(l2, u2))
        lowest = ((l1 % b.w, l1 // b.w), (l2 % b.w, l2 // b.w))
    elif rule == HIGHINVERSE:
        a1, b1, c1, a2, b2, c2 = cells
        for a, bb, c in ((a1, b1, c1), (a2, b2, c2)):
            b.need_empty((a, bb, c))
            if not b.even(c):
                raise CertificateInvalid(f"{b.name(c)} is odd")
            if b.below(c) != bb or b.below(bb) != a:
                raise CertificateInvalid(
                    f"{b.name(a)} {b.name(bb)} {b.name(c)} are not three cells of a column, bottom to top"
                )
        if not a1 % b.w < a2 % b.w:
            raise CertificateInvalid(f"column of {b.name(a1)} is not left of that of {b.name(a2)}")
        contains = [_mask(c1, c2), _mask(b1, b2), _mask(b1, c1), _mask(b2, c2)]
        if b.playable(a1):
            contains.append(_mask(a1, c2))
        if b.playable(a2):
            contains.append(_mask(a2, c1))
        contains = tuple(contains)
        lowest = ((a1 % b.w, a1 // b.w), (a2 % b.w, a2 // b.w))
    elif rule == BASECLAIM:
        p1, p2, p3, q = cells
        if len({p1, p2, p3}) != 3:
            raise CertificateInvalid("p1, p2, p3 are not three different cells")
        for c in (p1, p2, p3):
            if not b.playable(c):
                raise CertificateInvalid(f"{b.name(c)} is not directly playable")
        if b.above(p2) != q:
            raise CertificateInvalid(f"q {b.name(q)} is not above p2 {b.name(p2)}")
        b.need_empty((q,))
        if not b.even(q):
            raise CertificateInvalid(f"q {b.name(q)} is odd")
        contains, claimevens = (_mask(p1, q), _mask(p2, p3)), ((p2, q),)
    elif rule == AFTEREVEN:
        empties = group_empties(b, cells, groups, opponent)
        for c in empties:
            if not b.even(c):
                raise CertificateInvalid(f"empty cell {b.name(c)} of the group is odd")
            low = b.below(c)
            if low is None:
                raise CertificateInvalid(f"empty cell {b.name(c)} of the group has no cell below")
            b.need_empty((low,))
        parts = tuple(Part(b.below(c), c, CLAIMEVEN) for c in empties)
        claimevens = tuple((p.lower, p.upper) for p in parts)
        squares = _mask(*(x for p in parts for x in p[:2]))
        contains = tuple(_mask(c) for c in empties)
        meets_all = tuple(b.column_above(c) for c in empties)
    elif rule == BEFORE:
        empties = group_empties(b, cells[:4], groups, opponent)
        plist = before_parts(b, empties, list(zip(cells[4::2], cells[5::2])))
        if all(p.rule == CLAIMEVEN for p in plist):
            raise CertificateInvalid(
                "no pair is a Vertical part (a Before of Claimevens only is an Aftereven)"
            )
        parts = tuple(plist)
        claimevens = tuple((p.lower, p.upper) for p in parts if p.rule == CLAIMEVEN)
        squares = _mask(*(x for p in parts for x in p[:2]))
        contains = (_mask(*(b.above(c) for c in empties)),) + tuple(
            _mask(p.upper) if p.rule == CLAIMEVEN else _mask(p.lower, p.upper) for p in parts
        )
    else:  # SPECIALBEFORE
        empties = group_empties(b, cells[:4], groups, opponent)
        s0, x = cells[4:6]
        if s0 not in empties:
            raise CertificateInvalid(f"s0 {b.name(s0)} is not an empty cell of the group")
        if not b.playable(s0):
            raise CertificateInvalid(f"s0 {b.name(s0)} is not directly playable")
        if not b.playable(x):
            raise CertificateInvalid(f"x {b.name(x)} is not directly playable")
        if x % b.w in {c % b.w for c in empties}:
            raise CertificateInvalid(f"x {b.name(x)} is in the column of an empty cell of the group")
        plist = before_parts(b, empties, list(zip(cells[6::2], cells[7::2])), s0)
        claimevens = tuple((p.lower, p.upper) for p in plist if p.rule == CLAIMEVEN)
        parts = tuple(plist) + (Part(s0, s0, SPECIAL), Part(x, x, SPECIAL))
        squares = _mask(*{c for p in parts for c in p[:2]})
        contains = (_mask(x, *(b.above(c) for c in empties)), _mask(s0, x)) + tuple(
            _mask(p.upper) if p.rule == CLAIMEVEN else _mask(p.lower, p.upper) for p in plist
        )
    return Checked(rule, name, squares, parts, claimevens, lowest, contains, meets_all)


def incompatibility(b: C4Position, x: Checked, y: Checked) -> str | None:
    """Why two valid instances may not be used together (None if they may): the compatibility
    conditions of the kind 2 definition (table 7.4 of the thesis, read strictly)."""
    if x.rule in AFTER_LIKE and y.rule in AFTER_LIKE:
        for col in range(b.w):
            cm = _mask(*range(col, b.n, b.w))
            xs, ys = x.squares & cm, y.squares & cm
            if not xs & ys:
                continue
            px = [p for p in x.parts if p.upper % b.w == col]
            py = [p for p in y.parts if p.upper % b.w == col]
            if not (xs == ys and len(px) == len(py) == 1 and px[0] == py[0] and px[0].rule != SPECIAL):
                special = SPECIAL in {p.rule for p in px + py}
                return f"their squares in column {col + 1} overlap and are not the same part" + (
                    " (a special part of a Specialbefore is never shared)" if special else ""
                )
        return None
    if x.squares & y.squares:
        shared = " ".join(b.name(c) for c in range(b.n) if (x.squares & y.squares) >> c & 1)
        return f"their squares share {shared}"
    if x.rule in INVERSES and y.rule in INVERSES:
        cols = {c for c, _ in x.lowest} | {c for c, _ in y.lowest}
        if len(cols) != 4:
            return "their four columns are not four different columns"
        return None
    if y.rule in INVERSES:
        x, y = y, x
    if x.rule in INVERSES:
        for lower, upper in y.claimevens:
            for col, row in x.lowest:
                if lower % b.w == col and max(lower, upper) // b.w > row:
                    return (
                        f"Claimeven {b.name(lower)} {b.name(upper)} lies below the lowest cell "
                        f"of the {RULE_NAME[x.rule]} in column {col + 1}"
                    )
    return None


def connect4_groups(w: int, h: int) -> set:
    """Every four cells in a row horizontally, vertically or diagonally, as bitmasks."""
    return {_mask(*p) for p in _lines(w, h, 4)}


def check_connect4_game(rules: Rules, groups: set) -> None:
    """Condition 1 of a kind 2 certificate: the game is Connect Four."""
    if not rules.gravity:
        raise CertificateInvalid("the game has no gravity; a kind 2 certificate needs Connect Four")
    if rules.cells != frozenset(range(rules.n)):
        raise CertificateInvalid(
            "not every cell of the grid is playable; a kind 2 certificate needs Connect Four"
        )
    if {_mask(*p) for p in rules.patterns} != groups:
        raise CertificateInvalid(
            "the win patterns are not the groups of four in a row; a kind 2 certificate needs Connect Four"
        )
    if rules.disc_cap is not None or rules.forbidden:
        raise CertificateInvalid(
            "the game has a disc cap or a rule on the first stone; a kind 2 certificate needs Connect Four"
        )


def check_combination(rules: Rules, groups: set, vacant: int, mine: int, x: int, low: int) -> None:
    """Condition 3 of a kind 2 certificate with T = 254: (X, L) = (x, low) is a threat
    combination of the controller, whose stones are ``mine``."""
    n, w = rules.n, rules.width
    for what, c in (("crossing cell X", x), ("low cell L", low)):
        if c >= n:
            raise CertificateInvalid(f"{what} {c} is off the {n}-cell grid")
    xn, ln = rules.cell_name(x), rules.cell_name(low)
    nvac = vacant.bit_count()
    if x % w == low % w:
        raise CertificateInvalid(f"crossing cell {xn} and low cell {ln} are in the same column")
    if not (vacant >> x) & 1:
        raise CertificateInvalid(f"crossing cell {xn} is not vacant")
    if x + w >= n:
        raise CertificateInvalid(f"crossing cell {xn} is in the bottom row")
    if not (vacant >> (x + w)) & 1:
        raise CertificateInvalid(f"the cell below the crossing cell {xn} is not vacant")
    if (x // w) % 2 != nvac % 2:
        raise CertificateInvalid(
            f"crossing cell {xn} is in row {x // w} (0 at the top), of the other parity than the "
            f"{nvac} vacant cells"
        )
    if not (vacant >> low) & 1 or (low + w < n and (vacant >> (low + w)) & 1):
        raise CertificateInvalid(f"low cell {ln} is not directly playable")
    if (low // w) % 2 != 1:
        raise CertificateInvalid(f"low cell {ln} is in row {low // w} (0 at the top), which is not odd")
    up = low - w
    for other, what in ((low, f"low cell {ln}"), (up, f"{rules.cell_name(up)}, the cell above the low cell")):
        pair = _mask(x, other)
        if not any(g & pair == pair and g & ~pair & mine == g & ~pair for g in groups):
            raise CertificateInvalid(
                f"no group consists of crossing cell {xn}, {what} and two stones of the controller"
            )


def check_ruleset(rules: Rules, f: int, s: int, rs: RuleSet) -> int:
    """Raise CertificateInvalid unless the kind 2 certificate holds at the canonical position
    (f, s); return the value code it proves.

    Why at the canonical position: the order conditions (x < y, a column left of another) are
    stated for the cells as the certificate gives them, which are cells of the canonical
    orientation."""
    groups = connect4_groups(rules.width, rules.height)
    check_connect4_game(rules, groups)
    n, w = rules.n, rules.width
    for g in groups:
        if f & g == g or s & g == g:
            raise CertificateInvalid("a player already owns a whole group")
    mover = 0 if f.bit_count() == s.bit_count() else 1
    if rs.controller - 1 == mover:
        raise CertificateInvalid(f"the controller ({PLAYER_NAME[rs.controller - 1]}) is the player to move")
    mine, opponent = (f, s) if rs.controller == 1 else (s, f)
    vacant = ((1 << n) - 1) & ~(f | s)
    nvac = vacant.bit_count()
    if not vacant:
        raise CertificateInvalid("no cell is vacant")
    t = rs.threat
    if t == NO_THREAT:
        if nvac % 2:
            raise CertificateInvalid(f"no threat, and an odd number ({nvac}) of vacant cells")
    elif t == COMBINATION:
        check_combination(rules, groups, vacant, mine, *rs.combination)
    else:
        if t >= n:
            raise CertificateInvalid(f"threat cell {t} is off the {n}-cell grid")
        tn = rules.cell_name(t)
        if not (vacant >> t) & 1:
            raise CertificateInvalid(f"threat {tn} is not vacant")
        if t + w >= n:
            raise CertificateInvalid(f"threat {tn} is in the bottom row")
        if not (vacant >> (t + w)) & 1:
            raise CertificateInvalid(f"the cell below the threat {tn} is not vacant")
        if (t // w) % 2 != nvac % 2:
            raise CertificateInvalid(
                f"threat {tn} is in row {t // w} (0 at the top), of the "
                f"other parity than the {nvac} vacant cells"
            )
        if not any((g >> t) & 1 and g & ~(1 << t) & mine == g & ~(1 << t) for g in groups):
            raise CertificateInvalid(f"no group consists of threat {tn} and three stones of the controller")
    b = C4Position(rules, f, s, t, rs.combination)
    for c in sorted({c for inst in rs.instances for c in inst.cells}):
        if c >= n:
            raise CertificateInvalid(f"cell {c} of an instance is off the {n}-cell grid")
    checked = []
    for j, inst in enumerate(rs.instances):
        try:
            checked.append(check_instance(b, inst, groups, opponent))
        except CertificateInvalid as e:
            names = " ".join(b.name(c) for c in inst.cells)
            raise CertificateInvalid(
                f"instance {j} ({RULE_NAME[inst.rule]} {names}) is not valid: {e}"
            ) from None
    for i, x in enumerate(checked):
        for j in range(i + 1, len(checked)):
            why = incompatibility(b, x, checked[j])
            if why:
                raise CertificateInvalid(
                    f"instances {i} ({x.name}) and {j} ({checked[j].name}) are not compatible: {why}"
                )
    for g in sorted(groups):
        if g & mine or g & b.dead:
            continue
        if not any(
            any(g & m == m for m in x.contains) or (x.meets_all and all(g & m for m in x.meets_all))
            for x in checked
        ):
            names = " ".join(b.name(c) for c in range(n) if (g >> c) & 1)
            raise CertificateInvalid(f"problem {names} is solved by no instance")
    if t == NO_THREAT:
        return 4 if rs.controller == 2 else 5  # first-wont-win, second-wont-win
    return 1 if rs.controller == 1 else 2  # a threat or a combination: first-wins, second-wins


class CertificateChecker:
    """Applies a version 2 book's certificates during the strategy walks (book-format.md,
    "Walking a version 2 book"): a reached certificate is checked; a valid one that proves what
    the strategy needs ends the line; one that proves something else is ignored there."""

    def __init__(self, eng: Engine, certs: dict):
        self.eng = eng
        self.certs = certs
        self.proven: dict[int, list] = {}  # key -> the value codes its certificates prove
        self.used = 0  # times a certificate ended a line

    def proves(self, key: int, f: int, s: int, k: int) -> list:
        """The value codes the certificates at this key prove; CertificateInvalid if one does
        not hold.  (f, s) is the board as it stands, reached through symmetry k."""
        codes = self.proven.get(key)
        if codes is None:
            codes = [self.proves_one(cert, key, f, s, k) for cert in self.certs[key]]
            self.proven[key] = codes
        return codes

    def proves_one(self, cert, key: int, f: int, s: int, k: int) -> int:
        """The value code one certificate proves; CertificateInvalid if it does not hold."""
        if cert.kind == KIND_PAIRING:
            try:
                check_pairing(self.eng, f, s, cert.content, self.eng.inverse[k])
            except CertificateInvalid as e:
                raise CertificateInvalid(f"invalid pairing certificate: {e}") from None
            code = PAIRING_PROVES[cert.content.defender]
        else:
            mirrored = self.eng.rules.symmetries[k] != tuple(range(self.eng.n))
            try:
                code = check_ruleset(self.eng.rules, key >> 64, key & MASK64, cert.content)
            except CertificateInvalid as e:
                where = (
                    (
                        " (cells of the canonical orientation, the image of this position "
                        f"under symmetries[{k}])"
                    )
                    if mirrored
                    else ""
                )
                raise CertificateInvalid(f"invalid Connect Four certificate{where}: {e}") from None
        return code

    def decides(self, key: int, f: int, s: int, k: int, code: int, owner: int, thr: int) -> bool:
        """True when a valid certificate at this position ends the line of ``owner``'s strategy,
        which must force at least (owner 0) or at most (owner 1) the outcome ``thr``."""
        if key not in self.certs:
            return False
        for proven in self.proves(key, f, s, k):
            check_record_includes(code, proven)
            lo, hi = CODE_INTERVAL[proven]
            if (lo >= thr) if owner == 0 else (hi <= thr):
                self.used += 1
                return True
        return False

    def why_not(self, key: int) -> str:
        """Why a certificate at this position did not end the line (for a hole's message)."""
        if key not in self.proven:
            return ""
        proven = " and ".join(CODE_NAME[c] for c in self.proven[key])
        return f"; its certificate proves {proven}, not what this strategy needs"


# --------------------------------------------------------------------------------------------
# The proof walk
# --------------------------------------------------------------------------------------------


class Hole(Exception):
    """The first place where a strategy breaks: ``path`` is the line from the start as nested
    (parent, cell) pairs (cheap to extend while walking, unwound only when reporting)."""

    def __init__(self, path, message, nodes=0):
        super().__init__(message)
        self.path = path
        self.message = message
        self.nodes = nodes


def _unwind(path) -> list[int]:
    out = []
    while path is not None:
        path, c = path
        out.append(c)
    out.reverse()
    return out


def walk_strategy(
    book: Book, eng: Engine, start, owner: int, thr: int, claim: str, checker: CertificateChecker,
    tick=None,
) -> int:
    """Check one player's strategy from the start: the book's move where ``owner`` is to move,
    every legal reply elsewhere; every line must end with an outcome >= thr (owner first) or
    <= thr (owner second), or at a certificate that proves as much.  Returns the number of
    positions checked; raises Hole.  ``tick(n)`` is called every TICK positions.

    Actual positions are walked (so a hole can be reported as the moves that lead to it); checked
    positions are remembered by canonical key, since the game tree is a DAG and symmetric
    positions have the same subtree up to the symmetry.  Iterative DFS: lines can be 64 deep and
    books have millions of positions."""
    keys, moves, values = book.keys, book.moves, book.values
    certified = book.certificates
    nrec = len(keys)
    canon, inverse, pats_by_cell = eng.canon, eng.inverse, eng.pats_by_cell
    cellmask, cap, n = eng.cellmask, eng.cap, eng.n
    legal, illegal_reason = eng.legal, eng.illegal_reason
    bl = bisect.bisect_left
    f0, s0 = start
    need = (
        (f"at least {OUTCOME_NAME[thr]}" if thr != FIRST_WINS else "a first-player win")
        if owner == 0
        else (f"at most {OUTCOME_NAME[thr]}" if thr != SECOND_WINS else "a second-player win")
    )
    who = PLAYER_NAME[owner]

    def bad_end(outcome):
        return outcome < thr if owner == 0 else outcome > thr

    def end_msg(outcome):
        res = {FIRST_WINS: "a first-player win", SECOND_WINS: "a second-player win", DRAW: "a draw"}[outcome]
        return f"line ends in {res}, but the {who}'s strategy must force {need} (book claims {claim})"

    o = eng.static_outcome(f0, s0)
    if o is not None:
        if bad_end(o):
            raise Hole(None, "the start position is finished: " + end_msg(o), 1)
        return 1
    key, k = canon(f0, s0)
    visited = {key}
    stack = [(f0, s0, key, k, None)]
    nodes = 0
    try:
        while stack:
            f, s, key, k, path = stack.pop()
            nodes += 1
            if tick is not None and not nodes % TICK:
                tick(nodes)
            nf = f.bit_count()
            mover = 0 if nf == s.bit_count() else 1
            i = bl(keys, key)
            has = i < nrec and keys[i] == key
            if has:
                code = values[i]
                lo, hi = CODE_INTERVAL[code]
                if (hi < thr) if owner == 0 else (lo > thr):
                    raise Hole(
                        path,
                        f"record value contradicts claim: the record says "
                        f"{CODE_NAME[code]} on a line where the {who}'s strategy must "
                        f"force {need} (book claims {claim})",
                    )
                if key in certified:
                    try:
                        if checker.decides(key, f, s, k, code, owner, thr):
                            continue
                    except CertificateInvalid as e:
                        raise Hole(path, str(e)) from None
            if mover == owner:
                if not has:
                    raise Hole(path, f"no record: the {who} is to move and the book has no move here")
                m = moves[i]
                if m == NO_MOVE:
                    raise Hole(
                        path,
                        f"no move: the record for this {who}-to-move position stores no "
                        f"move (255){checker.why_not(key)}",
                    )
                if m >= n:
                    raise Hole(path, f"illegal book move: stored move {m} is off the {n}-cell grid")
                c = inverse[k][m]
                why = illegal_reason(f, s, c)
                if why:
                    raise Hole(path, f"illegal book move: {why}")
                children = (c,)
            else:
                children = legal(f, s)
            stones = nf + s.bit_count() + 1
            for c in children:
                bit = 1 << c
                if mover == 0:
                    cf, cs = f | bit, s
                    b = cf
                else:
                    cf, cs = f, s | bit
                    b = cs
                for m in pats_by_cell[c]:
                    if b & m == m:
                        outcome = FIRST_WINS if mover == 0 else SECOND_WINS
                        break
                else:
                    if stones >= cap or not (cellmask & ~(cf | cs)):
                        outcome = DRAW
                    else:
                        ck, kk = canon(cf, cs)
                        if ck not in visited:
                            visited.add(ck)
                            stack.append((cf, cs, ck, kk, (path, c)))
                        continue
                if bad_end(outcome):
                    raise Hole((path, c), end_msg(outcome))
    except Hole as hole:
        hole.nodes = nodes
        raise
    return nodes


class Tick(NamedTuple):
    """How far the verification has got (the fields of pndb's progress.Tick, for its CLI)."""

    step: str
    done: int
    total: int | None = None
    unit: str = "positions"


TICK = 1 << 14  # positions between two Ticks
PLAIN_SECONDS = 5.0  # between two progress lines of main()


def plans(claim: str) -> list[tuple[int, int]]:
    """The strategies a claim needs, as (owner, threshold): the first player's forcing at least
    the threshold (owner 0), the second's forcing at most it (owner 1); a draw needs both."""
    if claim == "first-wins":
        return [(0, FIRST_WINS)]
    if claim == "second-wins":
        return [(1, SECOND_WINS)]
    return [(0, DRAW), (1, DRAW)]


def book_report(header: dict, records: int, version: int, certificates: dict) -> Report:
    """A report of a book not (yet) proven, with what its file holds."""
    return Report(
        False,
        1,
        "",
        game=header["game"],
        value=header["value"],
        records=records,
        format_version=version,
        certificates=sum(map(len, certificates.values())),
    )


def run_walks(rep: Report, walks, start_cells: list, line_name, used, progress=None) -> Report:
    """Run the strategy walks, given as (step, walk) with ``walk(tick)`` returning the positions
    it checked or raising Hole, and complete the report: proven, or the first hole with its line
    (``start_cells`` and the hole's path, named by ``line_name``). ``used()`` counts the
    certificates that ended a line. ``progress`` gets a Tick when each walk starts and every
    TICK positions."""
    t0 = time.perf_counter()
    total = 0
    for step, walk in walks:
        tick = None
        if progress:
            progress(Tick(step, 0))

            def tick(n, step=step):
                progress(Tick(step, n))

        try:
            total += walk(tick)
        except Hole as hole:
            rep.certificates_used = used()
            line = start_cells + _unwind(hole.path)
            rep.positions = total + hole.nodes
            rep.seconds = time.perf_counter() - t0
            rep.hole = line
            rep.hole_moves = line_name(line)
            rep.message = f"not proven: at {rep.hole_moves}: {hole.message}"
            return rep
    rep.ok, rep.exit_code = True, 0
    rep.certificates_used = used()
    rep.positions = total
    rep.seconds = time.perf_counter() - t0
    rep.message = f"proven: {rep.game} is {rep.value}"
    return rep


def verify_book(book: Book, progress=None) -> Report:
    """Check a parsed book: its rules (against the named game, then the symmetries), its start
    position, and the proof of its value. ``progress`` gets a Tick when each strategy's walk
    starts and every TICK positions."""
    h = book.header
    game, claim = h["game"], h["value"]
    rep = book_report(h, len(book.keys), book.version, book.certificates)
    ref = reference_rules(game)
    if ref is not None:
        diffs = compare_rules(ref, book.rules, game)
        if diffs:
            raise NotProven("rules are not those of the named game: " + "; ".join(diffs))
    check_symmetries(book.rules)
    eng = Engine(book.rules)
    checker = CertificateChecker(eng, book.certificates)
    f0, s0, start_cells = check_start(book, eng)
    walks = [
        (
            f"checking the {PLAYER_NAME[owner]}'s strategy "
            f"({'at least' if owner == 0 else 'at most'} {OUTCOME_NAME[thr]})",
            functools.partial(walk_strategy, book, eng, (f0, s0), owner, thr, claim, checker),
        )
        for owner, thr in plans(claim)
    ]
    return run_walks(rep, walks, start_cells, book.rules.line_name, lambda: checker.used, progress)


def verify_file(path, progress=None) -> Report:
    """Read and verify a book; never raises for a bad book (the Report says what is wrong).
    ``progress`` gets a Tick before the book is read (reading a large one takes seconds)."""
    try:
        if progress:
            progress(Tick("reading the book", 0))
        layout, data = read_layout(path)
        if is_go_book(layout.header):
            return go_family().verify_go_book(layout, data, progress)
        return verify_book(placement_book(layout, data), progress)
    except BookError as e:
        return Report(False, 2, f"error: {e}")
    except NotProven as e:
        return Report(False, 1, f"not proven: {e}")


class PlainProgress:
    """Progress as plain lines on stderr: when a step starts and every PLAIN_SECONDS."""

    def __init__(self):
        self.step, self.shown_at = None, 0.0

    def __call__(self, tick):
        now = time.monotonic()
        if tick.step != self.step or now - self.shown_at >= PLAIN_SECONDS:
            count = f": {tick.done:,} {tick.unit}" if tick.done else ""
            print(f"verify: {tick.step}{count}", file=sys.stderr, flush=True)
            self.step, self.shown_at = tick.step, now


def main(argv=None, progress=None) -> int:
    """The command line; ``progress`` renders Ticks (default: plain lines on stderr). Ctrl-C
    exits 130 with one line."""
    ap = argparse.ArgumentParser(description="Verify a pndb solution book independently of pndb.")
    ap.add_argument("book")
    ap.add_argument("--quiet", action="store_true", help="print only the verdict line")
    a = ap.parse_args(argv)
    progress = None if a.quiet else (progress or PlainProgress())
    try:
        rep = verify_file(a.book, progress)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    stats = (
        f"{rep.positions} positions checked in {rep.seconds:.2f} s "
        f"({rep.rate:,.0f} positions/s), {rep.records} records"
    )
    if rep.format_version == 2:
        stats += f", {rep.certificates} certificates ({rep.certificates_used} ended a line)"
    # The verdict (proven or not) goes to stdout; a file that is not a readable book is an error
    # on stderr, like pndb's own CLI errors.
    if rep.exit_code == 0:
        print(f"OK {rep.message}; {stats}")
    elif rep.exit_code == 1:
        print(f"FAIL {rep.message}" + (f"; {stats}" if rep.game is not None else ""))
    else:
        print(rep.message, file=sys.stderr)
    return rep.exit_code


if __name__ == "__main__":
    sys.exit(main())
