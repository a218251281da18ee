"""The Go family of the standalone book verifier (tools/verify.py dispatches Go books here).

Written from docs/go.md (the rules, the score, the values) and docs/go-book-format.md (the
header, the keys, the records, the margin-bound certificate, the walk) alone, and importing
nothing from pndb: a Go book is believed because this module replays every line from the start
with its full history, so that positional superko is applied exactly, with rules of its own.

The book's layout, the errors and the report are those of tools/verify.py (one module per family,
one file format).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
from typing import NamedTuple

if __package__:
    from . import verify as v
else:
    import verify as v

PASS = 64  # a pass, as a move byte and in start.cells
MAX_SIDE = 7
RULES_TEXT = "area scoring (Tromp-Taylor), positional superko, no suicide, two passes end"
RULE_FIELDS = {"name", "family", "width", "height", "komi", "rules"}
START_FIELDS = {"moves", "cells", "black", "white", "black_to_move", "passes", "history"}
KIND_MARGIN_BOUND = 3
SPEC = re.compile(r"go:([1-9])x([1-9])(?::komi=(-?\d+))?")
PLAYER = ("Black", "White")


class Spec(NamedTuple):
    """A Go game as its spec names it (go.md, "The spec")."""

    width: int
    height: int
    komi: int


def parse_spec(game: str) -> Spec:
    """The canonical spec `go:WxH[:komi=K]` (komi 0 left out); anything else is a malformed
    header."""
    m = SPEC.fullmatch(game)
    if not m:
        raise v.BookError(f"malformed header: game {game!r} is not a Go spec go:WxH[:komi=K]")
    w, h = int(m.group(1)), int(m.group(2))
    komi = int(m.group(3)) if m.group(3) is not None else 0
    if w > MAX_SIDE or h > MAX_SIDE:
        raise v.BookError(f"malformed header: game {game!r}: Go boards are at most {MAX_SIDE}x{MAX_SIDE}")
    if abs(komi) > w * h + 1:
        raise v.BookError(f"malformed header: game {game!r}: |komi| is more than W*H + 1 = {w * h + 1}")
    canonical = f"go:{w}x{h}" + (f":komi={komi}" if komi else "")
    if game != canonical:
        raise v.BookError(f"malformed header: game {game!r} is not the canonical spec {canonical!r}")
    return Spec(w, h, komi)


def check_rules(game: str, rules) -> Spec:
    """The header's rules: exactly the six fields, naming the game of ``game``
    (go-book-format.md, "Header"). Malformed data is a BookError; rules of another game are
    NotProven, as for the other families."""
    spec = parse_spec(game)
    if set(rules) != RULE_FIELDS:
        extra, missing = sorted(set(rules) - RULE_FIELDS), sorted(RULE_FIELDS - set(rules))
        what = f"unknown key {extra[0]!r}" if extra else f"missing {missing[0]!r}"
        raise v.BookError(f"malformed rules: {what}")
    for k in ("width", "height", "komi"):
        if not v._is_int(rules[k]):
            raise v.BookError(f"malformed rules: {k} is not an integer")
    if rules["rules"] != RULES_TEXT:
        raise v.BookError(f"malformed rules: rules is {rules['rules']!r}, not {RULES_TEXT!r}")
    diffs = [
        f"{k} {rules[k]!r}, {game} has {want!r}"
        for k, want in (("name", game), ("width", spec.width), ("height", spec.height), ("komi", spec.komi))
        if rules[k] != want
    ]
    if diffs:
        raise v.NotProven("rules are not those of the named game: " + "; ".join(diffs))
    return spec


# --------------------------------------------------------------------------------------------
# The rules (go.md, "The rules", "The score")
# --------------------------------------------------------------------------------------------


def bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


class Position(NamedTuple):
    """A position of go.md: the board, who is to move, the passes just played and the history
    (every board of the game so far, the current one included)."""

    black: int
    white: int
    black_to_move: bool
    passes: int
    history: frozenset


class Board:
    """Go on a W x H board: neighbours, captures, legality, the score and the symmetries."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.w, self.h, self.komi = spec
        self.n = self.w * self.h
        self.full = (1 << self.n) - 1
        col0 = sum(1 << (r * self.w) for r in range(self.h))
        self.not_first_col = self.full & ~col0
        self.not_last_col = self.full & ~(col0 << (self.w - 1))
        self.perms = symmetries(self.w, self.h)
        self.inverse = v.inverse_permutations(self.perms, self.n)
        self.images = [{} for _ in self.perms]  # per symmetry: bitboard -> its image

    # --- notation ---------------------------------------------------------------------------
    def move_name(self, c: int) -> str:
        if c == PASS:
            return "pass"
        r, col = divmod(c, self.w)
        return f"{chr(97 + col)}{r + 1}"

    def line_name(self, cells) -> str:
        return " ".join(self.move_name(c) for c in cells) if cells else "(the empty board)"

    def parse_moves(self, text) -> list[int]:
        """A game in go.md's notation (moves separated by spaces or commas, or run together)."""
        t = text.strip().lower() if isinstance(text, str) else None
        if t is None or not re.fullmatch(r"(?:pass|[a-z]\d+|[\s,])*", t):
            raise v.BookError(f"malformed header: start.moves {text!r} is not a game in Go notation")
        out = []
        for tok in re.findall(r"pass|[a-z]\d+", t):
            if tok == "pass":
                out.append(PASS)
                continue
            col, row = ord(tok[0]) - 97, int(tok[1:]) - 1
            if not (col < self.w and 0 <= row < self.h):
                raise v.BookError(f"malformed header: start.moves names {tok}, not a point of the board")
            out.append(row * self.w + col)
        return out

    # --- stones -----------------------------------------------------------------------------
    def spread(self, x: int) -> int:
        """The points adjacent to a point of x."""
        return (
            ((x << 1) & self.not_first_col)
            | ((x >> 1) & self.not_last_col)
            | ((x << self.w) & self.full)
            | (x >> self.w)
        )

    def group(self, p: int, stones: int) -> int:
        """The group of the stone on p among ``stones``."""
        g = frontier = 1 << p
        while frontier:
            frontier = self.spread(frontier) & stones & ~g
            g |= frontier
        return g

    def play(self, pos: Position, p: int):
        """The child after a stone on point p, or why the rules forbid it (a string)."""
        bit = 1 << p
        if (pos.black | pos.white) & bit:
            return f"{self.move_name(p)} is occupied"
        me, op = (pos.black, pos.white) if pos.black_to_move else (pos.white, pos.black)
        me |= bit
        empty = self.full & ~(me | op)
        rest = op
        while rest:  # every opponent group without a liberty is removed
            g = self.group((rest & -rest).bit_length() - 1, op)
            rest &= ~g
            if not self.spread(g) & empty:
                op &= ~g
        if not self.spread(self.group(p, me)) & self.full & ~(me | op):
            return f"{self.move_name(p)} is suicide"
        board = (me, op) if pos.black_to_move else (op, me)
        if board in pos.history:
            return f"{self.move_name(p)} repeats an earlier board (positional superko)"
        return Position(*board, not pos.black_to_move, 0, pos.history | {board})

    def pass_(self, pos: Position) -> Position:
        return pos._replace(black_to_move=not pos.black_to_move, passes=pos.passes + 1)

    def children(self, pos: Position):
        """(move, child) for every legal move: each legal stone, then the pass."""
        for p in range(self.n):
            child = self.play(pos, p)
            if isinstance(child, Position):
                yield p, child
        yield PASS, self.pass_(pos)

    def margin(self, black: int, white: int) -> int:
        """Black's area (Tromp-Taylor) minus White's."""
        score = black.bit_count() - white.bit_count()
        empty = self.full & ~(black | white)
        while empty:
            region = self.group((empty & -empty).bit_length() - 1, self.full & ~(black | white))
            empty &= ~region
            rim = self.spread(region)
            if rim & black and not rim & white:
                score += region.bit_count()
            elif rim & white and not rim & black:
                score -= region.bit_count()
        return score

    def outcome(self, pos: Position) -> int:
        m = self.margin(pos.black, pos.white)
        return v.FIRST_WINS if m > self.komi else v.DRAW if m == self.komi else v.SECOND_WINS

    # --- keys (go-book-format.md, "A position and its key") ---------------------------------
    def image(self, k: int, x: int) -> int:
        cache = self.images[k]
        y = cache.get(x)
        if y is None:
            perm = self.perms[k]
            y = cache[x] = sum(1 << perm[p] for p in bits(x))
        return y

    def canonical(self, pos: Position) -> tuple[bytes, int]:
        """The canonical encoding of an ongoing position and a symmetry that gives it."""
        best = None
        for k in range(len(self.perms)):
            board = (self.image(k, pos.black), self.image(k, pos.white))
            if best is not None and board > best[0]:
                continue
            form = (board, sorted((self.image(k, b), self.image(k, w)) for b, w in pos.history))
            if best is None or form < best:
                best, kbest = form, k
        (b, w), hist = best
        head = bytes((self.w, self.h, 1 if pos.black_to_move else 0, pos.passes))
        return head + b"".join(x.to_bytes(8, "big") + y.to_bytes(8, "big") for x, y in [(b, w)] + hist), kbest


