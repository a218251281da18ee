"""`pndb status`: what a database or a book holds, read as a user reads it (text and JSON).

Expected values come from the reference minimax (tests/reference.py) and from the book's own
bytes (docs/book-format.md), never from the status code itself."""

import json

import reference as R
import zstandard
from conftest import REF_NAME, assert_user_error, cli, minimax, ok, ref


def solved_book(tmp_path, spec, moves=""):
    """A database of ``spec`` solved from ``moves``, and its exported book."""
    db, book = tmp_path / "db", tmp_path / "b.pnbook"
    ok(cli("solve", spec, "--moves", moves, "--db", db, "--quiet"))
    ok(cli("export", db, "-o", book))
    return db, book


def text_fields(out):
    """{field: text} of `pndb status`'s text output (one `field  value` line each)."""
    return {key: value.strip() for key, _, value in (line.partition(" ") for line in out.splitlines())}


def book_content(path):
    """The content of a book file: its one zstandard frame, inflated (docs/book-format.md)."""
    return zstandard.ZstdDecompressor().decompress(path.read_bytes())


def book_header(path):
    """The JSON header of a book file: after the magic (8 bytes) and its length (4)."""
    raw = book_content(path)
    return json.loads(raw[12 : 12 + int.from_bytes(raw[8:12], "big")])


def test_status_of_a_book_shows_its_header(tmp_path):
    _, book = solved_book(tmp_path, "tictactoe")
    header = book_header(book)
    info = json.loads(ok(cli("status", "--json", book)))
    assert info["game"] == header["game"] == "mnk:3,3,3"  # tictactoe, as the database names it
    assert info["result"] == REF_NAME[minimax("tictactoe", 0, 0)] == "draw"
    assert info["start"] == ""
    assert info["records"] == header["records"] > 0
    assert info["partial"] is False
    assert info["format_version"] == header["format_version"]
    assert info["book_bytes"] == book.stat().st_size
    text = text_fields(ok(cli("status", book)))
    assert text["game"] == "mnk:3,3,3" and text["result"] == "draw"
    assert text["start"] == "(empty board)"
    assert text["records"] == str(header["records"])


def test_status_of_a_book_after_moves(tmp_path):
    _, book = solved_book(tmp_path, "connect4:4x4", "2132")
    g = ref("connect4:4x4")
    a = b = 0
    for column in (1, 0, 2, 1):
        a, b = R.play(g, a, b, R.drop(g, a, b, column))
    info = json.loads(ok(cli("status", "--json", book)))
    assert info["start"] == "2132"
    assert info["result"] == REF_NAME[minimax("connect4:4x4", a, b)]
    assert text_fields(ok(cli("status", book)))["start"] == "2132"


def test_status_of_a_damaged_book_is_one_line(tmp_path):
    _, book = solved_book(tmp_path, "tictactoe")
    raw = book_content(book)
    bad = tmp_path / "bad.pnbook"  # the magic, then a header that is not JSON
    content = raw[:12] + b"{not json" + raw[21:]
    bad.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(content))
    assert_user_error(cli("status", bad), "header", silent=True)
    other = tmp_path / "notes.txt"
    other.write_text("not a book, not a database\n")
    assert_user_error(cli("status", other), "notes.txt", silent=True)


def test_status_of_a_database_shows_infinity_and_the_empty_board(tmp_path):
    """A drawn game: the first player cannot win, so the root's proof number for "first wins" is
    infinite: `inf` in the text, null in the JSON (not 2^62); a blank start is the empty board."""
    db, _ = solved_book(tmp_path, "tictactoe")
    info = json.loads(ok(cli("status", "--json", db)))
    assert info["result"] == "draw"
    assert info["root_pn_first_wins"] is None  # first-wins is disproved: pn infinite
    assert info["root_dn_first_wins"] == 0
    assert info["root_pn_first_avoids_loss"] == 0
    assert info["root_dn_first_avoids_loss"] is None
    assert info["start"] == ""
    text = text_fields(ok(cli("status", db)))
    assert text["root_pn_first_wins"] == "inf" and text["root_dn_first_avoids_loss"] == "inf"
    assert text["start"] == "(empty board)"
