"""The Python API: what the command line (and any other front end) calls.

    import pndb
    r = pndb.solve("tictactoe", db="t.lmdb")
    r.value.name          # 'draw'
    pndb.status("t.lmdb")["result"]
    pndb.export("t.lmdb", "t.pnbook")
    pndb.verify("t.pnbook").ok

Errors a user can cause are pndb.GameError, MoveError, StoreError, BookError, ExportError or
SettingsError, each with a one-line message.
"""

import os
import tempfile
from contextlib import contextmanager
from typing import NamedTuple

from pndb.defaults import (
    DEFAULT_CHECKPOINT_SECONDS,
    DEFAULT_INNER_NODES,
    DEFAULT_INNER_SCHEME,
    DEFAULT_MEMORY_MB,
    SettingsError,
)
from pndb.games import GameError, family_of, load_game, shown
from pndb.integrity import check_root
from pndb.settings import SolveSettings
from pndb.store import StoreError, default_path, open_existing, open_for_game
from pndb.values import INF, Value

QUICK_CELLS = 16  # games this small start a solve without the inner solver (quick_start)


class SolveResult(NamedTuple):
    value: Value  # what is known of the start position (exact when solved)
    best_moves: list  # proven best first moves, in the game's notation (when solved)
    expansions: int  # outer expansions in this run
    seconds: float
    db_path: str
    solved: bool  # the target is answered
    interrupted: bool  # stopped by should_stop()
    start_moves: str  # the start position's moves, in the game's notation


class PositionResult(NamedTuple):
    moves: str  # as given
    value: Value
    nodes: int  # outer expansions plus inner nodes
    microseconds: float
    solved: bool
    interrupted: bool


class ExportResult(NamedTuple):
    path: str
    header: dict
    bytes: int


def as_game(game):
    return load_game(game) if isinstance(game, str) else game


def make_search(store, game, settings, quick=False, announce=lambda: None):
    """A Search of ``game`` with ``settings`` (a SolveSettings) whose memory fits their budget,
    split by SolveSettings.memory once: the node cache gets its part, the evaluator (its
    family's, evaluator_factory) the inner table's. In a graph-keyed store the outer search sees
    the game through graph keys (its table the node cache, written with each checkpoint); the
    evaluator keeps board keys. ``quick``: a quick start (see quick_start), the evaluator made
    once it is over. ``announce()`` is called before the evaluator is made (compile_announcer).
    With settings.parallel, the leaves are searched by a pool (pndb.workers: worker processes;
    pndb.cluster: Ray actors), each worker with the family's evaluator; local workers share one
    inner table where the system allows (shared_table), else each has a share of it. The caller
    closes the search's pool."""
    from pndb.cache import NodeCache, anonymous_memory_bytes
    from pndb.games.stored import with_table
    from pndb.search import Search

    factory = evaluator_factory(game, settings)
    memory = settings.memory(factory is not None, anonymous_memory_bytes(), shared_table(settings))
    cache = NodeCache(store, limit=memory.cache_records, budget_bytes=memory.budget_bytes)

    def new_evaluator(board_game=game):
        from pndb import jit

        announce()
        jit.interpret(False)  # a compiled evaluator calls the game's compiled kernels
        return factory(board_game, settings, memory)

    def new_pool(board_game=game):
        from pndb import jit
        from pndb.workers import EvaluatorSpec, WorkerPool

        announce()
        start = board_game.key(board_game.parse_moves("")[0])
        spec = EvaluatorSpec(board_game.spec, board_game.rules_data(), settings, memory, start)
        if settings.cluster is not None:
            from pndb.cluster import ClusterPool

            return ClusterPool(spec, settings.cluster, settings.workers if settings.workers > 1 else None)
        cold = jit.first_compile(board_game) is not None  # one worker compiles, then the others start
        return WorkerPool(spec, settings.workers, stagger=cold)

    parallel = factory is not None and settings.parallel
    serial = factory is not None and not parallel
    if store.graph_keyed:
        from pndb.games.placement.graphkey import GraphKeyedGame

        game = GraphKeyedGame(game, cache)
    game = with_table(game, cache)
    return Search(
        cache, game, settings, evaluator=new_evaluator() if serial and not quick else None,
        start_evaluator=new_evaluator if serial and quick else None,
        pool=new_pool() if parallel else None,
        evaluator_capacity=memory.evaluator_capacity,
    )  # fmt: skip