def symmetries(w: int, h: int) -> list[list[int]]:
    """The permutations of go-book-format.md's table: 8 on a square board, else 4."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, w - 1 - c),
        lambda r, c: (h - 1 - r, c),
        lambda r, c: (h - 1 - r, w - 1 - c),
    ]
    if w == h:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (w - 1 - c, h - 1 - r),
            lambda r, c: (c, h - 1 - r),
            lambda r, c: (w - 1 - c, r),
        ]
    out = []
    for f in maps:
        perm = []
        for p in range(w * h):
            r2, c2 = f(*divmod(p, w))
            perm.append(r2 * w + c2)
        out.append(perm)
    return out


def key_of(encoding: bytes) -> int:
    """The 16-byte key (BLAKE2b-16 of the encoding) as an int: int order is bytewise order."""
    return int.from_bytes(hashlib.blake2b(encoding, digest_size=16).digest(), "big")


def empty_position() -> Position:
    return Position(0, 0, True, 0, frozenset({(0, 0)}))


# --------------------------------------------------------------------------------------------
# The start position
# --------------------------------------------------------------------------------------------


def check_start(go: Board, start) -> tuple[Position, list[int]]:
    """Replay start.cells from the empty board; start.moves and the other fields must be what
    those moves give (go-book-format.md, "Header")."""
    if not isinstance(start, dict) or not START_FIELDS <= set(start):
        raise v.BookError("malformed header: start needs " + ", ".join(sorted(START_FIELDS)))
    cells = start["cells"]
    if not isinstance(cells, list) or not all(v._is_int(c) and (0 <= c < go.n or c == PASS) for c in cells):
        raise v.BookError(
            f"malformed header: start.cells is not a list of points (0 to {go.n - 1}) and passes (64)"
        )
    named = go.parse_moves(start["moves"])
    if named != cells:
        raise v.BookError(
            f"inconsistent start: start.moves {start['moves']!r} is {go.line_name(named)}, "
            f"start.cells is {go.line_name(cells)}"
        )
    pos = empty_position()
    for i, c in enumerate(cells):
        if pos.passes == 2:
            raise v.BookError(f"inconsistent start: the game is over before move {i + 1} ({go.move_name(c)})")
        child = go.pass_(pos) if c == PASS else go.play(pos, c)
        if not isinstance(child, Position):
            raise v.BookError(f"inconsistent start: move {i + 1} is illegal: {child}")
        pos = child
    replayed = {
        "black": pos.black,
        "white": pos.white,
        "black_to_move": pos.black_to_move,
        "passes": pos.passes,
        "history": [list(b) for b in sorted(pos.history)],
    }
    for k, want in replayed.items():
        got = start[k]
        if got != want or isinstance(got, bool) != isinstance(want, bool):
            raise v.BookError(
                f"inconsistent start: start.{k} is {got!r}, the moves {start['moves']!r} give {want!r}"
            )
    return pos, list(cells)


# --------------------------------------------------------------------------------------------
# Records and certificates
# --------------------------------------------------------------------------------------------


def check_moves(moves: bytes, n: int) -> None:
    """A record's move is a point, 64 (a pass) or 255 (none); any other byte is damage."""
    for i, m in enumerate(moves):
        if m >= n and m not in (PASS, v.NO_MOVE):
            raise v.BookError(
                f"corrupt book: record {i} has move byte {m} (a point 0 to {n - 1}, 64 for a pass, or 255)"
            )


