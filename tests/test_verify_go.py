"""Tests for the Go family of tools/verify.py (tools/verify_go.py).

Why these tests write their own books: the verifier exists so that nobody has to trust pndb's
solver, and pndb's Go export is not what is under test. The writer below is a plain model of
docs/go.md (points as sets, not bitboards), a minimax with the full history of every line, and a
serialiser of docs/go-book-format.md, all written from the documents; the tests check that the
verifier accepts its honest books of go:2x2 and rejects damaged or lying ones with the line
named.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from verify_books import write

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))
import verify  # noqa: E402
import verify_go  # noqa: E402

PASS = 64
RULES_TEXT = "area scoring (Tromp-Taylor), positional superko, no suicide, two passes end"
FIRST, DRAW, SECOND = "first-wins", "draw", "second-wins"
CODE = {FIRST: 1, SECOND: 2, DRAW: 3}
RANK = [SECOND, DRAW, FIRST]


# --------------------------------------------------------------------------------------------
# A plain model of go.md: a board is a tuple of W*H entries, '.', 'X' (Black) or 'O' (White)
# --------------------------------------------------------------------------------------------


class State(NamedTuple):
    board: tuple
    black: bool  # Black to move
    passes: int
    seen: frozenset  # every board of the game so far, this one included


class Model:
    def __init__(self, w, h, komi=0):
        self.w, self.h, self.komi = w, h, komi
        self.n = w * h

    def adjacent(self, p):
        r, c = divmod(p, self.w)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= r + dr < self.h and 0 <= c + dc < self.w:
                yield (r + dr) * self.w + c + dc

    def chain(self, board, p):
        """The points connected to p through points of p's content (a group, or an empty region)."""
        todo, out = [p], {p}
        while todo:
            for q in self.adjacent(todo.pop()):
                if q not in out and board[q] == board[p]:
                    out.add(q)
                    todo.append(q)
        return out

    def liberties(self, board, group):
        return {q for p in group for q in self.adjacent(p) if board[q] == "."}

    def start(self):
        empty = ("." * self.n,)
        board = tuple(empty[0])
        return State(board, True, 0, frozenset({board}))

    def play(self, s: State, p):
        """The state after move p (a point, or PASS), or None when the rules forbid it."""
        if p == PASS:
            return State(s.board, not s.black, s.passes + 1, s.seen)
        if s.board[p] != ".":
            return None
        me, them = ("X", "O") if s.black else ("O", "X")
        board = list(s.board)
        board[p] = me
        for q in range(self.n):
            if board[q] == them and not self.liberties(board, self.chain(board, q)):
                for x in self.chain(board, q):
                    board[x] = "."
        if not self.liberties(board, self.chain(board, p)):
            return None  # suicide
        board = tuple(board)
        if board in s.seen:
            return None  # positional superko
        return State(board, not s.black, 0, s.seen | {board})

    def moves(self, s):
        """The legal moves, the pass first: on 2x2 passes end most lines at once, which keeps the
        plain searches below to about a thousand positions."""
        return [p for p in [PASS] + list(range(self.n)) if self.play(s, p) is not None]

    def margin(self, board):
        score = 0
        for p in range(self.n):
            if board[p] == "X":
                score += 1
            elif board[p] == "O":
                score -= 1
            else:
                near = {board[q] for x in self.chain(board, p) for q in self.adjacent(x)} - {"."}
                score += (near == {"X"}) - (near == {"O"})
        return score

    def outcome(self, board):
        m = self.margin(board)
        return FIRST if m > self.komi else DRAW if m == self.komi else SECOND

    def replay(self, moves: str):
        s = self.start()
        for tok in moves.split():
            p = PASS if tok == "pass" else (int(tok[1:]) - 1) * self.w + ord(tok[0]) - 97
            s = self.play(s, p)
            assert s is not None, tok
        return s

    def name(self, p):
        return "pass" if p == PASS else f"{chr(97 + p % self.w)}{p // self.w + 1}"

    # --- the key of go-book-format.md --------------------------------------------------------
    def perms(self):
        w, h = self.w, self.h
        maps = [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1)]  # (transpose, flip rows, flip columns)
        if w == h:
            maps += [(1, 0, 0), (1, 1, 1), (1, 0, 1), (1, 1, 0)]
        out = []
        for t, fr, fc in maps:
            perm = []
            for p in range(self.n):
                r, c = divmod(p, w)
                r2, c2 = (c, r) if t else (r, c)
                r2 = h - 1 - r2 if fr else r2
                c2 = w - 1 - c2 if fc else c2
                perm.append(r2 * w + c2)
            out.append(perm)
        return out

    def bitboards(self, board, perm):
        b = sum(1 << perm[p] for p in range(self.n) if board[p] == "X")
        w = sum(1 << perm[p] for p in range(self.n) if board[p] == "O")
        return b, w

    def canonical(self, s: State):
        """(encoding, perm): the least form over the symmetries, and a symmetry giving it."""
        forms = []
        for perm in self.perms():
            forms.append(
                ((self.bitboards(s.board, perm), sorted(self.bitboards(x, perm) for x in s.seen)), perm)
            )
        (cur, hist), perm = min(forms)
        enc = bytes([self.w, self.h, int(s.black), s.passes])
        enc += b"".join(struct.pack(">QQ", b, w) for b, w in [cur] + hist)
        return enc, perm

    def key(self, s: State) -> bytes:
        return hashlib.blake2b(self.canonical(s)[0], digest_size=16).digest()

    # --- minimax with the full history ---------------------------------------------------------
    @functools.cache
    def at_least(self, s: State, r: int) -> bool:
        """Whether Black can force an outcome of rank at least r (RANK) from s, White resisting;
        White can force at most r exactly when Black cannot force r + 1."""
        if s.passes == 2:
            return RANK.index(self.outcome(s.board)) >= r
        children = (self.at_least(self.play(s, p), r) for p in self.moves(s))
        return any(children) if s.black else all(children)

    def value(self, s: State) -> str:
        """Perfect play: Black maximises, White minimises (second-wins < draw < first-wins)."""
        return RANK[max(r for r in range(3) if self.at_least(s, r))]

    def forces(self, s: State, owner_black: bool, want: str) -> bool:
        """Whether the owner forces ``want`` or better for them from s."""
        r = RANK.index(want)
        return self.at_least(s, r) if owner_black else r == 2 or not self.at_least(s, r + 1)


