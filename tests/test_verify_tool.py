"""Tests for tools/verify.py, the standalone book verifier.

Why these tests build their own books: the verifier exists so that nobody has to trust pndb's
solver, so its tests must not depend on that solver either.  The books come from
tests/verify_books.py, a small independent writer built from docs/book-format.md alone; these
tests check that the verifier accepts honest books and rejects damaged or lying ones with a
pointed message and the right exit code.
"""

from __future__ import annotations

import itertools
import random
import re
import resource
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import verify_books
import zstandard
from conftest import minimax
from verify_books import (
    DRAW,
    FIRST,
    RANK,
    SECOND,
    Game,
    Solved,
    compress,
    connect4,
    grid_symmetries,
    mnk,
    replay,
    write,
)

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))
import verify  # noqa: E402


@pytest.fixture(scope="module")
def ttt():
    return Solved(mnk(3, 3, 3))


@pytest.fixture(scope="module")
def m433():
    return Solved(mnk(4, 3, 3))


@pytest.fixture(scope="module")
def c4():
    return Solved(connect4(4, 4))


# --------------------------------------------------------------------------------------------
# Honest books verify
# --------------------------------------------------------------------------------------------


def test_reference_values(ttt, m433, c4):
    """The independent minimax agrees with docs/games.md, and fixes the value of mnk:4,3,3."""
    assert ttt.value == DRAW
    assert m433.value == FIRST
    assert c4.value == DRAW


@pytest.mark.parametrize("which", ["ttt", "m433", "c4"])
def test_honest_books_verify(which, request, tmp_path, capsys):
    s = request.getfixturevalue(which)
    p = write(tmp_path, f"{which}.pnbook", s.bytes())
    rep = verify.verify_file(p)
    assert rep.exit_code == 0, rep.message
    assert rep.ok and rep.positions > 0
    assert verify.main([str(p)]) == 0
    out = capsys.readouterr().out
    assert "positions checked" in out and "OK" in out


def test_book_from_a_start_position(tmp_path):
    """A book may start after some moves: the start is replayed and the proof runs from there."""
    s = Solved(mnk(3, 3, 3), start_cells=(4, 0))  # b2 a1: still a draw
    assert s.value == DRAW
    p = write(tmp_path, "b.pnbook", s.bytes())
    assert verify.verify_file(p).exit_code == 0
    # start bitboards that are not the position after the moves
    p = write(tmp_path, "c.pnbook", s.bytes(header_patch=lambda h: h["start"].update(second=2)))
    rep = verify.verify_file(p)
    assert rep.exit_code == 2 and "start" in rep.message


def test_custom_game_with_first_move_restriction(tmp_path):
    """file: games are checked against their own rules; the restriction binds the first stone
    only."""
    base = mnk(3, 3, 3)
    g = Game("file:nocentre.json", 3, 3, base.patterns, base.symmetries, forbidden=[4])
    s = Solved(g)
    p = write(tmp_path, "nc.pnbook", s.bytes())
    rep = verify.verify_file(p)
    assert rep.exit_code == 0, rep.message
    # a book whose first move is the forbidden centre
    ((key, (m, v)),) = [(k, r) for k, r in s.recs.items() if k == (0, 0)]
    recs = dict(s.recs)
    recs[key] = (4, v)
    rep = verify.verify_file(write(tmp_path, "nc2.pnbook", s.bytes(recs)))
    assert rep.exit_code == 1
    assert "illegal book move" in rep.message and "forbidden" in rep.message


def test_second_player_win_book(tmp_path):
    """A second-wins book: the middle cell wins at once, and the first stone may not take it."""
    g = Game("file:middle.json", 3, 1, [[1]], [[0, 1, 2], [2, 1, 0]], forbidden=[1])
    s = Solved(g)
    assert s.value == SECOND
    assert verify.verify_file(write(tmp_path, "m.pnbook", s.bytes())).exit_code == 0
    rep = verify.verify_file(write(tmp_path, "n.pnbook", s.bytes(value=FIRST)))
    assert rep.exit_code == 1


