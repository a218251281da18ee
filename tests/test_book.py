"""Solution books through the real command line: solve, export, verify, show, play.

Every command runs in-process through click (conftest.cli), with its database and book
in a temporary directory. Expected values come from the reference model (tests/reference.py):
the game values, the value of every book move on small boards, and the moves that lose a value
when a book is tampered with. Books are tampered with by decompressing them, editing the layout
of docs/book-format.md and compressing again, never through pndb's own book code.
"""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import reference as R
import zstandard
from conftest import canonical, cli, minimax, ref, stones

from pndb.games import load_game
from pndb.games.placement.notation import cell_name, play_moves

ROOT = Path(__file__).resolve().parent.parent
MAGIC = b"PNBOOK\x00\x01"
RECORD = struct.Struct(">QQBB")
VALUE_INTERVAL = {  # value code -> interval over second-wins -1 < draw 0 < first-wins +1
    0: (-1, 1),
    1: (1, 1),
    2: (-1, -1),
    3: (0, 0),
    4: (-1, 0),
    5: (0, 1),
}
NAME_INTERVAL = {
    "unknown": (-1, 1),
    "first-wins": (1, 1),
    "second-wins": (-1, -1),
    "draw": (0, 0),
    "first-wont-win": (-1, 0),
    "second-wont-win": (0, 1),
}
BOOKS = {"tictactoe": "draw", "qango6": "first-wins", "connect4:4x4": "draw"}


# ---------------------------------------------------------------- running pndb


run = cli  # in-process: these tests need no process of their own
ENV = dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/nbcache"))


def run_tool(book):
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "verify.py"), str(book)],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )


