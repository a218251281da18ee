"""The page of `pndb serve` in a real browser (headless Chromium driven by Selenium): moves
clicked on a Qango 6 and a Connect Four 5x4 book show the board, the values and the winning
pattern that pndb.describe gives; stepping back and forward, copying the moves and playing
against the book work; and a database is read live while `pndb solve` writes it. Each test
saves a screenshot in its tmp dir. Skipped, with the reason, where Chromium, chromedriver or
selenium is missing (`.ci/run` installs them where it can)."""

import shutil
import signal
import subprocess

import pytest
from conftest import PNDB, cli, ok, served, wait_for_checkpoints

import pndb
from pndb.timeseries import ROOT_NUMBERS

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
WAIT_SECONDS = 120  # for the page to show a position (a loaded machine is slow, never this slow)

# what the page shows, read from its DOM in one call
PAGE_STATE = """
const cells = [...document.querySelectorAll('#board .cell[data-cell]')];
return {
  cells: cells.map((e) => [Number(e.dataset.cell), e.dataset.owner || null]),
  values: cells.filter((e) => e.dataset.value).map((e) => [Number(e.dataset.cell), e.dataset.value]),
  won: cells.filter((e) => e.classList.contains('won')).map((e) => Number(e.dataset.cell)),
  options: [...document.querySelectorAll('#options li')].map((li) => [li.dataset.move, li.dataset.value]),
  value: document.getElementById('value').textContent,
  turn: document.getElementById('turn').textContent,
  moves: document.getElementById('moves').value,
  error: document.getElementById('error').textContent,
};
"""


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no chromium and chromedriver (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,760"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(WAIT_SECONDS)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """spec -> the book of a solve of it, through the CLI."""
    d = tmp_path_factory.mktemp("books")
    out = {}
    for spec in ("qango6", "connect4:5x4"):
        db, book = d / f"{spec.replace(':', '-')}.lmdb", d / f"{spec.replace(':', '-')}.pnbook"
        ok(cli("solve", spec, "--db", db, "-q"))
        ok(cli("export", db, "-o", book))
        out[spec] = book
    return out


def shown(driver, moves):
    """The page's state once it shows the position after ``moves`` (as describe names them)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: (
            d.execute_script("return document.body.dataset.shown") == moves
            or d.execute_script("return document.getElementById('error').textContent")
        )
    )
    state = driver.execute_script(PAGE_STATE)
    assert state["error"] == "", state["error"]
    return state


def assert_shows(state, view):
    """The page's state is the PositionView ``view``: stones, each legal move's value on its
    cell and in the list, the position's value, whose turn, the winning pattern."""
    assert state["cells"] == [[c.cell, c.owner] for c in view.cells]
    on_board = {c.cell for c in view.cells}
    assert sorted(state["values"]) == sorted(
        [o.cell, o.value.name] for o in view.options if o.cell in on_board
    )
    assert state["options"] == [[o.move, o.value.name] for o in view.options]
    assert state["value"] == view.value.name
    side = {"first": "first player (X)", "second": "second player (O)"}
    assert state["turn"] == (
        f"game over: {view.outcome_text}" if view.outcome else f"to move: {side[view.to_move]}"
    )
    assert sorted(state["won"]) == sorted({c for pattern in view.wins for c in pattern})
    assert state["moves"] == view.moves


def click(driver, selector):
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, selector).click()


def play_line(driver, book, pick, limit):
    """Click moves from the start (``pick(view)``: the name of the next one, as describe gives
    it) until the game ends or ``limit`` moves; check every position shown. The last view."""
    view = pndb.describe(book, "")
    assert_shows(shown(driver, ""), view)
    played = []
    while view.outcome is None and len(played) < limit:
        name = pick(view)
        move = next(o for o in view.options if o.move == name)
        click(driver, selector_of(view, move))
        played.append(move.move)
        view = pndb.describe(book, " ".join(played))
        assert_shows(shown(driver, view.moves), view)
    return view, played


def selector_of(view, move):
    """What to click for ``move``: its cell, but under gravity the top of its column (a click
    anywhere in a column plays its lowest empty cell), and a button below the board for a move
    that takes no cell (Go's pass)."""
    if view.gravity:
        top = next(c.cell for c in view.cells if c.name == move.move and c.row == 0)
        return f'#board .cell[data-cell="{top}"]'
    if move.cell in {c.cell for c in view.cells}:
        return f'#board .cell[data-cell="{move.cell}"]'
    return f'#off-board button[data-name="{move.move}"]'