def shared_table(settings):
    """Whether the evaluators of a solve with ``settings`` share one table: local workers, where
    the system lets them share memory (pndb.workers.shared_region)."""
    if not settings.parallel or settings.cluster is not None:
        return False
    from pndb.workers import shares_memory

    return shares_memory()


def evaluator_factory(game, settings):
    """The factory of the evaluator of a solve of ``game`` (its family's, Family.evaluator), or
    None: there is no evaluator, and the outer search expands every leaf. None where the
    settings give a leaf no budget (inner_nodes 0, --inner-nodes 0) or the family has none."""
    return family_of(game).evaluator if settings.inner_nodes > 0 else None


def compile_announcer(game, settings, on_compile):
    """A function that calls ``on_compile(seconds)`` the first time it is called, when the
    kernels a solve of ``game`` compiles (its family's: pndb.jit.family) are not in the cache
    yet; ``seconds``: about how long they take. A solve calls it just before it may compile."""
    from pndb import jit

    pending = [on_compile is not None and evaluator_factory(game, settings) is not None]

    def announce():
        if pending.pop() if pending else False:
            seconds = jit.first_compile(game)
            if seconds is not None:
                on_compile(seconds)

    return announce


@contextmanager
def quick_start(game, settings):
    """Whether a solve of ``game`` starts quickly: a game of at most QUICK_CELLS cells is
    searched for its first moment (monitor.QUICK_SECONDS) by the outer search alone with its
    kernels run as Python, so that numba is not loaded unless the solve goes on (pairings
    decide tictactoe in 49 expansions, in less time than loading numba takes). Not under
    gravity (an interpreted expansion of Connect Four takes some 12 ms, Allis' rules in Python,
    and even 4x4 needs thousands), nor where numba is loaded already, there is no evaluator
    to wait for or workers search the leaves. Kernels are compiled again after."""
    from pndb import jit

    small = game.ncells <= QUICK_CELLS and not game.gravity
    quick = small and evaluator_factory(game, settings) is not None and not jit.loaded()
    quick = quick and not settings.parallel
    if quick:
        jit.interpret()
    try:
        yield quick
    finally:
        if quick:
            jit.interpret(False)


def solve(
    game,
    db=None,
    moves="",
    max_seconds=None,
    max_nodes=None,
    target="value",
    inner_nodes=DEFAULT_INNER_NODES,
    inner_mb=None,
    memory_mb=DEFAULT_MEMORY_MB,
    knowledge=True,
    checkpoint_seconds=DEFAULT_CHECKPOINT_SECONDS,
    should_stop=None,
    on_progress=None,
    inner_scheme=DEFAULT_INNER_SCHEME,
    graph_keys=False,
    on_compile=None,
    workers=1,
    cluster=None,
):
    """Solve ``game`` (a spec or a game) from the position after ``moves``, in the database
    ``db`` (default db/<game>.lmdb), resuming what it holds, with at most ``memory_mb`` of
    anonymous memory (the inner table included); with ``knowledge``, positions the game's
    certificates decide are not searched. The search commits its work every
    ``checkpoint_seconds``: a crash loses at most that much. ``should_stop()`` is polled between steps;
    ``on_progress`` gets a monitor.Progress every few seconds. ``graph_keys``: key the outer DAG
    by graph keys (pndb.games.placement.graphkey; games without gravity), merging positions whose
    remaining games are isomorphic; a database keeps the keys it was created with.
    ``on_compile(seconds)`` is called before the solve compiles kernels a cold cache lacks
    (compile_announcer); the solve's seconds leave compiling out. ``workers``: processes that
    search leaves in parallel (pndb.workers; 1: the search in this process alone). ``cluster``: the
    address of a Ray cluster whose actors search the leaves instead (pndb.cluster; ``local``
    starts one here)."""
    settings = SolveSettings(
        max_seconds=max_seconds, max_nodes=max_nodes, target=target, inner_nodes=inner_nodes,
        inner_scheme=inner_scheme, inner_mb=inner_mb, memory_mb=memory_mb, knowledge=knowledge,
        checkpoint_seconds=checkpoint_seconds, workers=workers, cluster=cluster,
    )  # fmt: skip
    g = checked_game(game, db, settings, graph_keys)
    pos, cells = g.parse_moves(moves)
    path = str(db or default_path(g))
    with (
        open_for_game(path, g, writer=True, graph_keys=graph_keys) as store,
        quick_start(g, settings) as quick,
    ):
        announce = compile_announcer(g, settings, on_compile)
        if not quick:  # the kernels are compiled from the first one on
            announce()
        with store.view(g) as view:
            stored_start(view, g)  # a damaged database is not solved again from nothing
            root = view.game.key(pos)
        check_root(store, g, root)
        start = {"moves": g.format_moves(cells), "cells": cells, **family_of(g).codec.fields(pos)}
        store.commit(meta={"start": start, "root": root.hex()})
        search = make_search(store, g, settings, quick, announce)
        try:
            root = search.game.key(pos)  # a graph-keyed root enters the table it is read from
            outcome = search.solve(root, should_stop, on_progress)
        finally:
            if search.pool is not None:
                search.pool.close()
            search.cache.close()
        best = best_moves(store, g, pos, outcome.value) if outcome.solved and outcome.value.exact else []
    return SolveResult(
        outcome.value, best, outcome.expansions, outcome.seconds, path, outcome.solved, outcome.interrupted,
        start["moves"],
    )  # fmt: skip