def one_line_error(proc):
    """The single 'error: ...' line a user error prints on stderr (no traceback)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


# ---------------------------------------------------------------- the book file, by hand


def read_raw(path):
    """(header dict, [(a, b, move, value code)]) of a book file, per docs/book-format.md."""
    raw = zstandard.ZstdDecompressor().decompress(Path(path).read_bytes(), max_output_size=1 << 30)
    assert raw[:8] == MAGIC
    n = int.from_bytes(raw[8:12], "big")
    header = json.loads(raw[12 : 12 + n].decode("utf-8"))
    body = raw[12 + n :]
    assert len(body) == header["records"] * RECORD.size == len(body) // 18 * 18
    records = [RECORD.unpack_from(body, i) for i in range(0, len(body), RECORD.size)]
    return header, records


def write_raw(path, header, records, cut_body=0):
    """Write a book with this header and these records (sorted as the format asks)."""
    head = json.dumps(header).encode("utf-8")
    body = b"".join(RECORD.pack(*r) for r in sorted(records))
    if cut_body:
        body = body[:-cut_body]
    raw = MAGIC + len(head).to_bytes(4, "big") + head + body
    Path(path).write_bytes(zstandard.ZstdCompressor(level=3, write_checksum=True).compress(raw))


# ---------------------------------------------------------------- the reference


# ---------------------------------------------------------------- the books (built once)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """spec -> book path, each solved and exported through the CLI."""
    d = tmp_path_factory.mktemp("books")
    out = {}
    for spec, value in BOOKS.items():
        db = d / f"{spec.replace(':', '-')}.lmdb"
        book = d / f"{spec.replace(':', '-')}.pnbook"
        # without knowledge: these books are of format version 1, by moves alone (the
        # certificates of version 2 are tested in test_knowledge.py and test_verify_tool.py)
        solved = run("solve", spec, "--db", db, "-q", "--no-knowledge")
        assert solved.returncode == 0, solved.stdout + solved.stderr
        assert f"({value})" in solved.stdout
        exported = run("export", db, "-o", book)
        assert exported.returncode == 0, exported.stdout + exported.stderr
        assert value in exported.stdout and book.exists()
        out[spec] = book
    return out


@pytest.mark.parametrize("spec", list(BOOKS))
def test_book_verifies_with_pndb_and_the_standalone_tool(books, spec):
    book = books[spec]
    header, records = read_raw(book)
    assert header["format"] == "pndb-book" and header["format_version"] == 1
    assert header["value"] == BOOKS[spec] and header["partial"] is False
    assert header["records"] == len(records) > 0 and header["record_size"] == 18
    assert header["rules"] == json.loads(json.dumps(load_game(spec).rules_data()))
    assert header["start"] == {"moves": "", "cells": [], "first": 0, "second": 0}
    assert [r[:2] for r in records] == sorted({r[:2] for r in records}), "records not sorted or repeated"
    for proc in (run("verify", book), run_tool(book)):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.startswith("OK proven") and BOOKS[spec] in proc.stdout


@pytest.mark.parametrize("spec", ["tictactoe", "connect4:4x4"])
def test_book_records_agree_with_minimax(books, spec):
    """Each record's value holds the true value, and each book move keeps the strategy's value
    (the boards where plain minimax reaches every record; the qango6 book's records are too
    early in the game for it)."""
    game = load_game(spec)
    _, records = read_raw(books[spec])
    value = BOOKS[spec]
    for a, b, move, code in records:
        assert canonical(game, a, b) == (a, b), "a record under a non-canonical key"
        v = minimax(spec, a, b)
        lo, hi = VALUE_INTERVAL[code]
        assert lo <= v <= hi, f"record ({a}, {b}) says {code}, minimax {v}"
        first = R.first_to_move(a, b)
        # and at least what the strategy through it proves (also where a stone wins at once,
        # which the database holds no record of)
        proves = (1, 1) if value == "first-wins" else (0, 1) if first else (-1, 0)
        assert proves[0] <= lo <= hi <= proves[1], f"record ({a}, {b}) says only {code}"
        assert move in R.legal_moves(ref(spec), a, b)
        after = minimax(spec, *R.play(ref(spec), a, b, move))
        if value == "first-wins":
            assert first and after == 1
        elif first:
            assert after >= 0, f"the first player's move {move} at ({a}, {b}) loses"
        else:
            assert after <= 0, f"the second player's move {move} at ({a}, {b}) loses"
    assert len(records) >= 50


# ---------------------------------------------------------------- tampered books


def verify_fails(book, code=1):
    proc = run("verify", book)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def hole_of(proc):
    """The move sequence of the first hole that verify reports."""
    m = re.search(r"not proven: at (.*?): ", proc.stdout)
    assert m, proc.stdout
    return m.group(1)


@pytest.mark.parametrize("spec", list(BOOKS))
def test_removed_record_is_a_hole(books, spec, tmp_path):
    game = load_game(spec)
    header, records = read_raw(books[spec])
    by_depth = sorted(records, key=lambda r: (stones(r[0], r[1]), r))
    for victim in (by_depth[len(by_depth) // 2], by_depth[0]):  # one in the middle, and the start
        rest = [r for r in records if r != victim]
        bad = tmp_path / "removed.pnbook"
        write_raw(bad, dict(header, records=len(rest)), rest)
        proc = verify_fails(bad)
        assert proc.stdout.startswith("FAIL") and "no record" in proc.stdout
        line = hole_of(proc)
        text = "" if line == "(the empty board)" else line
        a, b, _ = play_moves(game, text)  # the hole, replayed, is the removed position
        assert canonical(game, a, b) == victim[:2], f"hole at {line} is not the removed record"


def value_after(spec, a, b, cell):
    """The minimax value after ``cell`` is played at (a, b); for qango6 (too big for a plain
    minimax this early) only when the opponent then wins at once, else None."""
    g = ref(spec)
    ca, cb = R.play(g, a, b, cell)
    if spec != "qango6":
        return minimax(spec, ca, cb)
    if R.outcome(g, ca, cb) != R.ONGOING:
        return minimax(spec, ca, cb)
    for reply in R.legal_moves(g, ca, cb):
        ga, gb = R.play(g, ca, cb, reply)
        opponent_wins = -1 if R.first_to_move(a, b) else 1
        if R.outcome(g, ga, gb) != R.ONGOING and minimax(spec, ga, gb) == opponent_wins:
            return minimax(spec, ga, gb)  # the opponent's immediate win is the value
    return None


def losing_alternative(spec, records, value):
    """(index, cell): a record and another legal move there that loses the book's value."""
    g = ref(spec)
    order = sorted(range(len(records)), key=lambda i: (-stones(*records[i][:2]), i))  # latest first
    for i in order:
        a, b, move, _ = records[i]
        first = R.first_to_move(a, b)
        for c in R.legal_moves(g, a, b):
            if c == move:
                continue
            after = value_after(spec, a, b, c)
            if after is None:
                continue
            loses = after < 1 if value == "first-wins" else (after < 0 if first else after > 0)
            if loses:
                return i, c
    raise AssertionError("no record has a losing alternative")