def test_qango6_book(browser, books, tmp_path):
    book = books["qango6"]
    with served(book) as (url, _):
        browser.get(url)
        # the first player plays the book's strategy, the second the first move in the move order
        view, played = play_line(browser, book, lambda v: v.strategy_move or v.options[0].move, 36)
        assert view.outcome is pndb.Value.FIRST_WINS and view.wins, played
        browser.save_screenshot(str(tmp_path / "qango6-won.png"))

        click(browser, "#back")
        click(browser, "#back")
        assert_shows(shown(browser, " ".join(played[:-2])), pndb.describe(book, " ".join(played[:-2])))
        click(browser, "#forward")
        assert_shows(shown(browser, " ".join(played[:-1])), pndb.describe(book, " ".join(played[:-1])))
        click(browser, "#copy")
        assert browser.find_element("id", "copy").text == "copied"

        # against the book: it plays first, its strategy; the user answers, the book replies
        from selenium.webdriver.support.ui import Select

        click(browser, "#new")
        assert_shows(shown(browser, ""), pndb.describe(book, ""))
        Select(browser.find_element("id", "opponent")).select_by_value("first")
        opening = pndb.describe(book, "").strategy_move
        view = pndb.describe(book, opening)
        assert_shows(shown(browser, opening), view)
        answer = view.options[-1].move
        click(browser, f'#board .cell[data-name="{answer}"]')
        reply = pndb.describe(book, f"{opening} {answer}").strategy_move
        assert reply is not None
        line = f"{opening} {answer} {reply}"
        assert_shows(shown(browser, line), pndb.describe(book, line))
        browser.save_screenshot(str(tmp_path / "qango6-against-the-book.png"))


def test_connect4_book(browser, books, tmp_path):
    book = books["connect4:5x4"]
    with served(book) as (url, _):
        browser.get(url + "?moves=33")  # a line given in the URL
        assert_shows(shown(browser, "33"), pndb.describe(book, "33"))
        browser.get(url)
        columns = iter("1213121")  # the first player's four in column 1
        view, played = play_line(browser, book, lambda v: next(columns), 7)
        assert view.outcome is pndb.Value.FIRST_WINS, played
        assert sorted(c for pattern in view.wins for c in pattern) == [0, 5, 10, 15]  # column 1, drawn lit
        browser.save_screenshot(str(tmp_path / "connect4-won.png"))


def test_a_database_being_solved_is_read_live(browser, tmp_path):
    db = tmp_path / "c4.lmdb"
    solve = subprocess.Popen(
        [PNDB, "solve", "connect4", "--db", str(db), "--checkpoint-seconds", "0.2", "--memory", "256",
         "--max-seconds", "600", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_checkpoints(db, 1, timeout=600)
        with served(db) as (url, _):
            browser.get(url)
            state = shown(browser, "")
            assert state["value"] in [v.name for v in pndb.Value]
            assert len(state["options"]) == 7
            first = status_shown(browser)
            assert {"root pn, first wins?", "root dn, first wins?", "nodes", "checkpoints"} <= set(first)
            later = wait_for(browser, lambda shown: int(shown["checkpoints"]) > int(first["checkpoints"]))
            assert int(later["checkpoints"]) > int(first["checkpoints"])  # the page follows the solve
            solve.send_signal(signal.SIGINT)
            assert solve.wait(timeout=120) == 130, solve.stderr.read()
            final = pndb.status(db)
            last = wait_for(browser, lambda shown: shown["checkpoints"] == str(final["checkpoints"]))
            assert last["nodes"] == str(final["nodes"]) and last["result"] == final["result"]
            assert last["root pn, first wins?"] == str(final["root_pn_first_wins"] or "\u221e")
            charts = charts_shown(browser, final["series_points"])  # the solve over time, to its end
            assert charts["root numbers"] == [final[f"root_{n}"] for n in ROOT_NUMBERS]
            assert charts["stored nodes"] == [final["nodes"]]
            assert charts["database MB"][0] > 0 and len(charts) == 4
            browser.save_screenshot(str(tmp_path / "database.png"))
    finally:
        if solve.poll() is None:
            solve.kill()
            solve.wait()


def status_shown(driver):
    """The rows of the page's status table: label -> text."""
    return driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('#status tr')]"
        ".map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]))"
    )


def charts_shown(driver, points):
    """Each chart's title -> its lines' values at the last point, once the charts show ``points``
    points (the page draws them when the status changes)."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = (
        "return Object.fromEntries([...document.querySelectorAll('#charts svg')]"
        ".map((s) => [s.dataset.title, [Number(s.dataset.points), JSON.parse(s.dataset.last || 'null')]]))"
    )
    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: (c := d.execute_script(script)) and all(n == points for n, _ in c.values())
    )
    return {title: last for title, (_, last) in driver.execute_script(script).items()}


def wait_for(driver, condition):
    """The status table once ``condition(rows)`` holds (the page polls every few seconds)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: (rows := status_shown(d)) and condition(rows))
    return status_shown(driver)


def test_go_database(browser, tmp_path):
    db = tmp_path / "go.lmdb"
    ok(cli("solve", "go:2x2", "--db", db, "-q"))
    with served(db) as (url, _):
        browser.get(url)
        line = iter(["a1", "b1", "b2", "pass"])  # Black's b2 captures White's b1; White passes
        view, played = play_line(browser, db, lambda v: next(line), 4)
        assert [c.owner for c in view.cells] == ["first", None, None, "first"], view.text
        browser.save_screenshot(str(tmp_path / "go.png"))