class KomiSolve(NamedTuple):
    komi: int
    result: SolveResult


class ScoreResult(NamedTuple):
    margin: int | None  # the first player's margin with perfect play (None: a solve was stopped)
    best_moves: list  # the first moves that keep it (the draw solve's proven best moves)
    solves: list  # KomiSolve of each komi solved, in order


def solve_score(game, db=None, moves="", on_solve=None, **options):
    """The first player's margin with perfect play, for a game with a komi (``game.komi``,
    ``game.with_komi(k)``; Go): solves at a komi, each in its own database (under the directory
    ``db``, default db/), halving the interval the margin may lie in until a solve is a draw:
    first-wins at komi K says the margin exceeds K, second-wins that it is below K. ``options``
    are solve's; ``on_solve(KomiSolve)`` is called after each solve. A solve stopped by a
    limit ends it (margin None; the same call again resumes)."""
    g = as_game(game)
    if not hasattr(g, "with_komi"):
        raise SettingsError(f"{g.spec} has no komi: --score solves games with a komi (Go)")
    lo, hi = g.komi_range()
    solves = []
    while lo <= hi:
        komi = (lo + hi) // 2
        gk = g.with_komi(komi)
        path = os.path.join(str(db), f"{gk.db_name()}.lmdb") if db is not None else None
        r = solve(gk, db=path, moves=moves, **options)
        solves.append(KomiSolve(komi, r))
        if on_solve is not None:
            on_solve(solves[-1])
        if not r.solved:
            return ScoreResult(None, [], solves)
        if r.value is Value.DRAW:
            return ScoreResult(komi, r.best_moves, solves)
        lo, hi = (komi + 1, hi) if r.value is Value.FIRST_WINS else (lo, komi - 1)
    raise StoreError(f"no komi of {g.spec} gives a draw: its solves contradict each other")


def checked_game(game, db, settings, graph_keys):
    """The game (a spec or a game) a solve with ``settings`` (checked when made) searches in
    ``db``, after the checks that need no database and no kernel: a SettingsError for an empty
    database path, a bad PNDB_THREAT_DEPTH (checked whether or not this solve would come to
    read it: a small game may be solved before its evaluator is made) or an evaluator under
    NUMBA_DISABLE_JIT (it runs only compiled); a GameError for an unknown game or graph keys
    it cannot have."""
    from pndb import jit
    from pndb.games.placement.patterns import default_threat_depth

    if db is not None and (not isinstance(db, (str, os.PathLike)) or not os.fspath(db)):
        raise SettingsError(f"db must be the path of a database directory (or None), not {shown(repr(db))}")
    default_threat_depth()
    g = as_game(game)
    check_graph_keys(g, graph_keys)
    if evaluator_factory(g, settings) is not None and jit.disabled():
        raise SettingsError(
            "NUMBA_DISABLE_JIT is set, but the inner solver runs only compiled: unset it, or give no inner "
            "solver (inner_nodes 0, --inner-nodes 0: the outer search alone, its kernels run as Python)"
        )
    return g