@pytest.mark.parametrize("spec", list(BOOKS))
def test_changed_move_that_loses_is_rejected(books, spec, tmp_path):
    header, records = read_raw(books[spec])
    i, cell = losing_alternative(spec, records, BOOKS[spec])
    a, b, _, code = records[i]
    changed = records[:i] + [(a, b, cell, code)] + records[i + 1 :]
    bad = tmp_path / "changed.pnbook"
    write_raw(bad, header, changed)
    proc = verify_fails(bad)
    assert proc.stdout.startswith("FAIL not proven: at ")
    tool = run_tool(bad)
    assert tool.returncode == 1


@pytest.mark.parametrize("spec", list(BOOKS))
def test_changed_header_value_is_rejected(books, spec, tmp_path):
    header, records = read_raw(books[spec])
    for other in ("first-wins", "second-wins", "draw"):
        if other == header["value"]:
            continue
        bad = tmp_path / f"{other}.pnbook"
        write_raw(bad, dict(header, value=other), records)
        proc = verify_fails(bad)
        assert proc.stdout.startswith("FAIL") and other in proc.stdout


RULE_CHANGES = {
    "one win pattern less": lambda r: dict(r, win_patterns=r["win_patterns"][1:]),
    "a disc cap": lambda r: dict(r, disc_cap=len(r["cells"]) - 2),
    "gravity toggled": lambda r: dict(r, gravity=not r["gravity"]),
    "a forbidden first move": lambda r: dict(
        r, first_move_forbidden=r["first_move_forbidden"] + [r["cells"][-1]]
    ),
}


@pytest.mark.parametrize("spec", list(BOOKS))
@pytest.mark.parametrize("change", list(RULE_CHANGES))
def test_changed_rules_are_rejected(books, spec, change, tmp_path):
    header, records = read_raw(books[spec])
    bad = tmp_path / "rules.pnbook"
    write_raw(bad, dict(header, rules=RULE_CHANGES[change](header["rules"])), records)
    proc = run("verify", bad)
    assert proc.returncode != 0, f"{change}: {proc.stdout}"
    assert "Traceback" not in proc.stderr
    assert not proc.stdout.startswith("OK")
    assert "rules" in proc.stdout + proc.stderr or "not proven" in proc.stdout


