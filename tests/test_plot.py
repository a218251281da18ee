"""The time series of a solve (pndb.timeseries) and `pndb plot`: a real solve records a point
per checkpoint whose last one is what `pndb status` says, a resume appends to it, the thinning
keeps its bound, a database written before the series existed reads as an empty one, and the
plot is a picture file (its data checked, not its pixels)."""

import json
import sys

import lmdb
from conftest import assert_user_error, cli, ok

import pndb
from pndb.store import Store
from pndb.timeseries import MAX_POINTS, ROOT_NUMBERS, SeriesPoint, kept, stride

# a solve of some 50 expansions with a checkpoint every 0.1 s: a few seconds, several points
SOLVE = ("solve", "connect4:5x4", "--checkpoint-seconds", "0.1", "--inner-nodes", "100", "-q")
STATUS_OF_POINT = {  # a field of `pndb status --json` -> the SeriesPoint's
    "checkpoints": "checkpoint", "seconds": "seconds", "nodes": "nodes", "expansions": "expansions",
    "inner_nodes": "inner_nodes", **{f"root_{name}": name for name in ROOT_NUMBERS},
}  # fmt: skip


def assert_series_ends_at_status(db):
    """The series of ``db`` read through the API: its last point says what `pndb status` says."""
    status = json.loads(ok(cli("status", "--json", db)))
    points = pndb.series(db)
    assert status["series_points"] == len(points) > 0
    last = points[-1]
    for field, name in STATUS_OF_POINT.items():
        assert getattr(last, name) == status[field], (field, getattr(last, name), status[field])
    assert last.workers == 1 and last.db_bytes > 0
    return points


def test_a_solve_records_its_series_a_resume_appends_and_plot_draws_it(tmp_path):
    db = tmp_path / "c.lmdb"
    assert cli(*SOLVE, "--db", db, "--max-nodes", "15").returncode == 3  # stopped by the limit
    first = assert_series_ends_at_status(db)
    assert first[-1].expansions >= 15  # one point a checkpoint: the timer's (if any came) and the last
    assert "draw" in ok(cli(*SOLVE, "--db", db))  # resumed to the end
    points = assert_series_ends_at_status(db)
    assert points[: len(first)] == first  # what the first run recorded stays
    assert len(points) > len(first)
    for before, after in zip(points, points[1:]):
        assert after.checkpoint == before.checkpoint + 1  # every checkpoint, far below the bound
        assert after.seconds > before.seconds and after.expansions >= before.expansions
        assert after.nodes >= before.nodes
    assert points[-1].pn_first_avoids_loss == 0 and points[-1].dn_first_avoids_loss is None  # a draw
    assert all(p.rate >= 0 for p in points) and any(p.rate > 0 for p in points)
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    assert ok(cli("plot", db, "-o", png)).strip() == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    ok(cli("plot", db, "--output", svg))
    assert b"<svg" in svg.read_bytes()[:1000]


def test_thinning_keeps_the_bound_and_an_even_spacing(tmp_path):
    limit = 8
    with Store(tmp_path / "s.lmdb", writer=True, create=True) as store:
        store.series_limit = limit
        for last in range(1, 200):  # strides up to 32
            store.commit(point=point(last))
            with store.view() as view:
                numbers = [p.checkpoint for p in view.series()]
            assert len(numbers) <= limit + 1, (last, numbers)
            assert numbers[0] == 1 and numbers[-1] == last
            steps = {b - a for a, b in zip(numbers, numbers[1:-1])}  # the kept ones, the last aside
            assert len(steps) <= 1 and (not steps or steps.pop() == stride(last, limit)), (last, numbers)
            assert len(numbers) >= min(last, limit // 2)  # thinned no more than the bound needs
    for last in (MAX_POINTS, MAX_POINTS + 1, 3 * 86_400, 10**7 + 3):  # a checkpoint a second for days
        s = stride(last)
        count = (last - 1) // s + 1 + ((last - 1) % s != 0)
        assert count <= MAX_POINTS + 1 and count > MAX_POINTS // 2
        assert kept(1, last) and kept(last, last) and kept(2, last) == (s == 1)


def point(number):
    return SeriesPoint(number, float(number), 1, 1, 1, 1, number, number, 0, 0, 0, 0.0, 1)


def without_series(db):
    """Drop the series table of ``db``: the database as a pndb before the series wrote it."""
    env = lmdb.open(str(db), max_dbs=16)
    with env.begin(write=True) as txn:
        txn.drop(env.open_db(b"series", txn=txn), delete=True)
    env.close()


def test_a_database_without_a_series_reads_as_empty(tmp_path):
    db = tmp_path / "t.lmdb"
    ok(cli("solve", "tictactoe", "--db", db, "-q"))
    assert pndb.series(db)
    without_series(db)
    assert pndb.series(db) == []
    status = json.loads(ok(cli("status", "--json", db)))
    assert status["series_points"] == 0 and status["result"] == "draw"
    assert_user_error(cli("plot", db, "-o", tmp_path / "t.png"), "no time series")
    assert not (tmp_path / "t.png").exists()
    ok(cli("solve", "tictactoe", "--db", db, "-q"))  # a solve (solved already: one checkpoint) records again
    assert [p.checkpoint for p in pndb.series(db)] == [status["checkpoints"] + 1]


def test_plot_errors_are_one_line(tmp_path, monkeypatch):
    db = tmp_path / "t.lmdb"
    ok(cli("solve", "tictactoe", "--db", db, "-q"))
    assert_user_error(cli("plot", db, "-o", tmp_path / "t.jpg"), ".png", "t.jpg")
    assert_user_error(cli("plot", tmp_path / "none", "-o", tmp_path / "t.png"), "no pndb database")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the `plot` extra were not installed
    assert_user_error(cli("plot", db, "-o", tmp_path / "t.png"), "matplotlib", "pip install 'pndb[plot]'")