def check_graph_keys(game, graph_keys):
    """GameError when graph keys are asked for a game they do not apply to, or cannot be made."""
    if not graph_keys:
        return
    if family_of(game).name != "placement":
        raise GameError(f"--graph-keys needs a placement game; {game.spec} is not one")
    if game.gravity:
        raise GameError(f"--graph-keys needs a game without gravity; {game.spec} has gravity")
    try:
        import pynauty  # noqa: F401  (the optional `graph` extra)
    except ImportError:
        raise GameError("--graph-keys needs pynauty: pip install 'pndb[graph]'") from None


def best_moves(store, game, pos, value):
    """The moves from ``pos`` proven to keep its exact ``value``: those whose stored child has
    it, and the move of the strategy that proves it for the player to move (where the inner
    search decided ``pos``, no child is stored; its proof record holds that move). Where the
    value's strategies all belong to the opponent, every move keeps it."""
    from pndb.book import STRATEGIES, StrategyWalker

    moves = game.legal_moves(pos)
    mover = game.first_to_move(pos)
    facts = [fact for fact in STRATEGIES[value] if fact.proven == mover]
    if not facts:
        return [game.move_name(move) for move in moves]
    with store.view(game) as view:
        best = set()
        for move in moves:
            rec = view.node(view.game.key(game.play(pos, move)))
            if rec is not None and rec.value == value:
                best.add(move)
        if not store.graph_keyed:  # (a graph-keyed store's root move needs its representative's map)
            key, symmetry = game.canonical(pos)
            children = lambda: game.children(game.position(key))  # noqa: E731
            move = StrategyWalker(view).owner_move(key, facts[0], view.proof(key), children)
            if move is not None:
                best.add(game.move_to_board(symmetry, move))
        return [game.move_name(move) for move in moves if move in best]


def solve_positions(
    game, lines, db=None, max_seconds=None, max_nodes=None, target="value",
    inner_nodes=DEFAULT_INNER_NODES, inner_mb=None, memory_mb=DEFAULT_MEMORY_MB, knowledge=True,
    checkpoint_seconds=DEFAULT_CHECKPOINT_SECONDS, should_stop=None, inner_scheme=DEFAULT_INNER_SCHEME,
    graph_keys=False, on_compile=None,
):  # fmt: skip
    """Solve the start position of each line (a move string) in one database (a temporary one
    without ``db``); yields a PositionResult each. ``lines`` may be any iterable, read a line
    at a time as the results are taken (a stream: each answer before the next line is read).
    The limits apply to each position. The search commits every ``checkpoint_seconds`` and at
    the end, not after each position (a commit costs more than solving most positions near
    the end of a game), and before an error of ``lines`` or of a line's moves is raised.
    ``on_compile``: as solve's."""
    settings = SolveSettings(
        max_seconds=max_seconds, max_nodes=max_nodes, target=target, inner_nodes=inner_nodes,
        inner_scheme=inner_scheme, inner_mb=inner_mb, memory_mb=memory_mb, knowledge=knowledge,
        checkpoint_seconds=checkpoint_seconds,
    )  # fmt: skip
    if isinstance(lines, (str, bytes)):
        raise SettingsError("solve_positions takes a list of move strings, not one string")
    g = checked_game(game, db, settings, graph_keys)
    lines = iter(lines)
    first = next(lines, None)
    if first is None:
        return  # nothing to solve: no database is made, no kernel loaded
    opening = (first, g.parse_moves(first)[0])  # a bad first line: an error before anything is made
    with tempfile.TemporaryDirectory(prefix="pndb-") as tmp:
        path = db or os.path.join(tmp, "positions.lmdb")
        with (
            open_for_game(path, g, writer=True, graph_keys=graph_keys) as store,
            quick_start(g, settings) as quick,
        ):
            announce = compile_announcer(g, settings, on_compile)
            if not quick:
                announce()
            search = make_search(store, g, settings, quick, announce)

            def starts():
                """(text, position) of each line, as it comes; the search's work committed
                before the source's error or a bad line's is raised."""
                yield opening
                while True:
                    try:
                        text = next(lines, None)
                        start = None if text is None else (text, g.parse_moves(text)[0])
                    except BaseException:
                        search.checkpoint()
                        raise
                    if start is None:
                        return
                    yield start

            try:
                for text, pos in starts():
                    root = search.game.key(pos)
                    work = search.expansions + search.evaluator_nodes
                    outcome = search.solve(root, should_stop, final_checkpoint=False)
                    nodes = search.expansions + search.evaluator_nodes - work
                    yield PositionResult(
                        text, outcome.value, nodes, outcome.seconds * 1e6, outcome.solved, outcome.interrupted
                    )
                    if outcome.interrupted:
                        return
                search.checkpoint()
            finally:
                search.cache.close()