# --------------------------------------------------------------------------------------------
# Holes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["ttt", "m433", "c4"])
def test_removed_record_is_reported_as_a_line(which, request, tmp_path):
    s = request.getfixturevalue(which)
    deep = sorted(
        (k for k in s.recs if bin(k[0] | k[1]).count("1") >= 2),
        key=lambda k: (bin(k[0] | k[1]).count("1"), k),
    )
    key = deep[len(deep) // 2]
    recs = {k: v for k, v in s.recs.items() if k != key}
    rep = verify.verify_file(write(tmp_path, "hole.pnbook", s.bytes(recs)))
    assert rep.exit_code == 1
    assert "no record" in rep.message
    assert rep.hole and len(rep.hole) >= 2
    assert rep.hole_moves in rep.message
    if s.g.gravity:  # Connect Four lines are column digits run together
        assert rep.hole_moves.isdigit() and len(rep.hole_moves) == len(rep.hole)
    else:
        assert len(rep.hole_moves.split()) == len(rep.hole)
    # the reported line leads to the position whose record was removed
    f, s2 = replay(s.g, rep.hole)
    assert s.g.canonical(f, s2)[0] == key


def test_changed_move_that_loses_the_value(m433, tmp_path):
    s, g = m433, m433.g
    for key, (m, v) in sorted(s.recs.items()):
        f, sc = key
        bad = [c for c in g.moves(f, sc) if s.value_fn(*g.play(f, sc, c)) != FIRST]
        if bad:
            break
    recs = dict(s.recs)
    recs[key] = (bad[0], v)
    rep = verify.verify_file(write(tmp_path, "lose.pnbook", s.bytes(recs)))
    assert rep.exit_code == 1
    assert rep.hole is not None
    assert any(w in rep.message for w in ("line ends in", "no record", "contradicts"))


def test_changed_move_that_is_illegal(ttt, tmp_path):
    s = ttt
    key = next(k for k in sorted(s.recs) if k[0] | k[1])
    occupied = (key[0] | key[1]).bit_length() - 1
    recs = dict(s.recs)
    recs[key] = (occupied, recs[key][1])
    rep = verify.verify_file(write(tmp_path, "ill.pnbook", s.bytes(recs)))
    assert rep.exit_code == 1
    assert "illegal book move" in rep.message and "occupied" in rep.message


def test_no_move_stored(ttt, tmp_path):
    recs = dict(ttt.recs)
    recs[(0, 0)] = (255, recs[(0, 0)][1])
    rep = verify.verify_file(write(tmp_path, "nm.pnbook", ttt.bytes(recs)))
    assert rep.exit_code == 1 and "no move" in rep.message


@pytest.mark.parametrize("claim", [FIRST, SECOND])
def test_draw_book_claiming_a_win(ttt, tmp_path, claim):
    rep = verify.verify_file(write(tmp_path, "v.pnbook", ttt.bytes(value=claim)))
    assert rep.exit_code == 1
    assert "contradicts claim" in rep.message or "line ends in" in rep.message


def test_win_book_claiming_a_draw(m433, tmp_path):
    """A draw claim needs the second player's strategy too, which a win book does not hold."""
    rep = verify.verify_file(write(tmp_path, "v.pnbook", m433.bytes(value=DRAW)))
    assert rep.exit_code == 1
    assert "second player" in rep.message


def test_record_value_contradicting_the_claim(m433, tmp_path):
    recs = dict(m433.recs)
    key = sorted(recs)[len(recs) // 2]
    recs[key] = (recs[key][0], 2)  # second-wins on the first player's winning line
    rep = verify.verify_file(write(tmp_path, "c.pnbook", m433.bytes(recs)))
    assert rep.exit_code == 1
    assert "record value contradicts claim" in rep.message and "second-wins" in rep.message


def test_partial_book(ttt, tmp_path):
    rep = verify.verify_file(write(tmp_path, "p.pnbook", ttt.bytes(partial=True)))
    assert rep.exit_code == 1 and "not a complete proof" in rep.message


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def test_win_pattern_removed_or_added(ttt, tmp_path):
    def drop(h):
        h["rules"]["win_patterns"] = h["rules"]["win_patterns"][1:]

    def add(h):
        h["rules"]["win_patterns"].append([0, 4, 5])

    for patch, word in ((drop, "missing"), (add, "not in the game")):
        rep = verify.verify_file(write(tmp_path, "r.pnbook", ttt.bytes(header_patch=patch)))
        assert rep.exit_code == 1
        assert "win patterns differ from mnk:3,3,3" in rep.message and word in rep.message


def test_redundant_superset_pattern_is_not_a_difference(ttt, tmp_path):
    def add(h):
        h["rules"]["win_patterns"].append([0, 1, 2, 5])  # contains a1 b1 c1: never completes first

    # it is not symmetric, but it is dropped before the symmetries are checked
    rep = verify.verify_file(write(tmp_path, "r.pnbook", ttt.bytes(header_patch=add)))
    assert rep.exit_code == 0, rep.message


def test_other_rule_changes(ttt, c4, tmp_path):
    rep = verify.verify_file(
        write(
            tmp_path,
            "a.pnbook",
            ttt.bytes(header_patch=lambda h: h["rules"].update(first_move_forbidden=[4])),
        )
    )
    assert rep.exit_code == 1 and "first-move restriction" in rep.message
    book = write(tmp_path, "b.pnbook", ttt.bytes(header_patch=lambda h: h["rules"].update(disc_cap=6)))
    rep = verify.verify_file(book)
    assert rep.exit_code == 1 and "disc cap" in rep.message
    book = write(tmp_path, "c.pnbook", c4.bytes(header_patch=lambda h: h["rules"].update(gravity=False)))
    rep = verify.verify_file(book)
    assert rep.exit_code == 1 and "gravity" in rep.message
    rep = verify.verify_file(
        write(tmp_path, "d.pnbook", ttt.bytes(header_patch=lambda h: h["rules"].update(cells=list(range(8)))))
    )
    assert rep.exit_code == 1 and "cells differ" in rep.message
    book = write(tmp_path, "e.pnbook", ttt.bytes(header_patch=lambda h: h.update(game="qango9")))
    rep = verify.verify_file(book)
    assert rep.exit_code == 1 and "unknown game" in rep.message


def test_custom_game_rules_changed_breaks_its_symmetries(tmp_path):
    base = mnk(3, 3, 3)
    s = Solved(Game("file:t.json", 3, 3, base.patterns, base.symmetries))

    def drop(h):
        h["rules"]["win_patterns"] = [p for p in h["rules"]["win_patterns"] if p != [0, 1, 2]]

    rep = verify.verify_file(write(tmp_path, "f.pnbook", s.bytes(header_patch=drop)))
    assert rep.exit_code == 2 and "not a symmetry" in rep.message


def test_fake_symmetry(ttt, tmp_path):
    def fake(h):
        p = list(range(9))
        p[0], p[1] = 1, 0  # swaps a1 and b1: not a symmetry of tic-tac-toe
        h["rules"]["symmetries"].append(p)

    rep = verify.verify_file(write(tmp_path, "s.pnbook", ttt.bytes(header_patch=fake)))
    assert rep.exit_code == 2
    assert "symmetries[8] is not a symmetry" in rep.message


def test_symmetries_not_a_group(ttt, tmp_path):
    def cut(h):
        h["rules"]["symmetries"] = h["rules"]["symmetries"][:2] + h["rules"]["symmetries"][5:6]

    rep = verify.verify_file(write(tmp_path, "g.pnbook", ttt.bytes(header_patch=cut)))
    assert rep.exit_code == 2 and "not a group" in rep.message


def test_vertical_flip_is_not_a_connect4_symmetry(c4, tmp_path):
    def flip(h):
        h["rules"]["symmetries"] = grid_symmetries(4, 4, keep=lambda p: True)[:4]

    rep = verify.verify_file(write(tmp_path, "g.pnbook", c4.bytes(header_patch=flip)))
    assert rep.exit_code == 2 and "gravity" in rep.message


def test_builtin_rules_from_games_md():
    """The verifier's own reconstruction of the shipped games matches the figures in docs/games.md."""
    q6 = verify.reference_rules("qango6")
    assert len(q6.cells) == 36 and len(q6.patterns) == 61 and not q6.forbidden
    q6.symmetries = [tuple(p) for p in grid_symmetries(6, 6)]
    verify.check_symmetries(q6)  # all 8 symmetries of the square
    assert verify.reference_rules("qango6:castle").forbidden == {7, 10, 14, 15, 20, 21, 25, 28}
    assert len(verify.reference_rules("qango6:tournament").forbidden) == 16
    q7 = verify.reference_rules("qango7")
    assert q7.disc_cap == 40 and verify.reference_rules("qango7:nocap").disc_cap is None
    half_and_diagonals = [
        tuple(p) for p in grid_symmetries(7, 7) if p[0] in (0, 48)
    ]  # identity, half turn, the two diagonal mirrors
    q7.symmetries = half_and_diagonals
    assert len(q7.symmetries) == 4
    verify.check_symmetries(q7)
    q7.symmetries = [tuple(p) for p in grid_symmetries(7, 7)]
    with pytest.raises(verify.BookError):
        verify.check_symmetries(q7)
    q7p = verify.reference_rules("qango7plus")
    assert len(q7p.cells) == 37 and q7p.disc_cap is None
    edges = verify.reference_rules("qango7plus:edges")
    allowed = q7p.cells - edges.forbidden
    assert 2 in allowed and 8 in allowed and 24 not in allowed and 16 not in allowed
    assert q7p.cells - verify.reference_rules("qango7plus:tournament").forbidden == {11, 19, 29, 37}
    c = verify.reference_rules("connect4")
    assert (c.width, c.height, c.gravity, len(c.patterns)) == (7, 6, True, 69)


# --------------------------------------------------------------------------------------------
# Damaged files
# --------------------------------------------------------------------------------------------


def test_truncated_files(ttt, tmp_path):
    z = compress(ttt.bytes())
    p = tmp_path / "t.pnbook"
    p.write_bytes(z[: len(z) * 2 // 3])
    rep = verify.verify_file(p)
    assert rep.exit_code == 2 and ("truncated" in rep.message or "corrupt" in rep.message)
    # a well-formed frame whose records are cut short
    p = write(tmp_path, "t2.pnbook", ttt.bytes()[:-7])
    rep = verify.verify_file(p)
    assert rep.exit_code == 2 and "record bytes" in rep.message


def test_not_a_book(ttt, tmp_path):
    p = tmp_path / "x.pnbook"
    p.write_text("hello, I am not a book\n")
    rep = verify.verify_file(p)
    assert rep.exit_code == 2 and "not a book" in rep.message
    rep = verify.verify_file(write(tmp_path, "y.pnbook", b"NOTABOOK" + ttt.bytes()[8:]))
    assert rep.exit_code == 2 and "magic" in rep.message


def test_corrupt_bytes(ttt, tmp_path):
    z = bytearray(compress(ttt.bytes()))
    z[len(z) // 2] ^= 0x55
    p = tmp_path / "c.pnbook"
    p.write_bytes(bytes(z))
    assert verify.verify_file(p).exit_code == 2


def test_malformed_header_and_version(ttt, tmp_path):
    data = ttt.bytes()
    (hl,) = struct.unpack(">I", data[8:12])
    bad = data[:12] + b"?" + data[13:]  # the header no longer parses
    rep = verify.verify_file(write(tmp_path, "h.pnbook", bad))
    assert rep.exit_code == 2 and "malformed header" in rep.message
    book = write(tmp_path, "v.pnbook", ttt.bytes(header_patch=lambda h: h.update(format_version=2)))
    rep = verify.verify_file(book)
    assert rep.exit_code == 2 and "format_version" in rep.message
    book = write(tmp_path, "w.pnbook", ttt.bytes(header_patch=lambda h: h.update(records=3)))
    rep = verify.verify_file(book)
    assert rep.exit_code == 2
    rep = verify.verify_file(
        write(tmp_path, "x.pnbook", ttt.bytes(header_patch=lambda h: h["rules"].update(symmetries="auto")))
    )
    assert rep.exit_code == 2 and "symmetries" in rep.message


def test_unsorted_and_duplicate_keys(ttt, tmp_path):
    data = ttt.bytes()
    (hl,) = struct.unpack(">I", data[8:12])
    head, body = data[: 12 + hl], data[12 + hl :]
    recs = [body[i : i + 18] for i in range(0, len(body), 18)]
    swapped = recs[:]
    swapped[3], swapped[4] = swapped[4], swapped[3]
    rep = verify.verify_file(write(tmp_path, "u.pnbook", head + b"".join(swapped)))
    assert rep.exit_code == 2 and "ascending" in rep.message
    dup = recs[:]
    dup[4] = dup[3]
    rep = verify.verify_file(write(tmp_path, "d.pnbook", head + b"".join(dup)))
    assert rep.exit_code == 2 and "repeats" in rep.message


def test_cli_exit_codes_without_traceback(ttt, tmp_path):
    good = write(tmp_path, "g.pnbook", ttt.bytes())
    junk = tmp_path / "j.pnbook"
    junk.write_bytes(b"\x00" * 50)
    for path, code in ((good, 0), (junk, 2)):
        r = subprocess.run(
            [sys.executable, str(TOOLS / "verify.py"), str(path), "--quiet"], capture_output=True, text=True
        )
        assert r.returncode == code
        assert "Traceback" not in r.stderr
        assert len((r.stdout + r.stderr).strip().splitlines()) == 1


def test_cli_says_what_it_does_from_the_start(ttt, tmp_path):
    """Progress lines on a stderr that is no terminal: the first comes before the book is read
    (reading a large book takes seconds), then one as each strategy's check starts."""
    good = write(tmp_path, "g.pnbook", ttt.bytes())
    r = subprocess.run([sys.executable, str(TOOLS / "verify.py"), str(good)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == "verify: reading the book"
    assert lines[1].startswith("verify: checking the first player's strategy"), lines


# --------------------------------------------------------------------------------------------
# Bounded decompression
# --------------------------------------------------------------------------------------------

HUGE = 3 << 30  # what a 99 KB book declared in issue 12 (item 7)


def huge_book(path, size_in_frame: bool) -> None:
    """A book whose header declares no records and whose frame holds 3 GiB of zeros after the
    header (about 100 KB compressed); the frame states its content size or leaves it out."""
    head = verify_books.book_bytes(mnk(3, 3, 3), DRAW, {})
    cobj = zstandard.ZstdCompressor(level=1, write_checksum=True).compressobj(
        size=len(head) + HUGE if size_in_frame else -1
    )
    chunk = bytes(64 << 20)
    parts = [cobj.compress(head)] + [cobj.compress(chunk) for _ in range(HUGE // len(chunk))]
    path.write_bytes(b"".join(parts) + cobj.flush())


@pytest.mark.parametrize("size_in_frame", [True, False])
def test_huge_content_is_refused_in_bounded_memory(tmp_path, size_in_frame):
    """The verifier reads the header first and decompresses no more than it declares: the 3 GiB
    are refused with a one-line reason, in a process that may not map more than 1 GiB."""
    p = tmp_path / "huge.pnbook"
    huge_book(p, size_in_frame)
    assert p.stat().st_size < 200_000
    # the peak resident set of this process image (VmHWM starts anew at exec; ru_maxrss would
    # count the pages of the test process it was forked from)
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import verify; "
        "rep = verify.verify_file(sys.argv[2]); "
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
        "print(rep.exit_code, hwm); "
        "print(rep.message)"
    )
    r = subprocess.run(
        [sys.executable, "-c", script, str(TOOLS), str(p)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert r.returncode == 0, r.stderr
    first, message = r.stdout.splitlines()
    code, max_rss_kb = map(int, first.split())
    assert code == 2
    assert max_rss_kb < 150_000
    want = f"the zstandard frame holds {HUGE} record bytes" if size_in_frame else "more than 0 record bytes"
    assert want in message and "header declares 0 records" in message


def test_frame_and_header_bounds(ttt, tmp_path):
    data = ttt.bytes()
    body = len(ttt.recs) * 18
    z = compress(data)
    cases = [
        (zstandard.ZstdCompressor(write_checksum=False).compress(data), "no content checksum"),
        (z[:-4], "truncated"),  # the checksum cut off
        (z[:-2], "frame ends early"),  # all content there, the frame unfinished
        (z + b"junk", "corrupt book"),
        (compress(b"PNBOOK\x00\x01" + struct.pack(">I", (16 << 20) + 1) + b"{}"), "16 MiB"),
        (compress(data + b"\x00" * 18), f"the zstandard frame holds {body + 18} record bytes"),
        (
            zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(
                data + b"\x00" * 18
            ),
            f"more than {body} record bytes",
        ),
    ]
    for raw, want in cases:
        p = tmp_path / "f.pnbook"
        p.write_bytes(raw)
        rep = verify.verify_file(p)
        assert rep.exit_code == 2 and want in rep.message, (want, rep.message)
        assert "\n" not in rep.message


# --------------------------------------------------------------------------------------------
# Hostile sizes of the rules data (caps of game-format.md, "Limits")
# --------------------------------------------------------------------------------------------


def pair_swaps(npairs: int) -> list[list[int]]:
    """Every product of swaps within the pairs (2i, 2i + 1): a group of 2 ** npairs symmetries
    (the identity first) of a game whose win patterns are those pairs."""
    perms = []
    for bits in range(1 << npairs):
        p = list(range(2 * npairs))
        for i in range(npairs):
            if bits >> i & 1:
                p[2 * i], p[2 * i + 1] = 2 * i + 1, 2 * i
        perms.append(p)
    return perms


def timed_run(path):
    t0 = time.perf_counter()
    rep = verify.verify_file(path)
    return rep, time.perf_counter() - t0


@pytest.mark.parametrize("what", ["symmetries", "win_patterns"])
def test_over_the_caps_is_refused_at_once(ttt, tmp_path, what):
    """5040 listed permutations (all of 7 cells, a group, but more than 1024) and 41,664 win
    patterns (every 3 of 64 cells, more than 10,000) are refused with one line, in well under the
    time a quadratic check would take."""

    def patch(h):
        if what == "symmetries":
            h["rules"]["symmetries"] = [list(p) + [7, 8] for p in itertools.permutations(range(7))]
        else:
            h["rules"].update(
                width=8,
                height=8,
                cells=None,
                symmetries=[list(range(64))],
                win_patterns=[list(c) for c in itertools.combinations(range(64), 3)],
            )

    rep, _ = timed_run(write(tmp_path, "big.pnbook", ttt.bytes(header_patch=patch)))
    n, cap = (5040, 1024) if what == "symmetries" else (41664, 10000)
    assert rep.exit_code == 2 and f"{n} {what} listed, more than the {cap} allowed" in rep.message
    assert "\n" not in rep.message


def test_at_the_caps_is_verified(tmp_path):
    """A game with 1024 symmetries and 10,000 listed win patterns (10 pairs, and supersets of
    them that minimal_patterns drops) is checked and verified (in a second or two on an idle
    machine; no test asserts a time)."""
    pairs = [[2 * i, 2 * i + 1] for i in range(10)]
    supersets = []
    for k in (2, 3, 4):
        for p in pairs:
            others = [c for c in range(20) if c not in p]
            supersets += [p + list(extra) for extra in itertools.combinations(others, k)]
    patterns = pairs + supersets[: 10000 - len(pairs)]
    g = Game("file:pairs.json", 5, 4, patterns, pair_swaps(10))
    s = Solved(g, start_cells=range(16))  # pairs 0..7 full, each with one stone of either player
    assert s.value == DRAW and len(g.symmetries) == 1024 and len(patterns) == 10000
    rep, _ = timed_run(write(tmp_path, "caps.pnbook", s.bytes()))
    assert rep.ok, rep.message


def test_minimal_patterns_by_brute_force():
    """The bucketed bitmask filter keeps exactly the patterns that contain no other one."""
    rng = random.Random(7)
    pats = [rng.sample(range(16), rng.randint(1, 6)) for _ in range(2000)] + [[3, 4], [4, 3]]
    uniq = {frozenset(p) for p in pats}
    assert verify.minimal_patterns(pats) == frozenset(p for p in uniq if not any(q < p for q in uniq))


def test_symmetry_group_generated_from_the_list():
    """A listed product that is missing, or an extra permutation, is found by the generation."""
    rules = {"width": 5, "height": 4, "win_patterns": [[2 * i, 2 * i + 1] for i in range(10)]}
    perms = pair_swaps(10)
    verify.check_symmetries(verify.rules_from_json(dict(rules, symmetries=perms)))
    with pytest.raises(verify.BookError, match="not a group"):
        verify.check_symmetries(verify.rules_from_json(dict(rules, symmetries=perms[:-1])))
    bad = list(range(20))
    bad[0], bad[2] = 2, 0  # swaps two pairs' first cells: not a symmetry
    with pytest.raises(verify.BookError, match=r"symmetries\[512\] is not a symmetry"):
        # the first 512 (pair 9 never swapped) are a group; the bad one is a new generator
        verify.check_symmetries(verify.rules_from_json(dict(rules, symmetries=perms[:512] + [bad])))


# --------------------------------------------------------------------------------------------
# Format version 2: pairing certificates
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttt2():
    """Tic-tac-toe's drawing strategies by minimax, cut short wherever a pairing holds."""
    return verify_books.certified_by_minimax(mnk(3, 3, 3))


@pytest.fixture(scope="module")
def m444():
    """mnk:4,4,4 (a draw; too big for a test's minimax): every line ends in a pairing."""
    return verify_books.certified_by_search(mnk(4, 4, 4), 4)


def cell_of(g: Game, name: str) -> int:
    return (int(name[1:]) - 1) * g.width + ord(name[0]) - 97


def cell_names(g: Game, x: int) -> str:
    return " ".join(g.name(c) for c in range(g.n) if x >> c & 1)


def reached_key(g: Game, line):
    f, s = replay(g, line)
    return g.canonical(f, s)[0]


def symmetries_to(g: Game, f, s, key):
    """The symmetries that take the board (f, s) to the canonical key."""
    img = lambda p, x: sum(1 << p[i] for i in range(g.n) if x >> i & 1)  # noqa: E731
    return [p for p in g.symmetries if (img(p, f), img(p, s)) == key]


def tamper(b, change):
    """The first certificate (by key) that ``change(key, defender, pairs)`` turns into a new
    payload, and that payload."""
    for key, (kind, payload) in sorted(b.certs.items()):
        new = change(key, *verify_books.payload_pairing(payload))
        if new is not None:
            return key, new
    pytest.fail("no certificate to tamper with")


def run_with(tmp_path, b, key, payload, kind=1, recs=None):
    certs = dict(b.certs)
    certs[key] = (kind, payload)
    return verify.verify_file(write(tmp_path, "t.pnbook", b.bytes(recs, certs=certs)))


@pytest.mark.parametrize("which", ["ttt2", "m444"])
def test_certified_draw_books_verify(which, request, tmp_path, capsys):
    b = request.getfixturevalue(which)
    p = write(tmp_path, "c.pnbook", b.bytes())
    rep = verify.verify_file(p)
    assert rep.exit_code == 0, rep.message
    assert rep.format_version == 2 and rep.certificates == len(b.certs)
    assert rep.certificates_used >= len(b.certs) > 0  # every certificate ends a line
    assert verify.main([str(p)]) == 0
    assert f"{len(b.certs)} certificates" in capsys.readouterr().out
    # the certificates carry the proof: the same records without them leave holes
    rep = verify.verify_file(write(tmp_path, "v1.pnbook", verify_books.book_bytes(b.g, DRAW, b.recs)))
    assert rep.exit_code == 1 and rep.hole is not None


@pytest.mark.parametrize("which", ["ttt2", "m444"])
def test_pair_removed_leaves_a_pattern_uncovered(which, request, tmp_path):
    b = request.getfixturevalue(which)
    g = b.g

    def drop(key, d, pairs):
        for i in range(len(pairs)):
            rest = pairs[:i] + pairs[i + 1 :]
            if verify_books.uncovered_patterns(g, *key, d, rest):
                return verify_books.pairing_payload(d, rest)

    key, payload = tamper(b, drop)
    rep = run_with(tmp_path, b, key, payload)
    assert rep.exit_code == 1, rep.message
    assert "invalid pairing certificate" in rep.message and rep.hole_moves in rep.message
    assert reached_key(g, rep.hole) == key
    # the pattern named (on the board of the reported line) is one the remaining pairs miss
    named = re.search(r"pattern ((?:[a-z]\d+ )+)holds no pair", rep.message).group(1).split()
    f, s = replay(g, rep.hole)
    d, rest = verify_books.payload_pairing(payload)
    missed = [set(p) for p in verify_books.uncovered_patterns(g, *key, d, rest)]
    assert any({p[cell_of(g, n)] for n in named} in missed for p in symmetries_to(g, f, s, key))


@pytest.mark.parametrize(
    "damage, want",
    [
        ("occupied", r"pair \(\w+, \w+\): (\w+) is occupied"),
        ("off-grid", r"cell 200 is off the \d+-cell grid"),
        ("same-cell", r"a pair needs two different cells"),
        ("shared", r"pair \(\w+, \w+\) and pair \(\w+, \w+\) share (\w+)"),
    ],
)
@pytest.mark.parametrize("which", ["ttt2", "m444"])
def test_broken_pair_is_named_at_its_position(which, damage, want, request, tmp_path):
    b = request.getfixturevalue(which)
    g = b.g

    def breaking(key, d, pairs):
        x, y = pairs[0]
        occupied = (key[0] | key[1]).bit_length() - 1
        if damage == "occupied":
            pairs = [(occupied, y)] + pairs[1:]
        elif damage == "off-grid":
            pairs = [(200, y)] + pairs[1:]
        elif damage == "same-cell":
            pairs = [(x, x)] + pairs[1:]
        elif len(pairs) >= 2:
            pairs = [pairs[0], (pairs[1][0], x)] + pairs[2:]
        else:
            return None
        return verify_books.pairing_payload(d, pairs)

    key, payload = tamper(b, breaking)
    rep = run_with(tmp_path, b, key, payload)
    assert rep.exit_code == 1, rep.message
    assert "invalid pairing certificate" in rep.message
    assert reached_key(g, rep.hole) == key
    m = re.search(want, rep.message)
    assert m, rep.message
    if damage == "occupied":  # the cell named is occupied on the board of the reported line
        f, s = replay(g, rep.hole)
        assert (f | s) >> cell_of(g, m.group(1)) & 1


@pytest.mark.parametrize("which", ["ttt2", "m444"])
def test_defender_flipped(which, request, tmp_path):
    b = request.getfixturevalue(which)

    def flip(key, d, pairs):
        if verify_books.uncovered_patterns(b.g, *key, 3 - d, pairs):
            return verify_books.pairing_payload(3 - d, pairs)

    key, payload = tamper(b, flip)
    rep = run_with(tmp_path, b, key, payload)
    assert rep.exit_code == 1 and "holds no pair" in rep.message
    assert reached_key(b.g, rep.hole) == key


def test_record_value_must_include_the_certificate(m444, tmp_path):
    key = sorted(m444.certs)[0]
    recs = dict(m444.recs)
    recs[key] = (recs[key][0], 0)  # unknown: does not contradict the claim, but says less
    rep = verify.verify_file(write(tmp_path, "u.pnbook", m444.bytes(recs)))
    assert rep.exit_code == 1 and "record value unknown does not include" in rep.message
    assert reached_key(m444.g, rep.hole) == key


def test_certificate_proving_the_wrong_thing_is_ignored(ttt, tmp_path):
    """After X on b2 the first player could hold the draw by a pairing; the second player's
    strategy, which answers b2, needs the first player not to win, so the certificate is checked
    there but the walk goes on with the record's move."""
    g = ttt.g
    key = g.canonical(*g.play(0, 0, 4))[0]
    pairs = verify_books.find_pairing(g, *key, 1)
    assert pairs is not None and key in ttt.recs
    cert = {key: (1, verify_books.pairing_payload(1, pairs))}
    rep = verify.verify_file(write(tmp_path, "w.pnbook", ttt.bytes(certs=cert)))
    assert rep.exit_code == 0, rep.message
    assert rep.certificates == 1 and rep.certificates_used == 0
    recs = dict(ttt.recs)
    recs[key] = (verify_books.NO_MOVE, recs[key][1])
    rep = verify.verify_file(write(tmp_path, "x.pnbook", ttt.bytes(recs, certs=cert)))
    assert rep.exit_code == 1 and "no move" in rep.message
    assert "certificate proves second-wont-win, not what this strategy needs" in rep.message
    assert rep.hole == [4]


def test_pairing_in_a_game_with_gravity(c4, tmp_path):
    rep = verify.verify_file(write(tmp_path, "g.pnbook", c4.bytes(certs={(0, 0): (1, b"\x02")})))
    assert rep.exit_code == 1 and "gravity" in rep.message and rep.hole == []


def test_certificate_table_structure(m444, tmp_path):
    """Structural damage to the table is a damaged file (exit 2), named by certificate and
    position."""
    b, g = m444, m444.g
    entries = verify_books.certificate_entries(b.certs)
    keys = sorted(b.certs)
    where = lambda key: f"first {cell_names(g, key[0])}, second {cell_names(g, key[1])}"  # noqa: E731

    def entry(i, kind=None, payload=None, length=None):
        k = keys[i]
        kind0, payload0 = b.certs[k]
        payload = payload0 if payload is None else payload
        body = verify_books.certificate_entry(k, kind0 if kind is None else kind, payload)
        if length is not None:
            body = body[:17] + struct.pack(">H", length) + body[19:]
        return body

    last = len(keys) - 1
    no_record = {k: v for k, v in b.recs.items() if k != keys[1]}
    cases = [
        (dict(cert_entries=[entries[1], entries[0]] + entries[2:]), "certificate 1", "sorts before"),
        (dict(cert_entries=[entries[0], entries[0]] + entries[2:]), "certificate 1", "repeats certificate 0"),
        (
            dict(cert_entries=entries[:1] + [entry(1, payload=b.certs[keys[1]][1] + b"\x00")] + entries[2:]),
            where(keys[1]),
            "1 + 2P",
        ),
        (
            dict(cert_entries=entries[:last] + [entry(last, length=len(b.certs[keys[last]][1]) + 2)]),
            where(keys[last]),
            "runs past the end",
        ),
        (dict(cert_entries=entries[:1] + [entry(1, kind=7)] + entries[2:]), where(keys[1]), "unknown kind 7"),
        (
            dict(
                cert_entries=entries[:1] + [entry(1, payload=b"\x00" + b.certs[keys[1]][1][1:])] + entries[2:]
            ),
            where(keys[1]),
            "defender byte 0",
        ),
        (dict(recs=no_record, cert_entries=entries), where(keys[1]), "has no record"),
        (
            dict(cert_entries=entries, header_patch=lambda h: h.update(certificates=h["certificates"] + 1)),
            "certificate",
            "runs past their end",
        ),
        (
            dict(cert_entries=entries, header_patch=lambda h: h.update(certificates=h["certificates"] - 1)),
            "bytes follow the last",
            "certificates",
        ),
        (
            dict(
                cert_entries=entries,
                header_patch=lambda h: h.update(certificate_bytes=h["certificate_bytes"] + 1),
            ),
            "record and certificate bytes",
            "header declares",
        ),
        (
            dict(cert_entries=entries, header_patch=lambda h: h.update(format_version=1)),
            "format_version",
            "magic",
        ),
        (
            dict(cert_entries=entries, header_patch=lambda h: h.pop("certificate_bytes")),
            "certificate_bytes",
            "",
        ),
    ]
    for kw, *wants in cases:
        recs = kw.pop("recs", b.recs)
        rep = verify.verify_file(write(tmp_path, "s.pnbook", verify_books.book_bytes(g, DRAW, recs, **kw)))
        assert rep.exit_code == 2, (wants, rep.message)
        assert all(w in rep.message for w in wants), (wants, rep.message)


# --------------------------------------------------------------------------------------------
# Format version 2: Connect Four rule sets (kind 2)
# --------------------------------------------------------------------------------------------

# The example of book-format.md ("Kind 2"): the empty 4 x 4 board, the second player controls
# with three Claimevens, a Baseinverse and a Lowinverse.
DOC_EXAMPLE = bytes.fromhex("02ff05010204000102070301020c0802020d0e050409050a06")


@pytest.fixture(scope="module")
def c4cert():
    """Connect Four 4 x 4 by minimax, the second player's lines cut short wherever a set of
    Claimevens, Baseinverses and Verticals found by tests/verify_books.py refutes every group."""
    return verify_books.certified_by_minimax(connect4(4, 4), verify_books.connect4_certificate)


def c4_positions(g: Game, depth: int) -> dict:
    """Every position up to ``depth`` stones that is not finished, with a line that reaches it."""
    seen, frontier = {}, [((0, 0), ())]
    for _ in range(depth + 1):
        nxt = []
        for (f, s), line in frontier:
            if (f, s) in seen or g.result(f, s) is not None:
                continue
            seen[(f, s)] = line
            nxt += [(g.play(f, s, c), line + (c,)) for c in g.moves(f, s)]
        frontier = nxt
    return seen


def test_doc_example_is_valid():
    rules = verify.rules_from_json(connect4(4, 4).rules_json())
    rs = verify.parse_ruleset(DOC_EXAMPLE, "example")
    assert verify.check_ruleset(rules, 0, 0, rs) == 4  # first-wont-win


def test_rule_sets_agree_with_minimax(c4):
    """Every certificate the independent finder builds (with no threat, and with each threat the
    position offers) is accepted, and proves what minimax says: no win for the player to move,
    and with a threat a win for the controller."""
    g = c4.g
    rules = verify.rules_from_json(g.rules_json())
    seen = Counter()
    for f, s in c4_positions(g, 7):
        for t in [verify_books.NO_THREAT] + verify_books.connect4_threats(g, f, s):
            payload = verify_books.find_connect4_certificate(g, f, s, t)
            if payload is None:
                continue
            code = verify.check_ruleset(rules, f, s, verify.parse_ruleset(payload, "test"))
            lo, hi = verify.CODE_INTERVAL[code]
            assert lo <= RANK[c4.value_fn(f, s)] <= hi
            seen[code] += 1
    assert seen[4] and seen[1] and seen[2], seen  # first-wont-win, first-wins, second-wins


def test_connect4_certified_book_verifies(c4cert, tmp_path):
    b = c4cert
    assert b.certs and all(kind == 2 for kind, _ in b.certs.values())
    rep = verify.verify_file(write(tmp_path, "c.pnbook", b.bytes()))
    assert rep.exit_code == 0, rep.message
    assert rep.certificates_used >= len(b.certs)
    rep = verify.verify_file(write(tmp_path, "v1.pnbook", verify_books.book_bytes(b.g, DRAW, b.recs)))
    assert rep.exit_code == 1 and rep.hole is not None


def test_doc_example_ends_the_second_players_strategy(c4, tmp_path):
    """With the example at the start, the second player's strategy needs no record at all; the
    first player's (it proves the wrong thing for it) goes on with the records."""
    g = c4.g
    recs = verify_books.strategy_records(g, c4.value_fn, (0, 0), 0, 1, {})
    certs = {(0, 0): (2, DOC_EXAMPLE)}
    rep = verify.verify_file(write(tmp_path, "d.pnbook", verify_books.book_bytes(g, DRAW, recs, certs=certs)))
    assert rep.exit_code == 0, rep.message
    assert rep.certificates_used == 1
    rep = verify.verify_file(write(tmp_path, "n.pnbook", verify_books.book_bytes(g, DRAW, recs)))
    assert rep.exit_code == 1 and "no record" in rep.message
    # the first player's strategy cannot stop there: it needs its move
    no_move = {**recs, (0, 0): (255, 3)}
    book = write(tmp_path, "m.pnbook", verify_books.book_bytes(g, DRAW, no_move, certs=certs))
    rep = verify.verify_file(book)
    assert rep.exit_code == 1 and rep.hole == []
    assert "its certificate proves first-wont-win, not what this strategy needs" in rep.message
    # the record must include what the certificate proves
    wide = {**recs, (0, 0): (recs[(0, 0)][0], 5)}
    rep = verify.verify_file(write(tmp_path, "w.pnbook", verify_books.book_bytes(g, DRAW, wide, certs=certs)))
    assert rep.exit_code == 1 and "does not include what its certificate proves" in rep.message


def test_threat_certificate_ends_a_win_book(c4, tmp_path):
    """A position the second player wins by a threat: a book of one record (no move) and the
    certificate proves second-wins.  The same instances with no threat, or with a threat on the
    bottom row or one row up, are invalid there."""
    g = c4.g
    for (f, s), line in sorted(c4_positions(g, 7).items(), key=lambda kv: len(kv[1])):
        threats = verify_books.connect4_threats(g, f, s)
        found = [(t, verify_books.find_connect4_certificate(g, f, s, t)) for t in threats]
        found = [(t, p) for t, p in found if p is not None and p[0] == 2]
        if found and g.canonical(f, s)[0] == (f, s):
            break
    else:
        pytest.fail("no threat certificate on 4 x 4")
    t, payload = found[0]
    line = list(line)
    recs = {(f, s): (255, 2)}
    data = verify_books.book_bytes(g, SECOND, recs, certs={(f, s): (2, payload)}, start_cells=line)
    rep = verify.verify_file(write(tmp_path, "t.pnbook", data))
    assert rep.exit_code == 0, rep.message
    assert rep.certificates_used == 1
    bottom = next(c for c in range(g.n - g.width, g.n) if not (f | s) >> c & 1)
    cases = [(255, "problem"), (bottom, "is in the bottom row")]
    if t >= g.width:
        cases.append((t - g.width, "parity"))  # one row up: the other parity
    for threat, want in cases:
        tampered = bytes([2, threat]) + payload[2:]
        data = verify_books.book_bytes(g, SECOND, recs, certs={(f, s): (2, tampered)}, start_cells=line)
        rep = verify.verify_file(write(tmp_path, "u.pnbook", data))
        assert rep.exit_code == 1 and rep.hole == line and want in rep.message, (threat, rep.message)


def tamper_c4(b, change):
    """The first certificate (by key) that ``change(key, controller, threat, instances)`` turns
    into a new kind 2 payload, and that payload."""
    for key, (kind, payload) in sorted(b.certs.items()):
        new = change(key, *verify_books.payload_instances(payload))
        if new is not None:
            return key, new
    pytest.fail("no certificate to tamper with")


def moved_up(key, controller, threat, instances):
    """The first Claimeven one row higher (its upper becomes odd)."""
    for i, (code, cells) in enumerate(instances):
        if code == verify_books.CLAIMEVEN and cells[1] >= 4:
            moved = (code, (cells[0] - 4, cells[1] - 4))
            return verify_books.connect4_payload(
                controller, threat, instances[:i] + [moved] + instances[i + 1 :]
            )
    return None


def last_dropped(key, controller, threat, instances):
    """Without its last instance, the one the finder chose for a problem nothing else solved."""
    return verify_books.connect4_payload(controller, threat, instances[:-1])


def first_twice(key, controller, threat, instances):
    return verify_books.connect4_payload(controller, threat, instances + instances[:1])


def controller_flipped(key, controller, threat, instances):
    return verify_books.connect4_payload(3 - controller, threat, instances)


@pytest.mark.parametrize(
    "change, want",
    [
        (moved_up, r"instance \d+ \(Claimeven \w+ \w+\) is not valid: upper \w+ is odd"),
        (last_dropped, r"problem \w+ \w+ \w+ \w+ is solved by no instance"),
        (first_twice, r"instances 0 \(.*\) and \d+ \(.*\) are not compatible: their squares share"),
        (controller_flipped, r"the controller \(first player\) is the player to move"),
    ],
)
def test_tampered_rule_set_is_named_at_its_position(c4cert, tmp_path, change, want):
    key, payload = tamper_c4(c4cert, change)
    rep = run_with(tmp_path, c4cert, key, payload, kind=2)
    assert rep.exit_code == 1 and "invalid Connect Four certificate" in rep.message
    assert re.search(want, rep.message), rep.message
    assert reached_key(c4cert.g, rep.hole) == key
    assert rep.hole_moves in rep.message


def test_rule_set_structure(c4cert, tmp_path):
    """A payload that is not laid out as kind 2 says is a damaged file (exit 2)."""
    key, (kind, payload) = sorted(c4cert.certs.items())[0]
    cases = [
        (payload[:2], "shorter than its 3 leading bytes"),
        (b"\x03" + payload[1:], "controller byte 3"),
        (payload + b"\x00", "1 bytes follow the last of its"),
        (payload[:3] + b"\x0a" + payload[4:], "unknown rule code 10"),
        (payload[:4] + b"\x03" + payload[5:], "has 3 cells, not 2"),
        (payload[:2] + bytes([payload[2] + 1]) + payload[3:], "runs past the end"),
    ]
    for bad, want in cases:
        rep = run_with(tmp_path, c4cert, key, bad, kind=2)
        assert rep.exit_code == 2 and want in rep.message, (want, rep.message)


def test_rule_set_needs_connect_four(ttt, tmp_path):
    key = ttt.g.canonical(*ttt.g.play(0, 0, 4))[0]
    rep = verify.verify_file(write(tmp_path, "k.pnbook", ttt.bytes(certs={key: (2, b"\x01\xff\x00")})))
    assert rep.exit_code == 1 and "a kind 2 certificate needs Connect Four" in rep.message
    assert rep.hole == [4]


def rule_shapes(g: Game, f, s, specialbefore=False):
    """Every cell tuple of each rule's shape on the board (most of them invalid at (f, s)); rule 9
    (Specialbefore) only when asked."""
    w, n = g.width, g.n
    vacant = [c for c in range(n) if not (f | s) >> c & 1]
    out = []
    for grp in sorted(tuple(sorted(p)) for p in g.patterns) if specialbefore else ():
        empties = [c for c in grp if c in vacant]
        for s0, x in itertools.product(empties, vacant):
            others = [c for c in empties if c != s0]
            for choice in itertools.product((0, 1), repeat=len(others)):
                pairs = [(c + w, c) if up == 0 else (c, c - w) for c, up in zip(others, choice)]
                if all(0 <= y < n for p in pairs for y in p):
                    out.append((verify.SPECIALBEFORE, grp + (s0, x) + tuple(y for p in pairs for y in p)))
    for c in range(n - w):
        out += [(verify.CLAIMEVEN, (c + w, c)), (verify.VERTICAL, (c + w, c))]
    out += [(verify.BASEINVERSE, p) for p in itertools.combinations(vacant, 2)]
    groups = sorted(tuple(sorted(p)) for p in g.patterns)
    out += [(verify.AFTEREVEN, grp) for grp in groups]
    for grp in groups:
        empties = [c for c in grp if c in vacant]
        for choice in itertools.product((0, 1), repeat=len(empties)):
            pairs = [(c + w, c) if up == 0 else (c, c - w) for c, up in zip(empties, choice)]
            if all(0 <= x < n for p in pairs for x in p):
                out.append((verify.BEFORE, grp + tuple(x for p in pairs for x in p)))
    out += [(verify.LOWINVERSE, (a + w, a, b + w, b)) for a, b in itertools.combinations(range(n - w), 2)]
    out += [
        (verify.HIGHINVERSE, (a + 2 * w, a + w, a, b + 2 * w, b + w, b))
        for a, b in itertools.combinations(range(n - 2 * w), 2)
    ]
    out += [(verify.BASECLAIM, p + (p[1] - w,)) for p in itertools.permutations(vacant, 3) if p[1] >= w]
    return out


def random_rule_set(rules, g: Game, f, s, threat, controller, rng, combination=(), specialbefore=False):
    """A rule set for ``controller`` at (f, s) that the verifier's own instance and compatibility
    checks accept, assembled at random (rules 4 to 8 first; with ``specialbefore``, rule 9 first),
    or None.  Only a construction aid: what such a set proves is then checked against minimax."""
    b = verify.C4Position(rules, f, s, threat, combination)
    groups = verify.connect4_groups(g.width, g.height)
    opponent = f if controller == 2 else s
    valid = []
    for code, cells in rule_shapes(g, f, s, specialbefore):
        inst = verify.RuleInstance(code, cells)
        try:
            valid.append((inst, verify.check_instance(b, inst, groups, opponent)))
        except verify.CertificateInvalid:
            pass
    mine = s if controller == 2 else f

    def solves(x, g4):
        return any(g4 & m == m for m in x.contains) or bool(x.meets_all and all(g4 & m for m in x.meets_all))

    problems = [g4 for g4 in sorted(groups) if not g4 & mine and not g4 & b.dead]
    for _ in range(10):
        rng.shuffle(valid)
        valid.sort(
            key=lambda ix: (
                ix[1].rule != verify.SPECIALBEFORE if specialbefore else ix[1].rule <= verify.VERTICAL
            )
        )
        chosen = []
        for g4 in problems:
            if any(solves(x, g4) for _, x in chosen):
                continue
            pick = next(
                (
                    ix
                    for ix in valid
                    if solves(ix[1], g4)
                    and all(verify.incompatibility(b, ix[1], y) is None for _, y in chosen)
                ),
                None,
            )
            if pick is None:
                break
            chosen.append(pick)
        else:
            return [inst for inst, _ in chosen]
    return None


def test_every_rule_is_sound_against_minimax(c4):
    """Rule sets using all eight rules, with and without threats, on random 4 x 4 positions:
    whatever the verifier accepts agrees with minimax."""
    g = c4.g
    rules = verify.rules_from_json(g.rules_json())
    rng = random.Random(3)
    positions = list(c4_positions(g, 7))
    rng.shuffle(positions)
    used, accepted = Counter(), 0
    for f, s in positions[:150]:
        controller = 1 if bin(f).count("1") > bin(s).count("1") else 2
        for t in [verify_books.NO_THREAT] + verify_books.connect4_threats(g, f, s):
            insts = random_rule_set(rules, g, f, s, t, controller, rng)
            if insts is None:
                continue
            payload = verify_books.connect4_payload(controller, t, [(i.rule, i.cells) for i in insts])
            try:
                code = verify.check_ruleset(rules, f, s, verify.parse_ruleset(payload, "test"))
            except verify.CertificateInvalid:
                continue
            lo, hi = verify.CODE_INTERVAL[code]
            assert lo <= RANK[c4.value_fn(f, s)] <= hi, (f, s, t, insts)
            accepted += 1
            used.update(i.rule for i in insts)
    assert accepted >= 20 and set(used) == set(range(1, 9)), used


# --------------------------------------------------------------------------------------------
# Kind 2 additions: Specialbefore (rule code 9) and threat combinations (T = 254), hand-built
# --------------------------------------------------------------------------------------------
#
# Positions are drawn row by row from the top, X the first player's stones, O the second's;
# cells are numbered row * width + column (the payload's numbering; the verifier names cell 0
# "a1", cell width + 2 "c2").

# 4 x 4 after 1 1 2 3 4 3 3 4 (a draw):   . . . .   0  1  2  3
#                                         . . X .   4  5  6  7
#                                         O . O O   8  9 10 11
#                                         X X O X  12 13 14 15
# The second player controls (the first is to move). Problems (groups without an O): the top
# row, the second row, column b and the diagonal d1-a4. The Specialbefore of the third row
# (its only empty cell s0 = 9, directly playable; x = 4, directly playable in column a, which
# holds no empty cell of the group) solves the second row (x and above(9) = 5); the Claimeven
# (5, 1) column b (it holds 5 and 9, all the aboves and s0, but not x: a Before's claim, not a
# Specialbefore's); the Claimeven (7, 3) the top row and d1-a4 (it holds s0 but not x).
SB_ONE = (4, 4, (12, 8, 13, 14, 15, 10, 6, 11))
SB_ONE_RULES = [
    (verify.CLAIMEVEN, (7, 3)),
    (verify.SPECIALBEFORE, (8, 9, 10, 11, 9, 4)),
    (verify.CLAIMEVEN, (5, 1)),
]

# 4 x 4 after 2 1 2 1 3 2 (a draw):   . . . .   0  1  2  3
#                                     . O . .   4  5  6  7
#                                     O X . .   8  9 10 11
#                                     O X X .  12 13 14 15
# One Specialbefore on the second row (empty cells 4, 6, 7): s0 = 4, x = 1 (column b holds the
# group's O, no empty cell), Vertical parts (6, 2) and (7, 3). Problems: the top row (x and
# the aboves 0, 2, 3), columns c and d (the Vertical parts).
SB_THREE = (4, 4, (13, 12, 9, 8, 14, 5))
SB_THREE_RULES = [(verify.SPECIALBEFORE, (4, 5, 6, 7, 4, 1, 6, 2, 7, 3))]

# 5 x 4 after 3 2 1 2 2 5 2 3 (the second player wins):   . X . . .   0  1  2  3  4
#                                                       . X . . .   5  6  7  8  9
#                                                       . O O . .  10 11 12 13 14
#                                                       X O X . O  15 16 17 18 19
# The second player controls with a Specialbefore on b3-e3 (s0 = 14, x = 7, the Claimeven
# (18, 13) for 13), a Before on a3-d3 (the Vertical part (10, 5), the same Claimeven
# (18, 13): a part both share) and the Claimeven (8, 3). Neither the Before and the Claimeven
# alone (b2-e2 is left) nor the Specialbefore and the Claimeven (a2-d2 is left) do.
SB_SHARED = (5, 4, (17, 16, 15, 11, 6, 19, 1, 12))
SB_SHARED_RULES = [
    (verify.SPECIALBEFORE, (11, 12, 13, 14, 14, 7, 18, 13)),
    (verify.BEFORE, (10, 11, 12, 13, 10, 5, 18, 13)),
    (verify.CLAIMEVEN, (8, 3)),
]

# 5 x 4 after 1 1 1 2 2 4 2 4 2 (the first player wins):   . X . . .   0  1  2  3  4
#                                                          X X . . .   5  6  7  8  9
#                                                          O X . O .  10 11 12 13 14
#                                                          X O . O .  15 16 17 18 19
# The first player controls with the threat combination X = 7 (c2: row 1 from the top, like the
# 11 vacant cells odd; 12 below it vacant), L = 8 (d2: row 1, directly playable), U = 3:
# groups 5 6 7 8 and 3 7 11 15. Region: 0, 4, 9, 14, 17, 19; dead: 7 and 3. Problems: e1-e4
# and e1 d2 c3 b4 (L is not dead), solved by the Claimeven (9, 4); the bottom row's b4-e4,
# solved by the Baseinverse (17, 19). Column d (3 8 13 18) holds U, so it is no problem.
COMB = (5, 4, (15, 10, 5, 16, 11, 18, 6, 13, 1))
COMB_XL = (7, 8)
COMB_RULES = [(verify.CLAIMEVEN, (9, 4)), (verify.BASEINVERSE, (17, 19))]


def hand_case(case):
    """The game, the position after the case's line, and its value by tests/reference.py's
    minimax (+1: the first player wins, 0: draw, -1: the second player wins)."""
    w, h, line = case
    g = connect4(w, h)
    f, s = replay(g, line)
    assert g.canonical(f, s)[0] == (f, s)  # the certificate's cells are the board's own
    return g, f, s, minimax(f"connect4:{w}x{h}", f, s)


def hand_book(tmp_path, case, payload):
    """The verdict on a book that starts at the case's position, with the certificate there
    and minimax's strategies as records (and a record without a move at the start, where the
    strategies have none: a certificate needs a record)."""
    g, f, s, _ = hand_case(case)
    sol = Solved(g, start_cells=case[2])
    recs = {(f, s): (verify_books.NO_MOVE, verify_books.CODE[sol.value]), **sol.recs}
    return verify.verify_file(write(tmp_path, "h.pnbook", sol.bytes(recs, certs={(f, s): (2, payload)})))


@pytest.mark.parametrize(
    "case, controller, rules, combination, value, code",
    [
        (SB_ONE, 2, SB_ONE_RULES, (), 0, 4),  # first-wont-win, and the game is a draw
        (SB_THREE, 2, SB_THREE_RULES, (), 0, 4),
        (SB_SHARED, 2, SB_SHARED_RULES, (), -1, 4),  # first-wont-win; the second player wins
        (COMB, 1, COMB_RULES, COMB_XL, 1, 1),  # first-wins
    ],
)
def test_hand_built_additions_are_valid(tmp_path, case, controller, rules, combination, value, code):
    """Each certificate is accepted and proves what it says, which minimax confirms; in a book it
    ends the controller's strategy where that strategy needs what it proves (not for
    SB_SHARED: the second player's strategy of a second player's win needs second-wins)."""
    g, f, s, minimax_value = hand_case(case)
    assert minimax_value == value
    lo, hi = verify.CODE_INTERVAL[code]
    assert lo <= minimax_value + 1 <= hi  # outcome ranks: second-wins 0, draw 1, first-wins 2
    threat = 254 if combination else 255
    payload = verify_books.connect4_payload(controller, threat, rules, combination)
    rs = verify.parse_ruleset(payload, "test")
    assert verify.check_ruleset(verify.rules_from_json(g.rules_json()), f, s, rs) == code
    rep = hand_book(tmp_path, case, payload)
    assert rep.exit_code == 0, rep.message
    assert rep.certificates_used >= (case is not SB_SHARED)


def replaced(rules, i, cells):
    return rules[:i] + [(rules[i][0], cells)] + rules[i + 1 :]


@pytest.mark.parametrize(
    "case, rules, want",
    [
        # x in the column of the group's empty cell 6 (c3 is directly playable)
        (
            SB_THREE,
            replaced(SB_THREE_RULES, 0, (4, 5, 6, 7, 4, 10, 6, 2, 7, 3)),
            r"instance 0 \(Specialbefore a2 b2 c2 d2 a2 c3 c2 c1 d2 d1\) is not valid: "
            r"x c3 is in the column of an empty cell of the group",
        ),
        # s0 = 6, an empty cell of the group, but 10 below it is vacant
        (
            SB_THREE,
            replaced(SB_THREE_RULES, 0, (4, 5, 6, 7, 6, 1, 4, 0, 7, 3)),
            r"is not valid: s0 c2 is not directly playable",
        ),
        (
            SB_THREE,
            replaced(SB_THREE_RULES, 0, (4, 5, 6, 7, 4, 0, 6, 2, 7, 3)),
            r"is not valid: x a1 is not directly playable",
        ),
        # s0 = 1 is not a cell of the group
        (
            SB_THREE,
            replaced(SB_THREE_RULES, 0, (4, 5, 6, 7, 1, 4, 6, 2, 7, 3)),
            r"is not valid: s0 b1 is not an empty cell of the group",
        ),
        # a pair for s0 as well: one pair too many
        (
            SB_THREE,
            replaced(SB_THREE_RULES, 0, (4, 5, 6, 7, 4, 1, 4, 0, 6, 2, 7, 3)),
            r"is not valid: 3 pairs for the group's 2 empty cells",
        ),
        # column b is left: it holds s0 and all the aboves (a Before's claim), not x
        (SB_ONE, SB_ONE_RULES[:2], r"problem b1 b2 b3 b4 is solved by no instance"),
        # d1-a4 is left: it holds s0, not x
        (SB_ONE, SB_ONE_RULES[1:], r"problem d1 c2 b3 a4 is solved by no instance"),
        # special squares shared: s0 with a Vertical, x with a Claimeven, both with the same
        # Specialbefore again (a special part is never the same part)
        (
            SB_ONE,
            SB_ONE_RULES + [(verify.VERTICAL, (9, 5))],
            r"instances 1 \(Specialbefore .*\) and 3 \(Vertical b3 b2\) are not compatible: "
            r"their squares share b3",
        ),
        (
            SB_ONE,
            SB_ONE_RULES + [(verify.CLAIMEVEN, (4, 0))],
            r"instances 1 \(Specialbefore .*\) and 3 \(Claimeven a2 a1\) are not compatible: "
            r"their squares share a2",
        ),
        # a part shared by a Specialbefore and a Before must be the same part
        (
            SB_SHARED,
            replaced(SB_SHARED_RULES, 1, (10, 11, 12, 13, 10, 5, 13, 8)),
            r"instances 0 \(Specialbefore .*\) and 1 \(Before .*\) are not compatible: "
            r"their squares in column 4 overlap and are not the same part$",
        ),
        (
            SB_SHARED,
            replaced(SB_SHARED_RULES, 0, (11, 12, 13, 14, 14, 7, 13, 8)),
            r"instances 0 \(Specialbefore .*\) and 1 \(Before .*\) are not compatible: "
            r"their squares in column 4 overlap and are not the same part$",
        ),
        (
            SB_ONE,
            SB_ONE_RULES + SB_ONE_RULES[1:2],
            r"instances 1 \(Specialbefore .*\) and 3 \(Specialbefore .*\) are not compatible: "
            r"their squares in column 1 overlap and are not the same part \(a special part",
        ),
    ],
)
def test_tampered_specialbefore_is_named_at_its_position(tmp_path, case, rules, want):
    payload = verify_books.connect4_payload(2, 255, rules)
    rep = hand_book(tmp_path, case, payload)
    assert rep.exit_code == 1 and "invalid Connect Four certificate" in rep.message, rep.message
    assert rep.hole == list(case[2]) and rep.hole_moves in rep.message
    assert re.search(want, rep.message), rep.message


# The combination's position with 11 where 10 was: the first player's group 3 7 11 15 is gone.
COMB_NO_G2 = (5, 4, (15, 16, 10, 11, 5, 18, 6, 13, 1))


@pytest.mark.parametrize(
    "case, combination, rules, want",
    [
        (COMB, (7, 9), COMB_RULES, r"low cell e2 is not directly playable"),
        (COMB, (7, 0), COMB_RULES, r"low cell a1 is in row 0 \(0 at the top\), which is not odd"),
        (
            COMB,
            (12, 8),
            COMB_RULES,
            r"crossing cell c3 is in row 2 \(0 at the top\), of the other parity than the 11 vacant cells",
        ),
        (COMB, (7, 2), COMB_RULES, r"crossing cell c2 and low cell c1 are in the same column"),
        (COMB, (7, 20), COMB_RULES, r"low cell L 20 is off the 20-cell grid"),
        (
            COMB_NO_G2,
            COMB_XL,
            COMB_RULES,
            r"no group consists of crossing cell c2, d1, the cell above the low cell and two stones",
        ),
        # e1 d2 c3 b4 holds L, which is not dead
        (COMB, COMB_XL, COMB_RULES[1:], r"problem e1 d2 c3 b4 is solved by no instance"),
        # L's column is outside the region
        (
            COMB,
            COMB_XL,
            COMB_RULES + [(verify.CLAIMEVEN, (8, 3))],
            r"instance 2 \(Claimeven d2 d1\) is not valid: d2 is not empty: it is in the "
            r"crossing cell's column at or above below\(X\), or in the low cell's column",
        ),
        # so is X's column from below(X) up
        (
            COMB,
            COMB_XL,
            COMB_RULES + [(verify.VERTICAL, (17, 12))],
            r"instance 2 \(Vertical c4 c3\) is not valid: c3 is not empty",
        ),
    ],
)
def test_tampered_threat_combination_is_named_at_its_position(tmp_path, case, combination, rules, want):
    payload = verify_books.connect4_payload(1, 254, rules, combination)
    rep = hand_book(tmp_path, case, payload)
    assert rep.exit_code == 1 and "invalid Connect Four certificate" in rep.message, rep.message
    assert rep.hole == list(case[2]) and rep.hole_moves in rep.message
    assert re.search(want, rep.message), rep.message


def test_additions_structure(tmp_path):
    """A T = 254 payload without X and L, and a Specialbefore without its special pair, are
    damaged files (exit 2), named with the position."""
    good = verify_books.connect4_payload(1, 254, COMB_RULES, COMB_XL)
    cases = [
        (COMB, good[:4], "a kind 2 payload of 4 bytes is shorter than its 5 leading bytes"),
        (COMB, good[:2] + good[4:], "corrupt book"),  # X and L left out
        (COMB, good + b"\x00", "1 bytes follow the last of its 2 instances"),
        (
            SB_THREE,
            verify_books.connect4_payload(2, 255, [(verify.SPECIALBEFORE, (4, 5, 6, 7))]),
            "instance 0 (Specialbefore) has 4 cells, not 4 + 2e with e >= 1",
        ),
        (
            SB_THREE,
            verify_books.connect4_payload(2, 255, [(verify.SPECIALBEFORE, (4, 5, 6, 7, 4, 1, 6))]),
            "instance 0 (Specialbefore) has 7 cells",
        ),
    ]
    for case, bad, want in cases:
        rep = hand_book(tmp_path, case, bad)
        assert rep.exit_code == 2 and want in rep.message, (want, rep.message)
        assert "canonical position: first " in rep.message


def combinations_of(g: Game, f, s):
    """The threat combinations (X, L) of the player not to move, read from book-format.md
    ("Kind 2", condition 3 with T = 254) independently of the verifier: L directly playable in
    an odd row (from the top), X vacant above a vacant cell in another column, in a row of the
    parity of the vacant count, with groups X L and X above(L), each with two stones of that
    player."""
    w, n = g.width, g.n
    occ = f | s
    nvac = n - bin(occ).count("1")
    mine = f if bin(f).count("1") > bin(s).count("1") else s

    def group(a, b):
        pair = 1 << a | 1 << b
        return any(m & pair == pair and (m & ~pair) & mine == m & ~pair for m in g.masks)

    out = []
    for low in g.moves(f, s):
        if (low // w) % 2 != 1:
            continue
        for x in range(n - w):
            if occ >> x & 1 or occ >> (x + w) & 1 or (x // w) % 2 != nvac % 2 or x % w == low % w:
                continue
            if group(x, low) and group(x, low - w):
                out.append((x, low))
    return out


def test_additions_are_sound_against_minimax(c4):
    """Rule sets with Specialbefores (no threat, or a threat) on random 4 x 4 positions, and the
    threat combinations of every position up to 10 stones: whatever the verifier accepts agrees
    with minimax, and every combination found from the definition is accepted as condition 3."""
    g = c4.g
    rules = verify.rules_from_json(g.rules_json())
    rng = random.Random(4)
    positions = list(c4_positions(g, 10))
    cases = [((f, s), 254, xl) for f, s in positions for xl in combinations_of(g, f, s)]
    rng.shuffle(positions)
    for f, s in positions[:250]:
        cases += [((f, s), t, ()) for t in [verify_books.NO_THREAT] + verify_books.connect4_threats(g, f, s)]
    used = Counter()
    for (f, s), t, xl in cases:
        controller = 1 if bin(f).count("1") > bin(s).count("1") else 2
        insts = random_rule_set(rules, g, f, s, t, controller, rng, xl, specialbefore=t != 254)
        if insts is None:
            continue
        payload = verify_books.connect4_payload(controller, t, [(i.rule, i.cells) for i in insts], xl)
        try:
            code = verify.check_ruleset(rules, f, s, verify.parse_ruleset(payload, "test"))
        except verify.CertificateInvalid as e:
            assert t != 254, e  # the combinations are valid; so are the sets found for them
            continue
        lo, hi = verify.CODE_INTERVAL[code]
        assert lo <= RANK[c4.value_fn(f, s)] <= hi, (f, s, t, xl, insts)
        used["combination" if t == 254 else "no threat" if t == verify_books.NO_THREAT else "threat"] += 1
        used["Specialbefore"] += any(i.rule == verify.SPECIALBEFORE for i in insts)
    assert used["combination"] >= 20 and used["Specialbefore"] >= 15, used


def test_specialbefore_claimeven_below_an_inverse():
    """A Specialbefore's Claimeven part counts as a Claimeven for condition 2. On 4 x 6 after
    1 1 2 1 4 4 (rows 3 to 5 from the top: O . . . / O . . O / X X . X) the Specialbefore on
    row 4 (s0 = 17, x = 15, the Claimeven (22, 18)) and the Lowinverse (10, 6, 11, 7) are each
    valid and their squares disjoint, but the Claimeven lies in column c below the
    Lowinverse's lowest cell there."""
    g = connect4(4, 6)
    f, s = replay(g, (20, 16, 21, 12, 23, 19))
    rules = verify.rules_from_json(g.rules_json())
    sb = (verify.SPECIALBEFORE, (16, 17, 18, 19, 17, 15, 22, 18))
    low = (verify.LOWINVERSE, (10, 6, 11, 7))
    b = verify.C4Position(rules, f, s, verify.NO_THREAT)
    groups = verify.connect4_groups(4, 6)
    checked = [verify.check_instance(b, verify.RuleInstance(*i), groups, f) for i in (sb, low)]
    assert not checked[0].squares & checked[1].squares
    with pytest.raises(
        verify.CertificateInvalid,
        match=r"Claimeven c6 c5 lies below the lowest cell of the Lowinverse in column 3",
    ):
        verify.check_ruleset(
            rules, f, s, verify.parse_ruleset(verify_books.connect4_payload(2, 255, [sb, low]), "t")
        )
    # with the Vertical part (18, 14) instead there is no Claimeven below it
    sb_vertical = (verify.SPECIALBEFORE, (16, 17, 18, 19, 17, 15, 18, 14))
    assert (
        verify.incompatibility(
            b, verify.check_instance(b, verify.RuleInstance(*sb_vertical), groups, f), checked[1]
        )
        is None
    )