# --------------------------------------------------------------------------------------------
# The book writer (go-book-format.md)
# --------------------------------------------------------------------------------------------


def strategy_records(g: Model, start: State, owner_black: bool, want: str, records: dict, owners: dict):
    """Walk one strategy: at the owner's positions the first move that keeps ``want`` (a record
    with it, and in ``owners`` the first state of its key), elsewhere every move."""
    todo, seen = [start], set()
    while todo:
        s = todo.pop()
        if s.passes == 2 or s in seen:
            continue
        seen.add(s)
        if s.black == owner_black:
            _, perm = g.canonical(s)
            key = g.key(s)
            if key in records:  # a symmetric or equal position met before: its move, mapped here
                m = records[key][0]
                p = PASS if m == PASS else perm.index(m)
                assert g.forces(g.play(s, p), owner_black, want)
            else:
                p = next(p for p in g.moves(s) if g.forces(g.play(s, p), owner_black, want))
                records[key] = (PASS if p == PASS else perm[p], CODE[g.value(s)])
                owners[key] = s
            todo.append(g.play(s, p))
        else:
            todo += [g.play(s, p) for p in g.moves(s)]


def book_records(g: Model, start: State) -> tuple[str, dict, dict]:
    """The start's value, the records of its strategies, and the state of each record."""
    value = g.value(start)
    records: dict = {}
    owners: dict = {}
    if value in (FIRST, DRAW):
        strategy_records(g, start, True, value, records, owners)
    if value in (SECOND, DRAW):
        strategy_records(g, start, False, value, records, owners)
    return value, records, owners


