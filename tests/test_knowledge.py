"""Game knowledge in the search: positions decided by pairing certificates (docs/book-format.md,
kind 1) get the reference minimax's value, `check` accepts them, and their books carry the
certificates and pass the independent verifier."""

import json
import random

import numpy as np
import pytest
import reference as R
from conftest import REF_NAME, cli, minimax, ok, ref

from pndb.games import load_game
from pndb.games.placement.game import Position



@pytest.mark.parametrize("spec", ["mnk:4,4,4", "mnk:4,4,3", "tictactoe"])
def test_solve_with_certificates_gives_verified_books(tmp_path, spec):
    db, book = tmp_path / "db", tmp_path / "b.pnbook"
    out = ok(cli("solve", spec, "--db", db, "--quiet"))
    want = REF_NAME[minimax(spec, 0, 0)]
    assert f"({want})" in out
    assert "consistent" in ok(cli("check", db))
    ok(cli("export", db, "-o", book))
    assert ok(cli("verify", book)).startswith("OK")
    if spec == "mnk:4,4,4":  # a draw the pairings decide near the root
        assert json.loads(ok(cli("status", "--json", db)))["certificates"] > 0
        assert "certificates" in ok(cli("verify", book))


def test_export_and_check_reject_a_stored_certificate_that_does_not_hold(tmp_path):
    """Certificates are stored as the compiled search found them; the export checks each one it
    writes by the game's definitions, and `check` every one: a tampered one (a pair dropped) is
    refused by both, naming the position, with nothing written."""
    import lmdb

    db, book = tmp_path / "db", tmp_path / "b.pnbook"
    ok(cli("solve", "mnk:4,4,4", "--db", db, "--quiet"))
    env = lmdb.open(str(db), max_dbs=8)
    with env.begin(write=True) as txn:
        certs = env.open_db(b"certs", dupsort=True, create=False, txn=txn)
        cur = txn.cursor(certs)
        entries = list(cur.iternext())
        assert entries
        for key, value in entries:  # every certificate loses its last pair
            assert txn.delete(key, value, db=certs)
            txn.put(key, value[:-2], db=certs, dupdata=True)
    env.close()
    exported = cli("export", db, "-o", book)
    assert exported.returncode != 0 and not book.exists()
    # a quick command's error is its one line: no progress line before it (they wait 2 s)
    assert "certificate does not hold" in exported.stderr and len(exported.stderr.splitlines()) == 1, exported.stderr
    checked = cli("check", db)
    assert checked.returncode != 0 and "does not hold" in checked.stdout + checked.stderr


def random_position(g, rng, stones):
    a = b = 0
    for _ in range(stones):
        moves = R.legal_moves(g, a, b)
        if R.outcome(g, a, b) != R.ONGOING or not moves:
            return None
        a, b = R.play(g, a, b, rng.choice(moves))
    return (a, b) if R.outcome(g, a, b) == R.ONGOING else None


def test_certificates_of_random_positions_hold_and_agree_with_minimax():
    """Every certificate the game gives on random mnk:5,4,4 positions holds by its definition,
    and what it proves contains the reference minimax value."""
    spec = "mnk:5,4,4"
    game, g, rng = load_game(spec), ref(spec), random.Random(9)
    found = 0
    for _ in range(400):
        pos = random_position(g, rng, rng.randrange(12, 15))
        if pos is None:
            continue
        value = R.minimax(g, *pos)
        for cert in game.certificates(Position(*pos)):
            found += 1
            assert game.certificate_holds(Position(*pos), cert)
            v = game.certificate_value(cert)
            assert v.lo <= value + 1 <= v.hi, (pos, cert, value)
    assert found > 20


def test_random_positions_solved_with_knowledge_match_minimax(tmp_path):
    spec = "mnk:5,4,4"
    g, rng = ref(spec), random.Random(4)
    lines = []
    while len(lines) < 15:
        pos = random_position(g, rng, rng.randrange(12, 14))
        if pos is not None:
            lines.append(pos)
    game = load_game(spec)
    texts = []
    for a, b in lines:  # move strings that reach each position: first's stones and second's alternate
        fa = [c for c in range(20) if a >> c & 1]
        fb = [c for c in range(20) if b >> c & 1]
        cells = [x for pair in zip(fa, fb + [None]) for x in pair if x is not None]
        texts.append(game.format_moves(cells).replace(" ", ""))
    (tmp_path / "p.txt").write_text("\n".join(texts) + "\n")
    out = ok(cli("solve", spec, "--positions", tmp_path / "p.txt", "--inner-nodes", "300", "--quiet"))
    for (a, b), line in zip(lines, out.splitlines()):
        assert line.split()[1] == REF_NAME[R.minimax(g, a, b)], line


def test_pairings_checked_together_agree_with_each_checked_alone():
    """The export checks a batch's pairing certificates with numpy at once
    (certificates_hold_of_many): on random mnk:5,4,4 positions it says what certificate_holds
    says of each, for the certificates the game gives and for damaged ones (a pair dropped, a
    cell twice, an occupied or off-board cell, a bad defender, a payload of even length)."""
    from pndb.values import PAIRING, Certificate

    game, g, rng = load_game("mnk:5,4,4"), ref("mnk:5,4,4"), random.Random(5)
    positions, certs = [], []
    for _ in range(300):
        pos = random_position(g, rng, rng.randrange(10, 15))
        if pos is None:
            continue
        for cert in game.certificates(Position(*pos)):
            p = cert.payload
            stone = next(c for c in range(20) if (pos[0] | pos[1]) >> c & 1)
            variants = [p, p[:-2], p + p[1:3], p[:1] + bytes([stone]) + p[2:], p[:1] + bytes([70]) + p[2:],
                        bytes([3]) + p[1:], p[:-1], p[:1]]  # fmt: skip
            for payload in variants:
                positions.append(pos)
                certs.append(Certificate(PAIRING, payload))
    a = np.array([p[0] for p in positions], np.uint64)
    b = np.array([p[1] for p in positions], np.uint64)
    together = game.certificates_hold_of_many(a, b, certs)
    alone = [game.certificate_holds(Position(*p), c) for p, c in zip(positions, certs)]
    assert together.tolist() == alone
    assert 50 < sum(alone) < len(alone)