@contextmanager
def open_db(path):
    """(store, game) of an existing database, for reading; StoreError for one whose stored
    rules or start are damaged."""
    from pndb.games import game_from_rules

    store, spec, rules = open_existing(path)
    try:
        try:
            game = game_from_rules(rules, spec)
        except GameError as e:
            raise StoreError(f"{path}: the stored rules are unusable: {e}") from None
        with store.view(game) as view:
            stored_start(view, game)
        yield store, game
    finally:
        store.close()


def stored_start(view, game):
    """The start position of a database's last solve (its meta ``start``), or None before the
    first; StoreError where the meta ``start`` and ``root`` are not a position of ``game`` and
    its key (a damaged database must not be exported, reported or silently solved again)."""
    from pndb.book.format import start_problem

    start, root = view.meta("start"), view.meta("root")  # each of the type pndb writes, or StoreError
    if start is None and root is None:
        return None
    problem = "is missing" if start is None else start_problem(start, game)
    if problem is None:
        pos = family_of(game).codec.position(start)
        if root is None or view.game.key(pos) != bytes.fromhex(root):
            problem = "is not the position of its root"
    if problem is not None:
        raise StoreError(f"the database is damaged: its start {problem}")
    return pos


def status(path):
    """What the database or the book at ``path`` knows, as the dict `pndb status --json` prints
    (a book is told by its magic: book_status). Proof and disproof numbers that stand for
    infinity are None."""
    from pndb.book import is_book

    if is_book(path):
        return book_status(path)
    with open_db(path) as (store, game):
        with store.view(game) as view:
            meta = view.all_meta()
            counts = view.counts()
            points = view.series_count()
            root = bytes.fromhex(meta["root"]) if "root" in meta else None
            rec = view.node(root) if root else None
        if rec is not None:
            check_root(store, game, root)
        return {
            "game": game.spec,
            "start": meta.get("start", {}).get("moves", ""),  # "" is the empty board
            "result": rec.value.name if rec else "unknown",
            "root_pn_first_wins": finite(rec.pn0) if rec else 1,
            "root_dn_first_wins": finite(rec.dn0) if rec else 1,
            "root_pn_first_avoids_loss": finite(rec.pn1) if rec else 1,
            "root_dn_first_avoids_loss": finite(rec.dn1) if rec else 1,
            **counts,
            "db_bytes": store.file_bytes(),
            "db_bytes_per_node": round(store.file_bytes() / max(1, counts["nodes"])),
            "checkpoints": meta.get("checkpoints", 0),
            "expansions": meta.get("expansions", 0),
            "inner_nodes": meta.get("inner_nodes", 0),  # nodes the inner solver searched
            "seconds": meta.get("seconds", 0.0),
            "memory_mb": meta.get("memory_mb", 0.0),  # of the last solve, at its last checkpoint
            "memory_budget_mb": meta.get("memory_budget_mb", 0.0),
            "series_points": points,  # of the solve's time series (pndb.timeseries, `pndb plot`)
        }


def series(path):
    """The time series of the solve in the database at ``path``: a timeseries.SeriesPoint per kept
    checkpoint, oldest first (pndb.timeseries says which are kept), with the root's proof and
    disproof numbers None where they stand for infinity, as status gives them. Empty for a
    database written before pndb recorded one, or not solved yet."""
    from pndb.timeseries import ROOT_NUMBERS

    with open_db(path) as (store, game), store.view() as view:
        points = view.series()
    return [p._replace(**{name: finite(getattr(p, name)) for name in ROOT_NUMBERS}) for p in points]