def spec(w, h, komi):
    return f"go:{w}x{h}" + (f":komi={komi}" if komi else "")


def book_bytes(g: Model, value, records, *, certs=(), start_moves="", patch=None) -> bytes:
    """A book exactly as go-book-format.md lays it out; ``certs`` are (key, kind, payload)."""
    s = g.replay(start_moves)
    start_cells = [
        PASS if t == "pass" else (int(t[1:]) - 1) * g.w + ord(t[0]) - 97 for t in start_moves.split()
    ]
    version = 2 if certs else 1
    ident = list(range(g.n))
    black, white = g.bitboards(s.board, ident)
    header = {
        "format": "pndb-book",
        "format_version": version,
        "pndb_version": "test",
        "game": spec(g.w, g.h, g.komi),
        "rules": {
            "name": spec(g.w, g.h, g.komi),
            "family": "go",
            "width": g.w,
            "height": g.h,
            "komi": g.komi,
            "rules": RULES_TEXT,
        },
        "start": {
            "moves": start_moves,
            "cells": start_cells,
            "black": black,
            "white": white,
            "black_to_move": s.black,
            "passes": s.passes,
            "history": sorted(list(g.bitboards(x, ident)) for x in s.seen),
        },
        "value": value,
        "partial": False,
        "records": len(records),
        "record_size": 18,
    }
    entries = [k + bytes([kind]) + struct.pack(">H", len(pl)) + pl for k, kind, pl in sorted(certs)]
    if version == 2:
        header["certificates"] = len(entries)
        header["certificate_bytes"] = sum(map(len, entries))
    if patch:
        patch(header)
    hj = json.dumps(header).encode()
    body = b"".join(k + bytes([m, c]) for k, (m, c) in sorted(records.items()))
    return b"PNBOOK\x00" + bytes([version]) + struct.pack(">I", len(hj)) + hj + body + b"".join(entries)


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


class Solved(NamedTuple):
    g: Model
    value: str
    records: dict
    owners: dict  # key -> a state of the strategies with that key (its owner to move)

    def bytes(self, **kw):
        return book_bytes(self.g, self.value, self.records, **kw)


@functools.cache
def solved(komi) -> Solved:
    g = Model(2, 2, komi)
    return Solved(g, *book_records(g, g.start()))


def line_states(g: Model, line: str):
    """Every state along a line the verifier named (each move must be legal)."""
    s = g.start()
    out = [s]
    if line != "(the empty board)":
        for tok in line.split():
            s = g.play(s, PASS if tok == "pass" else (int(tok[1:]) - 1) * g.w + ord(tok[0]) - 97)
            assert s is not None, f"the named line {line!r} is not a legal game"
            out.append(s)
    return out


def named_line(rep) -> str:
    assert rep.exit_code == 1 and rep.hole_moves is not None, rep.message
    assert rep.message.startswith(f"not proven: at {rep.hole_moves}: "), rep.message
    return rep.hole_moves


# --------------------------------------------------------------------------------------------
# Keys and values
# --------------------------------------------------------------------------------------------

EXAMPLE_KEYS = [  # go-book-format.md, "A position and its key" (go:2x2)
    ("", "1b50a24ca32121ca69069e2126bc9213"),
    ("a1", "39bcd40b09f327fecca82984e384c412"),
    ("a1 pass", "edb978f8a67a0ecb0a766ce4d91fb9d2"),
    ("a1 b2", "4b4062b494f9b425d5c488d419f286cc"),
    ("a1 b2 b1", "b98b88a706fa2fff63b868c421b9d63d"),
]


@pytest.mark.parametrize("moves,key", EXAMPLE_KEYS)
def test_example_keys(moves, key):
    """The documented keys, by the verifier's key function and by this test's own."""
    g = Model(2, 2)
    board = verify_go.Board(verify_go.Spec(2, 2, 0))
    pos = verify_go.empty_position()
    for c in board.parse_moves(moves):
        pos = board.pass_(pos) if c == verify_go.PASS else board.play(pos, c)
    enc, _ = board.canonical(pos)
    assert f"{verify_go.key_of(enc):032x}" == key
    assert g.key(g.replay(moves)).hex() == key


