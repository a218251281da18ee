"""Books of Go solves (docs/go-book-format.md): the records' keys are the page's definition,
computed here from the page alone (the board's symmetries, the least form, the encoding,
BLAKE2b-16) on the reference model's positions (tests/go_reference.py); walking the book's
strategies with the reference model and those keys reaches every record and proves the value;
an unsolved database is refused in one line; a compacted database checks and exports the same
strategies; and the batched methods written position by position give a placement game's book
byte for byte."""

import dataclasses
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from conftest import assert_user_error, run_process
from go_reference import BLACK, PASS, WHITE, RefGo

import pndb
from pndb.book import export_book
from pndb.games import load_game
from pndb.games.interface import PerPosition
from pndb.store import Store

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "go-book-format.md"
BOOK_PASS, NO_MOVE = 64, 255
CLAIM = {"first-wins": [(BLACK, 2)], "second-wins": [(WHITE, 0)], "draw": [(BLACK, 1), (WHITE, 1)]}
INTERVAL = {0: (0, 2), 1: (2, 2), 2: (0, 0), 3: (1, 1), 4: (0, 1), 5: (1, 2)}


# ---------------------------------------------------------------- the page's definitions


def symmetries(w, h):
    """The table of "Boards, points, symmetries": image (r', c') of (r, c), as permutations."""
    maps = [lambda r, c: (r, c), lambda r, c: (r, w - 1 - c), lambda r, c: (h - 1 - r, c),
            lambda r, c: (h - 1 - r, w - 1 - c)]  # fmt: skip
    if w == h:
        maps += [lambda r, c: (c, r), lambda r, c: (w - 1 - c, h - 1 - r), lambda r, c: (c, h - 1 - r),
                 lambda r, c: (w - 1 - c, r)]  # fmt: skip
    return [[f(p // w, p % w)[0] * w + f(p // w, p % w)[1] for p in range(w * h)] for f in maps]


def bitboards(board):
    """A reference board (a tuple of '.', 'B', 'W') as (black, white)."""
    return tuple(sum(1 << p for p, x in enumerate(board) if x == colour) for colour in (BLACK, WHITE))


def image(board, perm):
    return tuple(sum(1 << perm[p] for p in range(len(perm)) if x >> p & 1) for x in board)


def doc_key(w, h, state):
    """(key, canonical permutation) of a reference state, as the page's "A position and its key"."""
    forms = []
    for perm in symmetries(w, h):
        history = sorted(image(bitboards(b), perm) for b in state.history)
        forms.append(((image(bitboards(state.board), perm), history), perm))
    (board, history), perm = min(forms, key=lambda f: f[0])
    encoding = bytes([w, h, state.to_move == BLACK, state.passes]) + b"".join(
        b.to_bytes(8, "big") + x.to_bytes(8, "big") for b, x in [board, *history]
    )
    return hashlib.blake2b(encoding, digest_size=16).digest(), perm


def read_raw(path, certificates=None):
    """(header, {key: (move, value code)}) of a book file, read by book-format.md's layout;
    its certificates as (key, kind, payload) into the list ``certificates``."""
    raw = zstandard.ZstdDecompressor().decompress(Path(path).read_bytes())
    assert raw[:6] == b"PNBOOK"
    n = int.from_bytes(raw[8:12], "big")
    header = json.loads(raw[12 : 12 + n])
    at = 12 + n + 18 * header["records"]
    body = raw[12 + n : at]
    records = {body[i : i + 16]: (body[i + 16], body[i + 17]) for i in range(0, len(body), 18)}
    assert list(records) == sorted(records)
    while at < len(raw):
        size = int.from_bytes(raw[at + 17 : at + 19], "big")
        certificates.append((raw[at : at + 16], raw[at + 16], raw[at + 19 : at + 19 + size]))
        at += 19 + size
    return header, records


def margin_bound(w, h, komi):
    """The interval the kind 3 certificate proves ("Certificates"), or None."""
    n = w * h
    if abs(komi) < n:
        return None
    return (0, 0) if komi > n else (0, 1) if komi == n else (1, 2) if komi == -n else (2, 2)


def walk(ref, w, h, start, records, certified, owner, threshold):
    """The keys of the records the strategy of ``owner`` forcing ``threshold`` (an outcome:
    2 Black wins, 1 draw, 0 White wins; at least it for Black, at most for White) reaches, as
    "What a Go book proves" says (``certified``: the keys with a margin bound); AssertionError
    at a hole or a wrong end."""
    used, seen, stack = set(), set(), [start]
    while stack:
        state = stack.pop()
        if ref.over(state):
            outcome = ref.outcome(state.board)
            assert outcome >= threshold if owner == BLACK else outcome <= threshold
            continue
        key, perm = doc_key(w, h, state)
        if key in seen:
            continue
        seen.add(key)
        if key in records:
            lo, hi = INTERVAL[records[key][1]]
            assert hi >= threshold if owner == BLACK else lo <= threshold
        if key in certified:
            lo, hi = margin_bound(w, h, ref.komi)
            if (lo >= threshold) if owner == BLACK else (hi <= threshold):
                used.add(key)
                continue
        if state.to_move == owner:
            move = records[key][0]
            assert move != NO_MOVE
            moves = [PASS if move == BOOK_PASS else perm.index(move)]
            used.add(key)
        else:
            moves = ref.legal_moves(state)
        stack.extend(ref.play(state, m) for m in moves)
    return used


# ---------------------------------------------------------------- the tests


def test_the_page_s_example_keys_are_its_definition():
    rows = re.findall(r"^\| (?:\(none\)|`([a-z0-9 ]+)`) \| .* \| `([0-9a-f]{32})` \|$", DOC.read_text(), re.M)
    assert len(rows) == 5
    game = load_game("go:2x2")
    for moves, key in rows:
        ref, state = RefGo(2, 2), RefGo(2, 2).start()
        for m in game.parse_moves(moves)[1]:
            state = ref.play(state, PASS if m == BOOK_PASS else m)
        assert doc_key(2, 2, state)[0].hex() == key


@pytest.mark.parametrize(
    "spec,w,h,komi,moves",
    [("go:2x2:komi=1", 2, 2, 1, ""), ("go:2x3", 2, 3, 0, "a1 b2"), ("go:3x1:komi=3", 3, 1, 3, "")],
)
def test_a_go_book_proves_its_value_under_the_page_s_keys(spec, w, h, komi, moves, tmp_path):
    db, book = tmp_path / "go.lmdb", tmp_path / "go.pnbook"
    solved = pndb.solve(spec, db=db, moves=moves, inner_nodes=0)
    ran = run_process("export", db, "-o", book)
    assert ran.returncode == 0, ran.stderr
    certificates = []
    header, records = read_raw(book, certificates)
    assert header["value"] == solved.value.name and header["rules"]["family"] == "go"
    assert all(kind == 3 and payload == b"" for _, kind, payload in certificates)
    assert (komi == w * h) == bool(certificates)  # (the margin bound decides White's draw at once)
    ref = RefGo(w, h, komi)
    start = ref.start()
    for m in header["start"]["cells"]:
        start = ref.play(start, PASS if m == BOOK_PASS else m)
    assert len(header["start"]["cells"]) == len(moves.split())
    used = set()
    for owner, threshold in CLAIM[header["value"]]:
        used |= walk(ref, w, h, start, records, {k for k, _, _ in certificates}, owner, threshold)
    assert used == set(records)  # every record is a position of a strategy, keyed as the page says


def test_the_verifier_checks_a_go_book(tmp_path):
    db, book = tmp_path / "go.lmdb", tmp_path / "go.pnbook"
    pndb.solve("go:2x2:komi=1", db=db, inner_nodes=0)
    pndb.export(db, book)
    ran = subprocess.run([sys.executable, ROOT / "tools" / "verify.py", book], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("OK proven: go:2x2:komi=1 is draw"), ran.stdout


def test_an_unsolved_go_database_is_refused_in_one_line(tmp_path):
    db, book = tmp_path / "go.lmdb", tmp_path / "go.pnbook"
    r = pndb.solve("go:3x3", db=db, inner_nodes=0, max_nodes=50)
    assert not r.solved
    assert_user_error(run_process("export", db, "-o", book), "not solved yet", "--partial")
    assert not book.exists()
    ran = run_process("export", db, "-o", book, "--partial")
    assert ran.returncode == 0, ran.stderr
    assert read_raw(book)[0]["partial"] is True


def test_a_line_the_database_does_not_prove_fails_the_export_in_one_line(tmp_path):
    """A position Black's strategy needs, its node and its children's deleted from the database:
    the walk finds no move there."""
    import lmdb

    db, book = tmp_path / "go.lmdb", tmp_path / "go.pnbook"
    pndb.solve("go:2x2:komi=1", db=db, inner_nodes=0, moves="a1")  # a draw, White to move
    game = load_game("go:2x2:komi=1")
    pos = game.parse_moves("a1 b2")[0]  # Black to move
    env = lmdb.open(str(db), max_dbs=16, subdir=True)
    with env.begin(write=True) as txn:
        nodes = env.open_db(b"nodes", txn=txn)
        assert txn.delete(game.key(pos), db=nodes)
        assert all([txn.delete(k, db=nodes) for k in game.children(pos).keys])
    env.close()
    assert_user_error(run_process("export", db, "-o", book), "no stored move for its strategy")
    assert not book.exists()


def test_a_compacted_go_database_checks_and_exports_the_same_strategies(tmp_path):
    db = tmp_path / "go.lmdb"
    pndb.solve("go:2x2:komi=1", db=db, inner_nodes=0)
    before = read_raw(pndb.export(db, tmp_path / "before.pnbook").path)[1]
    ran = run_process("compact", db)
    assert ran.returncode == 0, ran.stderr
    assert pndb.check(db).problems == []
    after = read_raw(pndb.export(db, tmp_path / "after.pnbook").path)[1]
    assert {k: m for k, (m, _) in after.items()} == {k: m for k, (m, _) in before.items()}
    assert pndb.status(db)["nodes"] == 1


def test_positions_one_at_a_time_give_a_placement_game_the_same_book(tmp_path):
    """The batched methods of PerPosition (Go's) and the placement kernels' give one book."""
    db = tmp_path / "t.lmdb"
    pndb.solve("mnk:4,4,3", db=db)
    game = load_game("mnk:4,4,3")
    one_at_a_time = type("OneAtATime", (PerPosition, type(game)), {})
    slow = one_at_a_time(**{f.name: getattr(game, f.name) for f in dataclasses.fields(game)})
    books = []
    for g in (game, slow):
        out = tmp_path / f"{type(g).__name__}.pnbook"
        with Store(db) as store:
            export_book(store, g, out)
        books.append(read_raw(out)[1])
    assert books[0] == books[1] and len(books[0]) > 10


def rewritten(book, out, change):
    """A copy of ``book`` whose decompressed content is ``change(content)``, a valid frame."""
    raw = zstandard.ZstdDecompressor().decompress(Path(book).read_bytes())
    out.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(change(raw)))
    return out


def test_a_go_book_with_a_damaged_record_or_certificate_is_refused_in_one_line(tmp_path):
    db, book = tmp_path / "go.lmdb", tmp_path / "go.pnbook"
    pndb.solve("go:3x1:komi=3", db=db, inner_nodes=0)
    pndb.export(db, book)
    header, records = read_raw(book, [])
    raw = zstandard.ZstdDecompressor().decompress(book.read_bytes())
    at = raw.index(next(iter(records)))  # the first record
    bad_move = rewritten(book, tmp_path / "m.pnbook", lambda r: r[: at + 16] + bytes([70]) + r[at + 17 :])
    assert_user_error(run_process("show", bad_move), "record 0: its move is not a point or a pass")
    cert = at + 18 * header["records"]
    bad_kind = rewritten(book, tmp_path / "k.pnbook", lambda r: r[: cert + 16] + bytes([1]) + r[cert + 17 :])
    assert_user_error(run_process("show", bad_kind), "certificate 0: kind 1 is unknown")
