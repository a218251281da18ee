"""`pndb serve`: the position view (pndb.describe) as a local web page.

The standard library's ThreadingHTTPServer serves three static files from the package
(pndb/web: the page, its script and its style; no build step, nothing fetched from elsewhere)
and a read-only JSON API:

- ``GET /api/position?moves=M``: ``describe(source, M)``'s JSON form (PositionView.to_json);
  400 with ``{"error": ...}`` for moves that cannot be played;
- ``GET /api/reply?moves=M``: ``{"move": ...}``, the move the source's strategy makes there
  (PositionView.reply; null once the game is over), for playing against the book;
- ``GET /api/line?moves=M``: ``{"moves": [...]}``, the names of the moves of M (the page keeps
  the line it steps through as a list; Connect Four's "4453" runs them together);
- ``GET /api/status``: what `pndb status --json` prints of a book or a database (null for a
  game alone); the page polls it to follow a solve;
- ``GET /api/series``: ``{"points": [...]}``, the solve's time series (pndb.api.series, each
  point a timeseries.SeriesPoint's fields) of a database; null for a book or a game alone; the
  page charts it;
- ``GET /api/source``: ``{"kind": "book"|"database"|"game", "path": ...}``, what is served.

A book is read once; a database is opened read-only for each request, in a short read
transaction, so that a solve writing it is read live and nothing is ever written. One request
reads the source at a time: LMDB's locks are per process, and one environment of a file open
in two threads at once would let a writer reuse pages a reader still reads.
"""

import json
import os
import sys
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/explorer.js": ("explorer.js", "text/javascript; charset=utf-8"),
    "/explorer.css": ("explorer.css", "text/css; charset=utf-8"),
}


class Explorer:
    """What the page explores: a book (read once), a database (its directory, opened for each
    request) or a game alone (a spec). Built from what `pndb serve` is given; a source that
    cannot be read is the user's error (GameError, StoreError, BookError), raised here."""

    def __init__(self, source):
        from pndb import api

        self.path = str(source)
        self.kind = (
            "database" if os.path.isdir(self.path) else "book" if os.path.isfile(self.path) else "game"
        )
        self.lock = threading.Lock()
        if self.kind == "database":
            self.source = self.path  # (describe opens it for each position)
            with api.open_db(self.path) as (_, game):
                self.game = game
        else:
            self.source = api.open_book(self.path) if self.kind == "book" else api.as_game(self.path)
            self.game = self.source.game if self.kind == "book" else self.source
        self.position("")  # (the check that the source can be read)

    def position(self, moves):
        """describe(source, moves): a PositionView."""
        from pndb import api
        from pndb.store import StoreError

        if self.kind == "database" and not os.path.isdir(self.path):  # (describe would read a game spec)
            raise StoreError(f"no pndb database at {self.path}")
        with self.lock:
            return api.describe(self.source, moves)

    def line(self, moves):
        """The names of the moves of the move string ``moves``; MoveError where one cannot be played."""
        _, cells = self.game.parse_moves(moves)
        return [self.game.move_name(cell) for cell in cells]

    def series(self):
        """The time series of a database (api.series), None for a book or a game alone."""
        from pndb import api

        if self.kind != "database":
            return None
        with self.lock:
            return api.series(self.path)

    def status(self):
        """`pndb status --json` of the book or database, None for a game alone."""
        from pndb import api

        if self.kind == "game":
            return None
        with self.lock:
            return api.status(self.path)


def asset(name):
    return (resources.files("pndb") / "web" / name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """The page's requests; ``server.explorer`` is the Explorer it serves."""

    server_version = "pndb"

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path in ASSETS:
            name, content_type = ASSETS[url.path]
            return self.reply(HTTPStatus.OK, asset(name), content_type)
        api = {
            "/api/position": self.position, "/api/reply": self.move_reply, "/api/line": self.line,
            "/api/status": self.status, "/api/series": self.series, "/api/source": self.source,
        }  # fmt: skip
        if url.path not in api:
            return self.reply_json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path}"})
        try:
            query = parse_qs(url.query, keep_blank_values=True)
            status, data = HTTPStatus.OK, api[url.path](query.get("moves", [""])[-1])
        except Exception as e:  # noqa: BLE001  (the page shows every error, as one line)
            status, data = error_reply(e)
        self.reply_json(status, data)

    def position(self, moves):
        return self.server.explorer.position(moves).to_dict()

    def move_reply(self, moves):
        move = self.server.explorer.position(moves).reply()
        return {"move": None if move is None else move.move}

    def line(self, moves):
        return {"moves": self.server.explorer.line(moves)}

    def status(self, moves):
        return self.server.explorer.status()

    def series(self, moves):
        points = self.server.explorer.series()
        return None if points is None else {"points": [p._asdict() for p in points]}

    def source(self, moves):
        explorer = self.server.explorer
        return {"kind": explorer.kind, "path": explorer.path}

    def reply_json(self, status, data):
        self.reply(status, json.dumps(data).encode(), "application/json")

    def reply(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # a database being solved changes
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        """Quiet: a page polling a solve would fill the terminal."""


def error_reply(error):
    """(HTTP status, body) of an error met answering a request: 400 for moves that cannot be
    played, 503 for a source that cannot be read now (a damaged or vanished database), 500
    for anything else; each with the error's one-line message."""
    from pndb.cli import one_line, user_errors
    from pndb.games import MoveError

    errors, lmdb_error = user_errors()
    if isinstance(error, MoveError):
        status = HTTPStatus.BAD_REQUEST
    elif isinstance(error, errors + (lmdb_error, OSError)):
        status = HTTPStatus.SERVICE_UNAVAILABLE
    else:  # a defect: its traceback goes to the terminal too
        traceback.print_exception(error)
        status = HTTPStatus.INTERNAL_SERVER_ERROR
    return status, {"error": one_line(str(error) or type(error).__name__)}


class ExplorerServer(ThreadingHTTPServer):
    """The server of an Explorer (its ``explorer``, set before it serves)."""

    daemon_threads = True  # a page left open does not keep the process alive

    def handle_error(self, request, client_address):
        """A page closed while it was answered is no error; anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(host, port):
    """An ExplorerServer bound to ``host``:``port`` (0: a free port; its ``server_address``
    says which); OSError where it cannot be. Set its ``explorer`` before it serves; the caller
    runs serve_forever and server_close."""
    return ExplorerServer((host, port), Handler)


def url_of(server):
    host, port = server.server_address[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/"