def test_reference_values():
    """The model's minimax agrees with go.md: Black's margin on 2x2 is 1."""
    assert [solved(k).value for k in (0, 1, 2)] == [FIRST, DRAW, SECOND]


@pytest.mark.parametrize("w,h", [(2, 2), (3, 2), (3, 3)])
def test_rules_agree_with_the_model(w, h):
    """Over random games (captures, suicide, superko, passes), the verifier's legal moves, boards,
    histories and scores are the model's."""
    rng = random.Random(w * 10 + h)
    g = Model(w, h)
    board = verify_go.Board(verify_go.Spec(w, h, 0))
    ident = list(range(g.n))
    met = set()  # which rules the games exercised
    for _ in range(100):
        s, pos = g.start(), verify_go.empty_position()
        for _ in range(60):
            if s.passes == 2:
                break
            legal = [c for c, _ in board.children(pos)]
            assert sorted(legal) == sorted(g.moves(s)), (s, pos)
            for q in range(g.n):
                if s.board[q] == "." and q not in legal:
                    met.add("superko" if g.play(s._replace(seen=frozenset()), q) else "suicide")
            stones = g.n - s.board.count(".")
            p = rng.choice([p for p in legal if p != PASS] or [PASS]) if rng.random() > 0.2 else PASS
            s, pos = g.play(s, p), dict(board.children(pos))[p]
            assert (pos.black, pos.white) == g.bitboards(s.board, ident)
            if p != PASS and g.n - s.board.count(".") <= stones:
                met.add("capture")
            assert pos.history == {g.bitboards(x, ident) for x in s.seen}
            assert (pos.black_to_move, pos.passes) == (s.black, s.passes)
            assert board.margin(pos.black, pos.white) == g.margin(s.board)
    assert met == {"capture", "suicide", "superko"}


# --------------------------------------------------------------------------------------------
# Honest books verify
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("komi", [0, 1, 2])
def test_honest_books_verify(komi, tmp_path):
    s = solved(komi)
    rep = verify.verify_file(write(tmp_path, "b.pnbook", s.bytes()))
    assert rep.exit_code == 0, rep.message
    assert rep.message == f"proven: {spec(2, 2, komi)} is {s.value}"
    assert rep.positions > 0 and rep.records == len(s.records)