def plot(db, output):
    """Draw the time series of the solve in ``db`` (series) into the picture file ``output``
    (.png, .svg or .pdf) with matplotlib (pndb.charts; the optional `plot` extra); its path.
    SettingsError without matplotlib or for another suffix; StoreError for a database without
    a series (written before pndb recorded one, or never solved)."""
    from pndb.charts import FORMATS, draw

    output = str(output)
    if not output.lower().endswith(FORMATS):
        raise SettingsError(f"a plot is a {', '.join(FORMATS)} file, not {shown(output)}")
    try:
        import matplotlib  # noqa: F401  (the optional `plot` extra)
    except ImportError:
        raise SettingsError("pndb plot needs matplotlib: pip install 'pndb[plot]'") from None
    points = series(db)
    if not points:
        raise StoreError(
            f"{db} has no time series: it was solved by a pndb that recorded none, or not at all "
            "(a solve records one from now on)"
        )
    with open_db(db) as (_, game):
        title = f"{game.spec}: {points[-1].checkpoint} checkpoints, {points[-1].seconds:.0f} s"
    draw(points, title, output)
    return output


def book_status(path):
    """What a book's header says, as the dict `pndb status --json BOOK` prints."""
    from pndb.book import read_header

    header, game = read_header(path)
    version = header.get("pndb_version")
    return {
        "game": game.spec,
        "start": game.format_moves(header["start"]["cells"]),  # "" is the empty board
        "result": header["value"],
        "partial": header["partial"],
        "records": header["records"],
        "certificates": header.get("certificates", 0),
        "format_version": header["format_version"],
        "pndb_version": version if isinstance(version, str) and version.isprintable() else "unknown",
        "book_bytes": os.path.getsize(path),
    }


def finite(number):
    """A proof or disproof number, None where it stands for infinity."""
    return None if is_infinite(number) else number


def check(db, progress=None):
    """The integrity check of a database: an integrity.CheckReport. ``progress``: called with
    a progress.Tick as the check goes on."""
    from pndb.integrity import check_store

    with open_db(db) as (store, game):
        refuse_graph_keyed(store, "check")
        store.read_every_page()
        return check_store(store, game, progress)


def refuse_graph_keyed(store, command):
    if store.graph_keyed:
        raise StoreError(f"pndb {command} does not read graph-keyed databases yet ({store.path})")


def export(db, path=None, partial=False, progress=None):
    """Write the database's proof as a book (default: the database's name with .pnbook).
    ``progress``: called with a progress.Tick as the export goes on."""
    from pndb.book import export_book

    out = str(path or str(db).rstrip("/").removesuffix(".lmdb") + ".pnbook")
    with open_db(db) as (store, game):
        store.read_every_page()
        header, size = export_book(store, game, out, partial=partial, progress=progress)
    return ExportResult(out, header, size)


def compact(db, progress=None):
    """Drop what the decided parts of the DAG no longer need and shrink the file (pndb.compact).
    ``progress``: called with a progress.Tick as the compaction goes on."""
    from pndb.compact import compact as compact_store

    path = str(db)
    with open_db(path) as (reader, game):
        refuse_graph_keyed(reader, "compact")
        spec = reader.path
    reader.close()
    with open_for_game(spec, game, writer=True) as store:
        store.read_every_page()
        return compact_store(store, game, progress)


def verify(book, progress=None):
    """Check a book with the independent verifier (tools/verify.py): its report (.ok,
    .exit_code, .message, .hole_moves, ...)."""
    from pndb_tools.verify import verify_file

    return verify_file(str(book), progress)


def open_book(path):
    """Read a book file: a book.Book (header, records, game)."""
    from pndb.book import read_book

    return read_book(path)


def describe(source, moves=""):
    """What ``source`` knows of the position after ``moves`` (from the empty board), as an
    explore.PositionView: plain data with a JSON form (``.to_json()``), what `pndb show --json`
    prints. ``source`` is a game (a spec or a Game: the rules alone), a book (a book file's path,
    or a book.Book: its values and strategy moves) or a database (its directory: what it has
    proven so far; it may be read while a solve writes it)."""
    from pndb.book import Book
    from pndb.explore import DatabaseLookup, RulesOnly, view_of

    if isinstance(source, Book):
        return view_of(source, "book", moves)
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        with open_db(source) as (store, game), store.view(game) as view:
            return view_of(DatabaseLookup(view, game), "database", moves)
    if isinstance(source, os.PathLike) or isinstance(source, str) and os.path.isfile(source):
        return view_of(open_book(source), "book", moves)
    return view_of(RulesOnly(as_game(source)), "game", moves)


def is_infinite(number):
    """True for a proof or disproof number that stands for infinity."""
    return number >= INF - 1
