"""`pndb serve` over HTTP, against a real server process: the JSON of a position is
pndb.describe's, moves that cannot be played are a 400 with the reason, the page's files come
from the package and fetch nothing from elsewhere, a database is never written, and the
command behaves as a command (a free port and its URL, a bad source a one-line error, Ctrl-C
exits 130)."""

import json
import re
import shutil
import signal
import urllib.error
import urllib.parse
import urllib.request
from importlib import resources

import pytest
from conftest import PNDB, assert_user_error, cli, ok, run_process, served

import pndb
from pndb.serve import ASSETS

POSITIONS = ["", "b2", "b2 a1", "a1b1a2b2", "a1 b1 a2 b2 a3"]  # the last one is over


def get(url):
    """(status, content type, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def get_json(url):
    status, content_type, body = get(url)
    assert content_type == "application/json", (status, content_type, body)
    return status, json.loads(body)


def query(moves):
    return urllib.parse.urlencode({"moves": moves})


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """(database, book) of tictactoe, solved and exported through the CLI."""
    d = tmp_path_factory.mktemp("serve")
    db, book = d / "t.lmdb", d / "t.pnbook"
    ok(cli("solve", "tictactoe", "--db", db, "-q"))
    ok(cli("export", db, "-o", book))
    return db, book


@pytest.fixture(scope="module")
def db_server(sources):
    with served(sources[0]) as (url, _):
        yield url


@pytest.fixture(scope="module")
def book_server(sources):
    with served(sources[1]) as (url, _):
        yield url


@pytest.mark.parametrize("moves", POSITIONS)
@pytest.mark.parametrize("kind", ["database", "book"])
def test_position_is_describe(sources, db_server, book_server, kind, moves):
    source, url = (sources[0], db_server) if kind == "database" else (sources[1], book_server)
    status, data = get_json(f"{url}api/position?{query(moves)}")
    assert status == 200
    assert data == json.loads(pndb.describe(source, moves).to_json())
    assert data["source"] == kind


def test_game_alone(tmp_path):
    with served("connect4:4x4") as (url, _):
        assert (
            get_json(f"{url}api/position?{query('2312')}")[1]
            == pndb.describe("connect4:4x4", "2312").to_dict()
        )
        assert get_json(f"{url}api/line?{query('2312')}")[1] == {"moves": ["2", "3", "1", "2"]}
        assert get_json(f"{url}api/status")[1] is None
        assert get_json(f"{url}api/series")[1] is None
        assert get_json(f"{url}api/source")[1] == {"kind": "game", "path": "connect4:4x4"}


@pytest.mark.parametrize("moves", ["b2 b2", "zz", "a1 b1 a2 b2 a3 c3", "d4"])
def test_bad_moves_are_400_with_the_reason(db_server, moves):
    with pytest.raises(pndb.MoveError) as raised:
        pndb.describe("tictactoe", moves)
    for path in ("api/position", "api/reply", "api/line"):
        status, data = get_json(f"{db_server}{path}?{query(moves)}")
        assert status == 400 and data == {"error": str(raised.value)}, (path, status, data)


def test_reply_is_the_strategy_move(sources, book_server):
    for moves in POSITIONS[:-1]:
        view = pndb.describe(sources[1], moves)
        status, data = get_json(f"{book_server}api/reply?{query(moves)}")
        assert status == 200
        if view.strategy_move is not None:
            assert data == {"move": view.strategy_move}
        else:
            assert data["move"] in [o.move for o in view.best_moves()]
    assert get_json(f"{book_server}api/reply?{query(POSITIONS[-1])}") == (200, {"move": None})


def test_line_and_status(sources, db_server, book_server):
    assert get_json(f"{db_server}api/line?{query('b2a1 c3')}") == (200, {"moves": ["b2", "a1", "c3"]})
    assert get_json(f"{db_server}api/status") == (200, pndb.status(sources[0]))
    assert get_json(f"{book_server}api/status") == (200, pndb.status(sources[1]))
    assert get_json(f"{book_server}api/source")[1]["kind"] == "book"
    assert get_json(f"{db_server}api/source")[1] == {"kind": "database", "path": str(sources[0])}


def test_series_is_the_solves_time_series(sources, db_server, book_server):
    status, data = get_json(f"{db_server}api/series")
    points = pndb.series(sources[0])
    assert status == 200 and data == {"points": [p._asdict() for p in points]}
    last = data["points"][-1]
    assert last["nodes"] == pndb.status(sources[0])["nodes"] and last["checkpoint"] == len(points)
    assert get_json(f"{book_server}api/series") == (200, None)


def test_the_page_is_served_from_the_package(db_server):
    for path, (name, content_type) in ASSETS.items():
        status, served_type, body = get(db_server + path.lstrip("/"))
        assert (status, served_type) == (200, content_type), path
        assert body == (resources.files("pndb") / "web" / name).read_bytes()
        text = body.decode().replace('"http://www.w3.org/2000/svg"', "")  # (SVG's namespace: never fetched)
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text), f"{name} fetches from elsewhere"
    page = get(db_server)[2].decode()
    assert 'src="explorer.js"' in page and 'href="explorer.css"' in page
    status, data = get_json(db_server + "no/such/page")
    assert status == 404 and "no such page" in data["error"]


def test_the_database_is_never_written(sources):
    db = sources[0]
    data = db / "data.mdb"
    before = data.read_bytes(), data.stat().st_mtime_ns, sorted(p.name for p in db.iterdir())
    with served(db) as (url, _):
        for moves in POSITIONS:
            for path in ("api/position", "api/reply", "api/line", "api/status", "api/series"):
                assert get(f"{url}{path}?{query(moves)}")[0] == 200
    assert (data.read_bytes(), data.stat().st_mtime_ns, sorted(p.name for p in db.iterdir())) == before


def test_port_zero_prints_the_url_on_localhost_and_ctrl_c_exits_130(sources):
    with served(sources[1]) as (url, p):
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        assert get(url)[0] == 200
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=60) == 130
        assert p.stderr.read().strip() == "interrupted"


def test_host_is_listened_on(sources):
    with served(sources[1], "--host", "127.0.0.2") as (url, _):
        assert url.startswith("http://127.0.0.2:"), url
        assert get(url + "api/source")[0] == 200


@pytest.mark.parametrize(
    "source, words",
    [("no-such.pnbook", ["unknown game"]), (PNDB, ["not a pndb book"]), (".", ["no pndb database"])],
)
def test_a_bad_source_is_one_line(source, words):
    assert_user_error(run_process("serve", source, "--port", "0"), *words, silent=True)


def test_a_port_in_use_is_one_line(sources):
    with served(sources[1]) as (url, _):
        port = re.search(r":(\d+)/", url).group(1)
        assert_user_error(run_process("serve", sources[1], "--port", port), "cannot serve", port, silent=True)


def test_a_database_gone_is_503_with_the_reason(tmp_path):
    db = tmp_path / "t.lmdb"
    ok(cli("solve", "tictactoe", "--db", db, "-q"))
    with served(db) as (url, p):
        assert get_json(f"{url}api/position")[0] == 200
        shutil.rmtree(db)
        for path in ("api/position", "api/status"):
            status, data = get_json(url + path)
            assert status == 503 and "no pndb database" in data["error"], (path, status, data)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=60) == 130
        assert p.stderr.read().strip() == "interrupted"  # (no traceback)