def test_cli_from_another_directory(tmp_path):
    """`python tools/verify.py BOOK` from anywhere: exit 0 on an honest book, 1 on a lying one, 2
    on a malformed one (an error raised in tools/verify_go.py is the script's own), one line
    each."""
    good = write(tmp_path, "g.pnbook", solved(1).bytes())
    bad = write(tmp_path, "b.pnbook", book_bytes(solved(1).g, FIRST, solved(1).records))
    broken = write(tmp_path, "m.pnbook", solved(1).bytes(patch=lambda h: h["rules"].update(komi="1")))
    for path, code, verdict in (
        (good, 0, "OK proven: go:2x2:komi=1 is draw"),
        (bad, 1, "FAIL not proven: at "),
        (broken, 2, "error: malformed rules: komi is not an integer"),
    ):
        r = subprocess.run(
            [sys.executable, str(TOOLS / "verify.py"), str(path), "--quiet"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert r.returncode == code, r.stdout + r.stderr
        assert "Traceback" not in r.stderr
        assert len((r.stdout + r.stderr).strip().splitlines()) == 1
        assert (r.stdout + r.stderr).startswith(verdict)


def test_start_after_moves(tmp_path):
    """A book whose start is a position after some moves: the walk starts there, with the history
    the start's moves built."""
    g = Model(2, 2, 1)
    start = g.replay("a1 b2 pass")
    value, records, _ = book_records(g, start)
    rep = verify.verify_file(
        write(tmp_path, "s.pnbook", book_bytes(g, value, records, start_moves="a1 b2 pass"))
    )
    assert rep.exit_code == 0, rep.message


# --------------------------------------------------------------------------------------------
# Tampered books are rejected with the line named
# --------------------------------------------------------------------------------------------


def test_tampered_move(tmp_path):
    """A record's move replaced by a legal move that loses the claim: the named line passes through
    the tampered position and is a legal game."""
    s = solved(1)
    g = s.g
    for key, st in s.owners.items():
        want = g.value(st)
        losing = [p for p in g.moves(st) if not g.forces(g.play(st, p), st.black, want)]
        if losing:
            break
    _, perm = g.canonical(st)
    p = losing[0]
    records = dict(s.records)
    records[key] = (PASS if p == PASS else perm[p], records[key][1])
    rep = verify.verify_file(write(tmp_path, "t.pnbook", book_bytes(g, s.value, records)))
    states = line_states(g, named_line(rep))
    assert key in {g.key(x) for x in states if x.passes < 2}


def test_wrong_value_claimed(tmp_path):
    """A draw claimed as a Black win, every record saying so too: Black's moves reach a game
    whose margin is only the komi."""
    s = solved(1)
    records = {k: (m, CODE[FIRST]) for k, (m, _) in s.records.items()}
    rep = verify.verify_file(write(tmp_path, "v.pnbook", book_bytes(s.g, FIRST, records)))
    states = line_states(s.g, named_line(rep))
    assert states[-1].passes == 2 and s.g.margin(states[-1].board) == 1
    assert "must force a margin above the komi 1" in rep.message


def test_record_value_contradicting_the_claim(tmp_path):
    s = solved(1)
    key = s.g.key(s.g.start())
    records = dict(s.records)
    records[key] = (records[key][0], CODE[SECOND])
    rep = verify.verify_file(write(tmp_path, "c.pnbook", book_bytes(s.g, s.value, records)))
    assert named_line(rep) == "(the empty board)"
    assert "record value contradicts claim" in rep.message


def test_missing_position(tmp_path):
    """A record of an owner-to-move position removed: the line named reaches that position."""
    s = solved(1)
    key, st = max(s.owners.items(), key=lambda x: len(x[1].seen))
    records = {k: r for k, r in s.records.items() if k != key}
    rep = verify.verify_file(write(tmp_path, "m.pnbook", book_bytes(s.g, s.value, records)))
    states = line_states(s.g, named_line(rep))
    assert "no record" in rep.message
    assert s.g.key(states[-1]) == key


def test_superko_violating_move(tmp_path):
    """A book move onto an empty point whose board after captures was seen before: refused by
    positional superko, at the position it was stored for."""
    s = solved(1)
    g = s.g
    found = None
    for key, st in s.owners.items():
        for p in range(g.n):
            if st.board[p] != ".":
                continue
            after = g.play(st._replace(seen=frozenset()), p)  # legal but for superko
            if after is not None and after.board in st.seen:
                found = st, key, p
                break
        if found:
            break
    assert found, "no superko position on the strategies of go:2x2:komi=1"
    st, key, p = found
    _, perm = g.canonical(st)
    records = dict(s.records)
    records[key] = (perm[p], records[key][1])
    rep = verify.verify_file(write(tmp_path, "k.pnbook", book_bytes(g, s.value, records)))
    states = line_states(g, named_line(rep))
    assert g.key(states[-1]) == key
    assert f"illegal book move: {g.name(p)} repeats an earlier board (positional superko)" in rep.message


def test_wrong_komi_in_rules(tmp_path):
    """The rules' komi differs from the game's: not the named game."""

    def patch(h):
        h["rules"]["komi"] = 0

    rep = verify.verify_file(write(tmp_path, "r.pnbook", solved(1).bytes(patch=patch)))
    assert rep.exit_code == 1
    assert rep.message == "not proven: rules are not those of the named game: komi 0, go:2x2:komi=1 has 1"


def test_wrong_komi_in_header(tmp_path):
    """The draw at komi 1 relabelled as a draw at komi 0: White's strategy cannot hold Black to a
    margin of 0, and the line where Black gets 1 is named."""

    def patch(h):
        h["game"] = h["rules"]["name"] = "go:2x2"
        h["rules"]["komi"] = 0

    s = solved(1)
    rep = verify.verify_file(write(tmp_path, "k.pnbook", s.bytes(patch=patch)))
    states = line_states(s.g, named_line(rep))
    assert states[-1].passes == 2 and s.g.margin(states[-1].board) == 1
    assert "White's strategy must force a margin of at most the komi 0" in rep.message


@pytest.mark.parametrize(
    "patch,message",
    [
        (lambda h: h["rules"].update(extra=1), "malformed rules: unknown key 'extra'"),
        (lambda h: h.update(game="go:2x2:komi=0"), "is not the canonical spec"),
        (lambda h: h["start"].update(passes=1), "inconsistent start: start.passes is 1"),
        (lambda h: h["start"].update(moves="a1", cells=[0]), "inconsistent start: start.black is 0"),
        (lambda h: h["start"].update(cells=[64]), "inconsistent start: start.moves '' is (the empty board)"),
    ],
)
def test_malformed_headers(tmp_path, patch, message):
    rep = verify.verify_file(write(tmp_path, "h.pnbook", solved(0).bytes(patch=patch)))
    assert rep.exit_code == 2 and message in rep.message, rep.message


def test_damaged_move_byte(tmp_path):
    s = solved(0)
    key = next(iter(sorted(s.records)))
    records = dict(s.records)
    records[key] = (63, records[key][1])
    rep = verify.verify_file(write(tmp_path, "d.pnbook", book_bytes(s.g, s.value, records)))
    assert rep.exit_code == 2 and "has move byte 63" in rep.message


# --------------------------------------------------------------------------------------------
# The margin bound certificate (kind 3)
# --------------------------------------------------------------------------------------------


def test_margin_bound_decides_at_komi_above_the_board(tmp_path):
    """At komi 5 on 2x2 (more than W*H = 4) White wins everywhere: one record and a certificate at
    the start prove it."""
    g = Model(2, 2, 5)
    key = g.key(g.start())
    book = book_bytes(g, SECOND, {key: (255, CODE[SECOND])}, certs=[(key, 3, b"")])
    rep = verify.verify_file(write(tmp_path, "c.pnbook", book))
    assert rep.exit_code == 0, rep.message
    assert rep.certificates == rep.certificates_used == 1


def test_margin_bound_is_invalid_inside_the_board(tmp_path):
    """At komi 3 the bound proves nothing: the certificate is an error on the line reaching it."""
    s = solved(3)
    key = s.g.key(s.g.start())
    records = {key: (255, CODE[s.value]), **s.records}
    rep = verify.verify_file(
        write(tmp_path, "i.pnbook", book_bytes(s.g, s.value, records, certs=[(key, 3, b"")]))
    )
    assert named_line(rep) == "(the empty board)"
    assert "invalid margin bound certificate" in rep.message


def test_margin_bound_at_the_board_serves_only_white(tmp_path):
    """At komi 4 = W*H the bound proves first-wont-win: it ends White's strategy at once, but
    Black's (of a draw claim) still needs its moves, and without them is refused."""
    g = Model(2, 2, 4)
    key = g.key(g.start())
    book = book_bytes(g, DRAW, {key: (255, CODE[DRAW])}, certs=[(key, 3, b"")])
    rep = verify.verify_file(write(tmp_path, "w.pnbook", book))
    assert named_line(rep) == "(the empty board)"
    assert "no move" in rep.message


@pytest.mark.parametrize("value,code", [(DRAW, 0), (FIRST, 1)])
def test_start_after_two_passes(tmp_path, value, code):
    """A start that ends the game (two passes) is only scored: an empty board is a margin of 0,
    a draw at komi 0, and not a Black win."""
    g = Model(2, 2, 0)
    rep = verify.verify_file(write(tmp_path, "p.pnbook", book_bytes(g, value, {}, start_moves="pass pass")))
    assert rep.exit_code == code, rep.message
    if code:
        assert named_line(rep) == "pass pass" and "margin +0" in rep.message
