"""`pndb compact` keeps values, books and resumability, and shrinks what a solve stored.

Expected values come from the reference minimax (tests/reference.py); books are checked by the
independent verifier."""

import reference as R
from conftest import REF_NAME, cli, ok, ref



def counts(db):
    import json

    return json.loads(ok(cli("status", "--json", db)))


def test_compact_midway_then_resume(tmp_path):
    db = tmp_path / "db"
    args = ["solve", "connect4:5x4", "--moves", "33", "--inner-nodes", "0", "--db", db, "--quiet"]
    assert cli(*args, "--max-nodes", "1500").returncode == 3
    before = counts(db)
    ok(cli("compact", db))
    assert "consistent" in ok(cli("check", db))
    assert counts(db)["nodes"] <= before["nodes"]
    g = ref("connect4:5x4")
    a = b = 0
    for col in (2, 2):
        a, b = R.play(g, a, b, R.drop(g, a, b, col))
    assert f"({REF_NAME[R.minimax(g, a, b)]})" in ok(cli(*args))
    assert "consistent" in ok(cli("check", db))


def test_compact_solved_keeps_the_book(tmp_path):
    for spec, inner in (("connect4:4x4", "0"), ("qango6", "10000")):
        db = tmp_path / spec.replace(":", "-")
        ok(cli("solve", spec, "--inner-nodes", inner, "--db", db, "--quiet"))
        before = counts(db)
        ok(cli("compact", db))
        after = counts(db)
        assert after["result"] == before["result"]
        assert after["nodes"] == 1 and after["parent_links"] == 0
        assert after["db_bytes"] <= before["db_bytes"]
        assert "consistent" in ok(cli("check", db))
        book = tmp_path / f"{db.name}.pnbook"
        ok(cli("export", db, "-o", book))
        assert ok(cli("verify", book)).startswith("OK")
        again = ok(cli("solve", spec, "--db", db, "--quiet"))
        assert f"({before['result']})" in again