@pytest.mark.parametrize("spec", list(BOOKS))
def test_truncated_book_is_unreadable(books, spec, tmp_path):
    data = books[spec].read_bytes()
    cut = tmp_path / "cut.pnbook"
    cut.write_bytes(data[: len(data) // 2])
    proc = verify_fails(cut, code=2)
    assert one_line_error(proc) and proc.stdout == ""
    header, records = read_raw(books[spec])
    short = tmp_path / "short.pnbook"  # a valid frame whose records stop in the middle
    write_raw(short, header, records, cut_body=7)
    proc = verify_fails(short, code=2)
    assert one_line_error(proc)
    assert run_tool(short).returncode == 2


@pytest.mark.parametrize(
    "content",
    [
        b"this is not a book\n",
        zstandard.ZstdCompressor().compress(b'{"format": "pndb-book"}'),
        zstandard.ZstdCompressor().compress(MAGIC + (5).to_bytes(4, "big") + b"{oops"),
        b"",
    ],
    ids=["text", "zstd-json", "bad-header", "empty"],
)
def test_not_a_book_is_unreadable(tmp_path, content):
    path = tmp_path / "not.pnbook"
    path.write_bytes(content)
    proc = verify_fails(path, code=2)
    assert one_line_error(proc)
    missing = verify_fails(tmp_path / "missing.pnbook", code=2)
    assert "Traceback" not in missing.stderr


# ---------------------------------------------------------------- unsolved databases


@pytest.mark.parametrize("limit", [("--max-nodes", "3"), ("--max-seconds", "1")])
def test_export_of_an_unsolved_db(tmp_path, limit):
    db = tmp_path / "tournament.lmdb"
    # qango6:tournament: a solve of several seconds, so that one second leaves it unsolved
    solved = run("solve", "qango6:tournament", "--db", db, "-q", "--inner-nodes", "200", *limit)
    assert solved.returncode == 3, solved.stdout + solved.stderr
    book = tmp_path / "tournament.pnbook"
    refused = run("export", db, "-o", book)
    assert refused.returncode == 2
    assert "not solved" in one_line_error(refused) and "--partial" in refused.stderr
    assert not book.exists()
    partial = run("export", db, "-o", book, "--partial")
    assert partial.returncode == 0, partial.stderr
    header, _ = read_raw(book)
    assert header["partial"] is True
    assert header["value"] in NAME_INTERVAL
    for proc in (run("verify", book), run_tool(book)):
        assert proc.returncode != 0
        assert not proc.stdout.startswith("OK")
        assert "partial" in proc.stdout + proc.stderr


# ---------------------------------------------------------------- show and play


def shown_values(stdout):
    """{cell name: value name} of the per-move lines of `pndb show BOOK`."""
    return dict(re.findall(r"^\s+([a-z]+\d+|\d+)\s+([a-z-]+)\s*$", stdout, re.MULTILINE))


def test_show_qango6_book(books):
    proc = run("show", books["qango6"])
    assert proc.returncode == 0, proc.stderr
    assert "a b c d e f" in proc.stdout and "to move: first player" in proc.stdout
    assert "book value: first-wins" in proc.stdout
    values = shown_values(proc.stdout)
    assert len(values) == 36
    for cell in ("c3", "d3", "c4", "d4"):
        assert values[cell] == "first-wins", proc.stdout
    assert all(v in NAME_INTERVAL for v in values.values())
    after = run("show", books["qango6"], "--moves", "c3")
    assert after.returncode == 0, after.stderr
    assert "to move: second player" in after.stdout and after.stdout.count("X") >= 1
    values = shown_values(after.stdout)
    assert len(values) == 35 and "c3" not in values
    assert all(v in ("first-wins", "second-wont-win", "unknown") for v in values.values()), after.stdout


@pytest.mark.parametrize(
    "spec, moves",
    [
        ("tictactoe", ""),
        ("tictactoe", "b2"),
        ("tictactoe", "a1"),
        ("tictactoe", "b2 a1"),
        ("connect4:4x4", ""),
        ("connect4:4x4", "23"),
    ],
)
def test_show_values_never_contradict_minimax(books, spec, moves):
    game = load_game(spec)
    proc = run("show", books[spec], "--moves", moves)
    assert proc.returncode == 0, proc.stderr
    a, b, _ = play_moves(game, moves)
    g = ref(spec)
    values = shown_values(proc.stdout)
    legal = R.legal_moves(g, a, b)
    assert len(values) == len(legal)
    for cell in legal:
        name = cell_name(game, cell)
        lo, hi = NAME_INTERVAL[values[name]]
        v = minimax(spec, *R.play(g, a, b, cell))
        assert lo <= v <= hi, f"{spec} after {moves!r}: {name} shown {values[name]}, minimax {v}"
    m = re.search(r"book value: (\S+)", proc.stdout)
    lo, hi = NAME_INTERVAL[m.group(1)]
    assert lo <= minimax(spec, a, b) <= hi


def every_cell_lines(spec, repeats):
    g = ref(spec)
    game = load_game(spec)
    names = [cell_name(game, c) for c in sorted(g.cells)]
    return "\n".join(names * repeats) + "\n"


def final_outcome(stdout):
    lines = [x for x in stdout.splitlines() if x.strip()]
    assert lines and lines[-1].startswith("game over: "), stdout[-500:]
    return lines[-1]


def test_play_qango6_book_as_second(books):
    """The book plays first and wins; the human's bad input is asked again."""
    script = "z9\nc3 d4\n\n" + every_cell_lines("qango6", 40)
    proc = run("play", books["qango6"], "--as", "second", stdin=script)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert final_outcome(proc.stdout) == "game over: the first player has won"
    assert proc.stderr.count("try again") >= 3  # z9, two moves at once, an empty line
    assert "book plays" in proc.stdout


@pytest.mark.parametrize(
    "side, allowed",
    [("first", {"a draw", "the second player has won"}), ("second", {"a draw", "the first player has won"})],
)
def test_play_tictactoe_book_never_loses(books, side, allowed):
    proc = run("play", books["tictactoe"], "--as", side, stdin=every_cell_lines("tictactoe", 12))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert final_outcome(proc.stdout).removeprefix("game over: ") in allowed
