"""The pndb command line (click)."""

import json
import os
import resource
import sys
import tempfile
import time

import click
import lmdb
import numpy as np

from pndb import __version__
from pndb.games import (
    BUILTIN_SPECS,
    EXAMPLE_SPECS,
    GameError,
    MoveError,
    cell_name,
    format_moves,
    game_from_rules,
    load_game,
    parse_move,
    play_moves,
    render,
)
from pndb.book import BookError, ExportError, book_reply, export_book, known_interval, move_values, read_book
from pndb.games import kernels as K
from pndb.games.notation import outcome_text
from pndb.inner import InnerSolver
from pndb.integrity import check_store
from pndb.search import INF, VALUE_NAMES, VALUE_TEXT, DagSearch, Limits, key_of, value_name
from pndb.store import StoreError, default_path, open_existing, open_for_game

USER_ERRORS = (GameError, MoveError, StoreError, BookError, ExportError)
DEFAULT_INNER_NODES = 10_000
DEFAULT_INNER_MB = 256


class Cli(click.Group):
    """A click group that turns user errors (and a damaged database met while reading) into one
    line on stderr and exit code 2, and Ctrl-C outside the search loop into exit 130."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except USER_ERRORS as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except lmdb.Error as e:
            click.echo(f"error: the database is damaged ({str(e).splitlines()[0]})", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pndb")
def main():
    """pndb: solve two-player games with proof-number search on a persistent, resumable
    proof database, and export the proof as a book anyone can check."""


@main.command()
def games():
    """List every game spec with its cells, symmetries and win patterns."""
    click.echo(f"{'spec':24} {'board':>6} {'cells':>5} {'syms':>4} {'patterns':>8}  rules")
    for spec in EXAMPLE_SPECS:
        g = load_game(spec)
        rules = []
        if g.gravity:
            rules.append("gravity")
        if g.first_move_forbidden:
            rules.append(f"first move not on {len(g.first_move_forbidden)} cells")
        if g.disc_cap:
            rules.append(f"draw after {g.disc_cap} stones")
        board = f"{g.width}x{g.height}"
        click.echo(
            f"{spec:24} {board:>6} {g.ncells:>5} {len(g.symmetries):>4} {len(g.patterns):>8}  {', '.join(rules)}"
        )
    click.echo("\nParametrised: " + ", ".join(s for s in BUILTIN_SPECS if s not in EXAMPLE_SPECS))
    click.echo("Aliases: tictactoe = mnk:3,3,3, connect4 = connect4:7x6, qango6:burg = qango6:castle")
    click.echo("Your own game: file:PATH.json (docs/game-format.md)")


@main.command()
@click.argument("game")
@click.option("--moves", "-m", default="", help="Moves from the start, e.g. c3d4 or 4453 (Connect Four).")
def show(game, moves):
    """Print the board of GAME after --moves, whose turn it is, and the outcome if it is over.

    GAME may also be a book file: then each legal move's value is shown as far as the book knows.
    """
    book = read_book(game) if os.path.isfile(game) else None
    g = book.game if book else load_game(game)
    a, b, _ = play_moves(g, moves)
    click.echo(f"{g.spec} ({g.title}), {bin(a | b).count('1')} stones")
    click.echo(render(g, a, b))
    state = K.status(np.uint64(a), np.uint64(b), g.tables)
    if state != K.ONGOING:
        click.echo(f"game over: {outcome_text(state)}")
        return
    side = "first player (X)" if K.first_to_move(np.uint64(a), np.uint64(b)) else "second player (O)"
    click.echo(f"to move: {side}")
    if book:
        click.echo(f"book value: {VALUE_NAMES[known_interval(book, a, b)]}")
        for cell, value in move_values(book, a, b):
            click.echo(f"  {cell_name(g, cell):>4}  {value}")


def start_of(game, moves):
    """(a, b, cells, root key) of the position after ``moves``."""
    a, b, cells = play_moves(game, moves)
    ka, kb, _ = K.canonical(np.uint64(a), np.uint64(b), game.tables.sym_bytes)
    return a, b, cells, key_of(ka, kb)


def memory_mb():
    """Anonymous resident memory of this process in MB: what the solve itself holds, without the
    pages of the database file that the kernel maps in and may drop at any time."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report_progress(dag, root, q, seconds):
    rec = dag.get(root)
    pn, dn = rec[4 + 2 * q], rec[5 + 2 * q]
    pn, dn = ("inf" if x >= INF - 1 else x for x in (pn, dn))
    nodes = dag.store.counts(dag.txn)["nodes"]
    mb = dag.store.file_bytes() / 1e6
    question = "first-wins?" if q == 0 else "first-avoids-loss?"
    click.echo(
        f"[{seconds:7.1f}s] {question} root pn {pn} dn {dn}  nodes {nodes}  "
        f"{dag.expansions / max(seconds, 1e-9):.0f} expansions/s  db {mb:.1f} MB  memory {memory_mb():.0f} MB",
        err=True,
    )