def parse_margin_bound(payload: bytes, where: str) -> None:
    if payload:
        raise v.BookError(f"corrupt book: {where}: a kind 3 payload has {len(payload)} bytes, not 0")


def margin_bound(spec: Spec) -> int | None:
    """The value code the margin bound proves at this komi (any position), None if it proves
    nothing (go-book-format.md, "Kind 3: the margin bound")."""
    n = spec.width * spec.height
    if spec.komi > n:
        return 2  # second-wins
    if spec.komi == n:
        return 4  # first-wont-win
    if spec.komi == -n:
        return 5  # second-wont-win
    if spec.komi < -n:
        return 1  # first-wins
    return None


class GoBook(NamedTuple):
    header: dict
    spec: Spec
    keys: list
    moves: bytes
    values: bytes
    version: int
    certificates: dict  # key -> [Certificate]


def read_go_book(layout, data: bytes) -> GoBook:
    header = layout.header
    spec = check_rules(header["game"], header["rules"])
    keys, moves, values, blob = v.split_body(layout, data)
    check_moves(moves, spec.width * spec.height)
    certs = {}
    if layout.version == 2:
        certs = v.parse_certificates(
            blob,
            header["certificates"],
            keys,
            {KIND_MARGIN_BOUND: parse_margin_bound},
            lambda key: f"key {key:032x}",
        )
    return GoBook(header, spec, keys, moves, values, layout.version, certs)