def best_moves(store, game, a, b, value):
    """Moves from (a, b) whose stored child value equals ``value`` (only examined ones are known)."""
    t = game.tables
    legal = int(K.legal_mask(np.uint64(a), np.uint64(b), t))
    moves = []
    with store.read() as txn:
        for cell in game.order:
            if legal >> cell & 1:
                ca, cb = K.play(np.uint64(a), np.uint64(b), cell)
                ka, kb, _ = K.canonical(ca, cb, t.sym_bytes)
                rec = store.get_node(txn, key_of(ka, kb))
                if rec is not None and value_name(rec) == value:
                    moves.append(cell_name(game, cell))
    return moves


@main.command()
@click.argument("game")
@click.option("--db", type=click.Path(file_okay=False), help="Database directory (default: db/<game>.lmdb).")
@click.option("--moves", "-m", default="", help="Start from the position after these moves.")
@click.option("--max-seconds", type=float, default=0.0, help="Stop after this many seconds (resumable).")
@click.option("--max-nodes", type=int, default=0, help="Stop after this many expansions (resumable).")
@click.option(
    "--target",
    type=click.Choice(["value", "first-wins"]),
    default="value",
    help="value: the exact value; first-wins: only whether the first player wins.",
)
@click.option(
    "--inner-nodes",
    type=click.IntRange(min=0),
    default=DEFAULT_INNER_NODES,
    show_default=True,
    help="Node budget of the in-memory df-pn search of each new leaf; 0: outer search only.",
)
@click.option(
    "--inner-mb",
    type=click.IntRange(min=1),
    default=DEFAULT_INNER_MB,
    show_default=True,
    help="Memory of the inner solver's transposition table, in MB.",
)
@click.option(
    "--positions",
    type=click.Path(exists=True, dir_okay=False),
    help="Solve every start position of this file (a move string per line) and print a line each.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def solve(game, db, moves, max_seconds, max_nodes, target, inner_nodes, inner_mb, positions, quiet):
    """Solve GAME (from the position after --moves) with proof-number search.

    The search DAG is kept in an LMDB database; stopping (a limit, Ctrl-C, a kill) loses at most
    the last second of work, and the same command resumes. Exit 0: solved; 3: stopped by a
    limit; 130: interrupted.

    With --positions FILE every position of FILE is solved in one process, sharing one database
    (a temporary one without --db); each prints: moves, value, nodes searched, microseconds.
    Limits apply to each position.
    """
    g = load_game(game)
    limits = Limits(max_seconds, max_nodes, target)
    if positions:
        solve_positions(g, positions, db, limits, inner_nodes, inner_mb)
        return
    a, b, cells, root = start_of(g, moves)
    path = db or default_path(g)
    with open_for_game(path, g, writer=True) as store:
        start = {"moves": format_moves(g, cells), "cells": cells, "first": a, "second": b}
        store.commit(meta={"start": start, "root": root.hex()})
        inner = InnerSolver(g, inner_nodes, inner_mb) if inner_nodes else None
        dag = DagSearch(store, g, inner=inner)
        outcome = dag.solve(root, limits, None if quiet else report_progress)
        value = value_name(outcome.record)
        moves_note = ""
        if outcome.solved and value in ("first-wins", "second-wins", "draw"):
            best = best_moves(store, g, a, b, value)
            if best:
                moves_note = f"proven best moves: {' '.join(best)}"
    where = f" after {start['moves']}" if cells else ""
    if outcome.solved:
        click.echo(f"{g.spec}{where}: {VALUE_TEXT[value]} ({value})")
        if moves_note:
            click.echo(moves_note)
        click.echo(f"{outcome.expansions} expansions in {outcome.seconds:.1f}s; database {path}")
        return
    click.echo(f"{g.spec}{where}: known so far: {value}")
    click.echo("not solved yet; run the same command again to resume")
    sys.exit(130 if outcome.interrupted else 3)


def read_positions(game, path):
    """(moves text, root key) for each line of a positions file; a bad line is a one-line error."""
    out = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            text = line.strip().split(" ")[0] if line.strip() else ""
            if not text:
                continue
            try:
                out.append((text, start_of(game, text)[3]))
            except MoveError as e:
                raise MoveError(f"{path} line {number}: {e}") from None
    return out


def solve_positions(game, path, db, limits, inner_nodes, inner_mb):
    """`solve --positions`: one shared database, a result line per position."""
    todo = read_positions(game, path)
    with tempfile.TemporaryDirectory(prefix="pndb-") as tmp:
        unsolved = 0
        with open_for_game(db or os.path.join(tmp, "positions.lmdb"), game, writer=True) as store:
            inner = InnerSolver(game, inner_nodes, inner_mb) if inner_nodes else None
            dag = DagSearch(store, game, inner=inner)
            for text, root in todo:
                expansions = dag.expansions
                inner_before = inner.nodes if inner else 0
                start = time.perf_counter()
                outcome = dag.solve(root, limits)
                micros = (time.perf_counter() - start) * 1e6
                nodes = dag.expansions - expansions + (inner.nodes - inner_before if inner else 0)
                unsolved += not outcome.solved
                click.echo(f"{text} {value_name(outcome.record)} {nodes} {micros:.0f}")
                if outcome.interrupted:
                    sys.exit(130)
    if unsolved:
        click.echo(f"{unsolved} positions not solved within the limits", err=True)
        sys.exit(3)


def open_db(path):
    """(store, game) of an existing database, for the read-only commands."""
    store, spec = open_existing(path)
    with store.read() as txn:
        rules = store.get_meta(txn, "rules")
    try:
        game = game_from_rules(rules, spec)
    except GameError:
        store.close()
        raise StoreError(f"{path}: the stored rules are damaged") from None
    return store, game


@main.command()
@click.argument("db", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(db, as_json):
    """Show what the database DB knows: game, start, result, numbers, size and time spent."""
    store, game = open_db(db)
    with store:
        meta = store.all_meta()
        with store.read() as txn:
            counts = store.counts(txn)
            root = bytes.fromhex(meta["root"]) if "root" in meta else None
            rec = store.get_node(txn, root) if root else None
        info = {
            "game": game.spec,
            "start": meta.get("start", {}).get("moves", ""),  # "" is the empty board
            "result": value_name(rec) if rec else "unknown",
            "root_pn_first_wins": rec[4] if rec else 1,
            "root_dn_first_wins": rec[5] if rec else 1,
            "root_pn_first_avoids_loss": rec[6] if rec else 1,
            "root_dn_first_avoids_loss": rec[7] if rec else 1,
            **counts,
            "db_bytes": store.file_bytes(),
            "checkpoints": meta.get("checkpoints", 0),
            "expansions": meta.get("expansions", 0),
            "seconds": meta.get("seconds", 0.0),
        }
    if as_json:
        click.echo(json.dumps(info))
        return
    width = max(len(k) for k in info)
    for k, v in info.items():
        shown = "inf" if k.startswith("root_") and v >= INF - 1 else v
        click.echo(f"{k:<{width}}  {shown}")


@main.command()
@click.argument("db", type=click.Path())
def check(db):
    """Check the integrity of the database DB: every expanded node agrees with its children and
    every parent link with its child link. Exit 1 on any inconsistency."""
    store, game = open_db(db)
    with store:
        report = check_store(store, game)
    click.echo(f"{report.nodes} nodes, {report.expanded} expanded, {report.links} parent links")
    for p in report.problems:
        click.echo(p)
    if report.problems:
        click.echo("INCONSISTENT", err=True)
        sys.exit(1)
    click.echo("consistent")


@main.command()
@click.argument("db", type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Book file (default: DB name + .pnbook).")
@click.option("--partial", is_flag=True, help="Export an unsolved DB: what is proven so far, marked partial.")
def export(db, output, partial):
    """Export the proof in the database DB as a solution book (docs/book-format.md)."""
    store, game = open_db(db)
    out = output or str(db).rstrip("/").removesuffix(".lmdb") + ".pnbook"
    with store:
        header = export_book(store, game, out, partial=partial)
    size = os.path.getsize(out)
    click.echo(f"{out}: {header['game']} {header['value']}{' (partial)' if partial else ''}, "
               f"{header['records']} positions, {size} bytes")


@main.command()
@click.argument("book", type=click.Path())
def verify(book):
    """Check the proof in BOOK with the independent verifier (tools/verify.py).

    Exit 0 when the proof holds, 1 with the first hole when it does not, 2 for an unreadable file.
    """
    from pndb_tools.verify import main as verify_main

    sys.exit(verify_main([book]))


@main.command()
@click.argument("book", type=click.Path())
@click.option("--as", "side", type=click.Choice(["first", "second"]), default="first", show_default=True,
              help="The side you play.")
@click.option("--moves", "-m", default="", help="Start from the position after these moves.")
def play(book, side, moves):
    """Play against BOOK in the terminal; the book plays its proven strategy."""
    bk = read_book(book)
    g = bk.game
    a, b, _ = play_moves(g, moves)
    human_first = side == "first"
    click.echo(f"{g.spec}: the book's value is {bk.value}. You play {'X (first)' if human_first else 'O (second)'}.")
    while True:
        click.echo(render(g, a, b))
        state = K.status(np.uint64(a), np.uint64(b), g.tables)
        if state != K.ONGOING:
            click.echo(f"game over: {outcome_text(state)}")
            return
        if K.first_to_move(np.uint64(a), np.uint64(b)) == human_first:
            text = click.prompt("your move", default="", show_default=False)
            try:
                cell = parse_move(g, a, b, text)
            except MoveError as e:
                click.echo(f"{e}; try again", err=True)
                continue
        else:
            cell = book_reply(bk, a, b)
            click.echo(f"book plays {cell_name(g, cell)}")
        na, nb_ = K.play(np.uint64(a), np.uint64(b), cell)
        a, b = int(na), int(nb_)