# --------------------------------------------------------------------------------------------
# The walk (go-book-format.md, "What a Go book proves, and how to check it")
# --------------------------------------------------------------------------------------------


class Strategy(NamedTuple):
    """One player's strategy: Black's forcing an outcome of at least ``threshold`` (owner 0),
    or White's forcing at most it (owner 1)."""

    owner: int
    threshold: int

    def holds(self, outcome: int) -> bool:
        return outcome >= self.threshold if self.owner == 0 else outcome <= self.threshold

    def allows(self, code: int) -> bool:
        """Whether a value code's interval leaves room for what the strategy forces."""
        lo, hi = v.CODE_INTERVAL[code]
        return hi >= self.threshold if self.owner == 0 else lo <= self.threshold

    def aim(self, komi: int) -> str:
        rel = {
            (0, v.FIRST_WINS): "above",
            (0, v.DRAW): "of at least",
            (1, v.DRAW): "of at most",
            (1, v.SECOND_WINS): "below",
        }[self]
        return f"a margin {rel} the komi {komi}"

    def need(self, komi: int) -> str:
        return f"{PLAYER[self.owner]}'s strategy must force {self.aim(komi)}"


def walk(book: GoBook, go: Board, start: Position, strat: Strategy, used: list, tick=None) -> int:
    """Check one strategy from the start: the book's move where its owner is to move, every legal
    move elsewhere; each line must end in a finished game the strategy allows, or at a margin
    bound certificate that proves as much. Positions are remembered by canonical encoding, which
    the format shows decides the whole future (so the memo is exact). Returns the positions
    checked; raises verify.Hole with the line. ``used[0]`` counts certificates that ended a
    line."""
    keys, moves, values, certs = book.keys, book.moves, book.values, book.certificates
    claim, komi = book.header["value"], go.komi
    need = f"{strat.need(komi)} (book claims {claim})"
    bound = margin_bound(go.spec)

    def end(pos, path):
        if not strat.holds(go.outcome(pos)):
            m = go.margin(pos.black, pos.white)
            raise v.Hole(path, f"the game ends with Black's margin {m:+d}, but {need}")

    if start.passes == 2:
        end(start, None)
        return 1
    enc, k = go.canonical(start)
    seen = {enc}
    stack = [(start, enc, k, None)]
    nodes = 0
    try:
        while stack:
            pos, enc, k, path = stack.pop()
            nodes += 1
            if tick is not None and not nodes % v.TICK:
                tick(nodes)
            key = key_of(enc)
            i = bisect.bisect_left(keys, key)
            has = i < len(keys) and keys[i] == key
            if has:
                code = values[i]
                if not strat.allows(code):
                    raise v.Hole(
                        path,
                        f"record value contradicts claim: the record says {v.CODE_NAME[code]}, but {need}",
                    )
                if key in certs:
                    if bound is None:
                        raise v.Hole(
                            path,
                            f"invalid margin bound certificate: at komi {komi} it proves nothing "
                            f"(|komi| is below W*H = {go.n})",
                        )
                    try:
                        v.check_record_includes(code, bound)
                    except v.CertificateInvalid as e:
                        raise v.Hole(path, str(e)) from None
                    # [lo, hi] serves Black's strategy when lo >= t, White's when hi <= t
                    if strat.holds(v.CODE_INTERVAL[bound][strat.owner]):
                        used[0] += 1
                        continue
            mover = 0 if pos.black_to_move else 1
            if mover == strat.owner:
                if not has:
                    raise v.Hole(path, f"no record: {PLAYER[mover]} is to move and the book has no move here")
                m = moves[i]
                if m == v.NO_MOVE:
                    raise v.Hole(
                        path,
                        f"no move: the record for this {PLAYER[mover]}-to-move position stores none (255)",
                    )
                c = PASS if m == PASS else go.inverse[k][m]
                child = go.pass_(pos) if c == PASS else go.play(pos, c)
                if not isinstance(child, Position):
                    raise v.Hole(path, f"illegal book move: {child}")
                children = [(c, child)]
            else:
                children = go.children(pos)
            for c, child in children:
                if child.passes == 2:
                    end(child, (path, c))
                    continue
                cenc, ck = go.canonical(child)
                if cenc not in seen:
                    seen.add(cenc)
                    stack.append((child, cenc, ck, (path, c)))
    except v.Hole as hole:
        hole.nodes = nodes
        raise
    return nodes


def verify_go_book(layout, data: bytes, progress=None):
    """Check a Go book whose layout and shared header fields tools/verify.py has read: its rules,
    its start, and the proof of its value (a verify.Report)."""
    book = read_go_book(layout, data)
    go = Board(book.spec)
    start, start_cells = check_start(go, book.header["start"])
    rep = v.book_report(book.header, len(book.keys), book.version, book.certificates)
    used = [0]
    strategies = [Strategy(owner, thr) for owner, thr in v.plans(book.header["value"])]
    walks = [
        (
            f"checking {PLAYER[strat.owner]}'s strategy ({strat.aim(go.komi)})",
            functools.partial(walk, book, go, start, strat, used),
        )
        for strat in strategies
    ]
    return v.run_walks(rep, walks, start_cells, go.line_name, lambda: used[0], progress)
