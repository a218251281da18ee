"""The pndb command line: thin click adapters over the Python API (pndb.api).

The CLI owns what a terminal needs and the library does not: signals (Ctrl-C and SIGTERM stop a
solve after a final checkpoint), progress formatting, and turning user errors into one line on
stderr with exit code 2.
"""

import json
import math
import os
import signal
import sys
from contextlib import contextmanager

import click

from pndb import __version__
from pndb.defaults import (
    DEFAULT_CHECKPOINT_SECONDS,
    DEFAULT_INNER_MB,
    DEFAULT_INNER_NODES,
    DEFAULT_INNER_SCHEME,
    DEFAULT_MEMORY_MB,
    MIN_MEMORY_MB,
    SCHEMES,
    TARGETS,
)

MAX_INNER_NODES = 1 << 40
MAX_WORKERS = 1024
MAX_ERROR_CHARS = 300
MIN_WORD_CHARS = 40  # an error message's words are cut to no fewer characters than this


def one_line(text):
    """An error message as one printable line of bounded length, whatever it quotes. A line too
    long loses the middle of its longest words first (a path it quotes), so that what the
    message says of them (the reason, at its end) stays."""
    from pndb.games.errors import shown

    text = " ".join(str(text).split())
    words = [
        "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in word) for word in text.split(" ")
    ]
    while (excess := len(" ".join(words)) - MAX_ERROR_CHARS) > 0:
        longest = max(range(len(words)), key=lambda i: len(words[i]))
        if len(words[longest]) <= MIN_WORD_CHARS:
            break
        words[longest] = shown(words[longest], max(MIN_WORD_CHARS, len(words[longest]) - excess))
    text = " ".join(words)
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def fail(message, code=2):
    click.echo(one_line(f"error: {message}"), err=True)
    sys.exit(code)


class FiniteNumber(click.ParamType):
    """A finite number from ``low`` to ``high`` (click's FloatRange lets nan through)."""

    name = "number"

    def __init__(self, low=0.0, high=math.inf):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not (math.isfinite(number) and self.low <= number <= self.high):
            upper = f" and <= {self.high:g}" if math.isfinite(self.high) else ""
            self.fail(f"{value!r} must be a finite number >= {self.low:g}{upper}", param, ctx)
        return number


class NonEmptyPath(click.Path):
    """A click.Path that is not empty: `--db ""` would otherwise quietly mean the default database."""

    def convert(self, value, param, ctx):
        if not os.fspath(value):
            self.fail("an empty path names no file", param, ctx)
        return super().convert(value, param, ctx)


def physical_mb():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20


# The exceptions that are the user's input, not a defect (one line, exit 2): (module, class)
USER_ERRORS = (
    ("pndb.games.errors", "GameError"), ("pndb.games.errors", "MoveError"), ("pndb.store", "StoreError"),
    ("pndb.book.format", "BookError"), ("pndb.book.walk", "ExportError"), ("pndb.api", "SettingsError"),
    ("pndb.cluster", "ClusterError"), ("pndb.workers", "WorkerError"),
)  # fmt: skip


def user_errors():
    """The classes of USER_ERRORS, and lmdb's error (a damaged database), of the modules this
    process has loaded: an error whose module was never imported cannot have been raised, and
    importing the modules of every command to name their errors cost each command's process
    a tenth of a CPU second (pndb.cluster and pndb.workers load multiprocessing)."""
    errors = tuple(
        getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules
    )
    lmdb = sys.modules.get("lmdb")
    return errors, lmdb.Error if lmdb is not None else ()


class Cli(click.Group):
    """A click group that turns user errors (a usage error, bad input, a file that cannot be read
    or written, a damaged database met while reading) into one line on stderr and exit code 2,
    and Ctrl-C outside the search loop into exit 130."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name or "pndb", complete_var, standalone_mode=False, **extra)
        except click.exceptions.UsageError as e:
            hint = f"; `{e.ctx.command_path} --help` explains" if e.ctx else ""
            fail(f"{e.format_message().rstrip('.')}{hint}")
        except click.exceptions.Abort as e:  # click's word for Ctrl-C, or for the end of input
            if isinstance(e.__cause__ or e.__context__, KeyboardInterrupt):
                click.echo("interrupted", err=True)
                sys.exit(130)
            fail("no more input")
        except click.ClickException as e:
            fail(e.format_message(), e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except user_errors()[0] as e:  # (evaluated when an exception comes: after the command's imports)
            fail(e)
        except user_errors()[1] as e:
            fail(f"the database is damaged ({str(e).splitlines()[0]})")
        except MemoryError:
            fail("not enough memory (try a smaller --inner-mb)")
        except BrokenPipeError:  # the reader of our output has gone (`pndb ... | head`)
            sys.stdout = open(os.devnull, "w")
            sys.exit(1)
        except OSError as e:
            where = f" {e.filename}" if e.filename else ""
            fail(f"cannot use{where}: {e.strerror or e}")
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pndb")
def main():
    """pndb: solve two-player games with proof-number search on a persistent, resumable
    proof database, and export the proof as a book anyone can check.

    Example: pndb solve qango6 && pndb export db/qango6.lmdb && pndb verify db/qango6.pnbook
    """


@main.command()
def games():
    """List every game spec with its cells, symmetries and win patterns.

    Example: pndb games
    """
    from pndb.games import KINDS, LISTED_SPECS, load_game

    click.echo(f"{'spec':24} {'board':>6} {'cells':>5} {'syms':>4} {'patterns':>8}  rules")
    for spec in LISTED_SPECS:
        s = load_game(spec).summary()
        click.echo(
            f"{spec:24} {s.board:>6} {s.cells:>5} {s.symmetries:>4} {s.patterns:>8}  {', '.join(s.rules)}"
        )
    click.echo("\nParametrised: " + ", ".join(k.parametrised for k in KINDS if k.parametrised))
    click.echo("Aliases: " + ", ".join(f"{a} = {t}" for k in KINDS for a, t in k.aliases))
    click.echo("Your own game: file:PATH.json (docs/game-format.md)")


@main.command()
@click.argument("game")
@click.option("--moves", "-m", default="", help="Moves from the start, e.g. c3d4 or 4453 (Connect Four).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the position as one JSON object (pndb.describe)."
)
def show(game, moves, as_json):
    """Print the board of GAME after --moves, whose turn it is, and the outcome if it is over.

    GAME may also be a book file or a database directory: then each legal move's value is shown
    as far as the book or the database knows.

    Example: pndb show qango6 --moves c3d4
    """
    from pndb import api, jit

    jit.interpret()  # one position: its kernels run as Python sooner than numba loads
    view = api.describe(game, moves)
    if as_json:
        click.echo(view.to_json())
        return
    click.echo(f"{view.game} ({view.title}), {view.stones} stones")
    click.echo(view.text)
    if view.outcome is not None:
        click.echo(f"game over: {view.outcome_text}")
        return
    click.echo(f"to move: {'first player (X)' if view.to_move == 'first' else 'second player (O)'}")
    if view.source != "game":
        click.echo(f"{view.source} value: {view.value.name}")
        for option in view.options:
            click.echo(f"  {option.move:>4}  {option.value.name}")


def report_compile(seconds):
    """The one line a solve prints before it compiles kernels the cache lacks (on stderr, even
    with --quiet: otherwise the first solve sits silent for a minute or more)."""
    click.echo(f"compiling pndb's kernels, first run only: about {seconds:.0f} s", err=True)


def report_progress(p):
    """One progress line on stderr for a monitor.Progress."""
    from pndb import api
    from pndb.values import QUESTIONS

    pn, dn = ("inf" if api.is_infinite(x) else x for x in (p.root.pn(p.question), p.root.dn(p.question)))
    rate = p.expansions / max(p.seconds, 1e-9)
    click.echo(
        f"[{p.seconds:7.1f}s] {QUESTIONS[p.question]} root pn {pn} dn {dn}  nodes {p.nodes}  "
        f"{rate:.{1 if rate < 10 else 0}f} expansions/s  db {p.db_bytes / 1e6:.1f} MB  "
        f"memory {p.memory_bytes / 2**20:.0f} of {p.budget_bytes / 2**20:.0f} MB" + workers_text(p),
        err=True,
    )


def workers_text(p):
    """What a progress line says of the workers: jobs in flight, each worker's nodes per
    second and the share of its time it waited for a job."""
    if not p.workers:
        return ""
    rates = " ".join(
        f"{w.nodes / max(w.seconds, 1e-9) / 1e3:.0f}k/s idle {1 - w.busy_seconds / max(w.seconds, 1e-9):.0%}"
        for w in p.workers
    )
    return f"  jobs {p.jobs} in flight  workers: {rates}"


class ProgressShown:
    """Renders progress.Ticks of a long command on stderr: click's progress bar on a terminal,
    else plain lines (logs stay readable): the first once a step has run for
    $PNDB_PROGRESS_DELAY seconds (default QUIET_SECONDS: a quick command, and a user error
    after a step started, say nothing else), then every PLAIN_SECONDS."""

    PLAIN_SECONDS = 5.0
    QUIET_SECONDS = 2.0

    def __init__(self, command):
        self.command = command
        self.step = None
        self.bar = None
        self.shown_at = 0.0
        self.terminal = sys.stderr.isatty()
        self.quiet_seconds = progress_delay()

    def __call__(self, tick):
        import time

        if tick.step != self.step:
            self.close()
            self.step = tick.step
            self.shown_at = time.monotonic() - self.PLAIN_SECONDS + self.quiet_seconds
            if self.terminal:
                self.bar = click.progressbar(
                    iterable=None if tick.total is not None else iter(()), length=tick.total,
                    label=f"{self.command}: {tick.step}", file=sys.stderr, show_pos=True,
                    show_eta=tick.total is not None,
                )  # fmt: skip
                self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(tick.done - self.bar.pos)
        elif time.monotonic() - self.shown_at >= self.PLAIN_SECONDS:
            self.shown_at = time.monotonic()
            of = f" of {tick.total:,}" if tick.total is not None else ""
            count = f": {tick.done:,}{of} {tick.unit}" if tick.done or of else ""
            click.echo(f"{self.command}: {tick.step}{count}", err=True)

    def close(self):
        """End the current step's bar (a terminal line of its own)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_delay():
    """Seconds before a step's first plain progress line: $PNDB_PROGRESS_DELAY, else
    ProgressShown.QUIET_SECONDS; a value that is not a number from 0 up is a user error."""
    text = os.environ.get("PNDB_PROGRESS_DELAY")
    if text is None:
        return ProgressShown.QUIET_SECONDS
    try:
        return FiniteNumber().convert(text, None, None)
    except click.BadParameter:
        fail(f"PNDB_PROGRESS_DELAY must be a number of seconds from 0 up, not {text!r}")


class StopFlag:
    """What SIGINT and SIGTERM leave: calling it says whether one came. While ``reading()``,
    one raises KeyboardInterrupt at once instead (a read waits for input; a flag would be seen
    only after the next line)."""

    def __init__(self):
        self.signals = []
        self.waiting = False

    def __call__(self):
        return bool(self.signals)

    def handle(self, signum, frame):
        self.signals.append(signum)
        if self.waiting:
            raise KeyboardInterrupt

    @contextmanager
    def reading(self):
        if self.signals:
            raise KeyboardInterrupt
        self.waiting = True
        try:
            yield
        finally:
            self.waiting = False


@contextmanager
def stop_on_signals():
    """Until the block ends, SIGINT and SIGTERM only set a flag; yields it (a StopFlag)."""
    flag = StopFlag()
    old = {s: signal.signal(s, flag.handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@main.command()
@click.argument("game")
@click.option(
    "--db", type=NonEmptyPath(file_okay=False), help="Database directory (default: db/<game>.lmdb)."
)
@click.option("--moves", "-m", default="", help="Start from the position after these moves.")
@click.option(
    "--max-seconds", type=FiniteNumber(), default=0.0, help="Stop after this many seconds (resumable)."
)
@click.option(
    "--max-nodes", type=click.IntRange(min=0), default=0, help="Stop after this many expansions (resumable)."
)
@click.option(
    "--target",
    type=click.Choice(TARGETS),
    default="value",
    help="value: the exact value; first-wins: only whether the first player wins.",
)
@click.option(
    "--inner-nodes",
    type=click.IntRange(min=0, max=MAX_INNER_NODES),
    default=DEFAULT_INNER_NODES,
    show_default=True,
    help="Node budget of the in-memory df-pn search of each new leaf (its first search); 0: outer "
    "search only.",
)
@click.option(
    "--inner-scheme",
    type=click.Choice(SCHEMES),
    default=DEFAULT_INNER_SCHEME,
    show_default=True,
    help="follow: a selected leaf is searched again, with a budget that doubles each visit, until its "
    "numbers pass its siblings' (df-pn's thresholds); it is expanded once its work reaches a limit that "
    "grows with the outer tree. fixed: each new leaf gets --inner-nodes once (the scheme before).",
)
@click.option(
    "--inner-mb",
    type=click.IntRange(min=1, max=physical_mb()),
    help="Memory of the inner solver's transposition table, in MB [default: a quarter of --memory, "
    f"at most {DEFAULT_INNER_MB}].",
)
@click.option(
    "--memory",
    "memory_mb",
    type=click.IntRange(min=MIN_MEMORY_MB, max=physical_mb()),
    default=DEFAULT_MEMORY_MB,
    show_default=True,
    help="Memory budget of the whole solve in MB (node cache, inner table, buffers); the database on "
    "disk may grow far beyond it.",
)
@click.option(
    "--positions",
    type=NonEmptyPath(exists=True, dir_okay=False, allow_dash=True),
    help="Solve every start position of this file (a move string per line) and print a line each; "
    "'-': read them from standard input and answer each line as it comes (an engine for other "
    "programs).",
)
@click.option(
    "--knowledge/--no-knowledge",
    default=True,
    show_default=True,
    help="Decide positions by game knowledge with certificates (pairings, Allis' rules) where it can.",
)
@click.option(
    "--checkpoint-seconds",
    type=FiniteNumber(0.01, 3600),
    default=DEFAULT_CHECKPOINT_SECONDS,
    show_default=True,
    help="Commit the search's work to the database this often; a crash loses at most this much.",
)
@click.option(
    "--graph-keys",
    is_flag=True,
    help="Key the search DAG by graph keys (games without gravity): positions whose remaining games "
    "are isomorphic share one node, beyond board symmetry. Needs pynauty; a database keeps the keys it "
    "was created with.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=MAX_WORKERS),
    default=1,
    show_default=True,
    help="Processes that search leaves in parallel, from the start; 1: this process alone (the default "
    "until parallel search pays: bench/parallel.py).",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Search leaves on the Ray cluster at ADDRESS (as ray.init takes it; 'local': start one here), "
    "one worker per CPU unless --workers says otherwise. Needs pip install 'pndb[cluster]'.",
)
@click.option(
    "--score",
    is_flag=True,
    help="Go: find Black's margin with perfect play, solving at komi values (one database each, under "
    "--db as a directory) until one is a draw.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def solve(
    game,
    db,
    moves,
    max_seconds,
    max_nodes,
    target,
    inner_nodes,
    inner_scheme,
    inner_mb,
    memory_mb,
    knowledge,
    checkpoint_seconds,
    positions,
    graph_keys,
    workers,
    cluster,
    score,
    quiet,
):
    """Solve GAME (from the position after --moves) with proof-number search.

    The search DAG is kept in an LMDB database; stopping (a limit, Ctrl-C, a kill) loses at most
    the work since the last checkpoint (a second), and the same command resumes. Exit 0: solved;
    3: stopped by a limit; 130: interrupted.

    With --positions FILE every position of FILE is solved in one process, sharing one database
    (a temporary one without --db); each prints: moves, value, nodes searched, microseconds.
    Limits apply to each position.

    Example: pndb solve qango6:castle --max-seconds 600    (again to resume)
    """
    from pndb import api
    from pndb.games import load_game

    g = load_game(game)
    options = dict(
        max_seconds=max_seconds or None, max_nodes=max_nodes or None, target=target,
        inner_nodes=inner_nodes, inner_mb=inner_mb, memory_mb=memory_mb, knowledge=knowledge,
        checkpoint_seconds=checkpoint_seconds, inner_scheme=inner_scheme, graph_keys=graph_keys,
        on_compile=report_compile,
    )  # fmt: skip
    if positions:
        if workers != 1 or cluster is not None:
            fail("--workers and --cluster apply to one position's solve, not to --positions")
        solve_positions(g, positions, db, options)
        return
    if cluster is not None:
        parallel = dict(workers=workers, cluster=cluster)
    else:
        parallel = dict(workers=workers)
    if score:
        solve_score(g, db, moves, None if quiet else report_progress, {**options, **parallel})
        return
    with stop_on_signals() as should_stop:
        r = api.solve(g, db=db, moves=moves, should_stop=should_stop,
                      on_progress=None if quiet else report_progress, **options, **parallel)  # fmt: skip
    where = f" after {r.start_moves}" if r.start_moves else ""
    if r.solved:
        click.echo(f"{g.spec}{where}: {r.value.text} ({r.value.name})")
        if r.best_moves:
            click.echo(f"proven best moves: {' '.join(r.best_moves)}")
        click.echo(f"{r.expansions} expansions in {r.seconds:.1f}s; database {r.db_path}")
        return
    click.echo(f"{g.spec}{where}: known so far: {r.value.name}")
    click.echo("not solved yet; run the same command again to resume")
    sys.exit(130 if r.interrupted else 3)


def solve_score(game, db, moves, on_progress, options):
    """`solve --score`: a line per komi solved, then the margin and the best first moves."""
    from pndb import api

    def shown(k):
        r = k.result
        done = f"{r.expansions} expansions in {r.seconds:.1f}s; {r.db_path}"
        click.echo(f"komi {k.komi}: {r.value.name} ({done})")

    with stop_on_signals() as should_stop:
        r = api.solve_score(game, db=db, moves=moves, on_solve=shown, should_stop=should_stop,
                            on_progress=on_progress, **options)  # fmt: skip
    if r.margin is None:
        click.echo("not solved yet; run the same command again to resume")
        sys.exit(130 if r.solves[-1].result.interrupted else 3)
    click.echo(f"margin: {r.margin:+d} for the first player (a draw at komi {r.margin})")
    if r.best_moves:
        click.echo(f"proven best moves: {' '.join(r.best_moves)}")


def line_moves(line):
    """The moves of a positions line (they end at its first space or tab), None for a blank line."""
    words = line.split(maxsplit=1)
    return words[0] if words else None


def read_positions(game, path):
    """The move text of each line of a positions file; a bad line is a one-line error."""
    from pndb.games import MoveError

    try:
        with open(path, encoding="utf-8-sig") as f:  # a byte order mark is not a move
            lines = f.readlines()
    except UnicodeDecodeError:
        raise MoveError(f"{path} is not UTF-8 text") from None
    out = []
    for number, line in enumerate(lines, 1):
        text = line_moves(line)
        if text is None:
            continue
        try:
            game.parse_moves(text)
        except MoveError as e:
            raise MoveError(f"{path} line {number}: {e}") from None
        out.append(text)
    if not out:
        raise MoveError(f"{path} has no positions (a line of moves each)")
    return out


def streamed_positions(game, stream, bad, stop):
    """The move text of each line of ``stream`` as it comes (`--positions -`); a line that is
    no position is answered at once with an `error:` line on standard output (``bad`` counts
    them) and skipped, so that a program driving pndb reads one line per line it wrote. A
    signal while waiting for a line (``stop``, a StopFlag) ends it at once."""
    from pndb.games import MoveError

    number = 0
    while True:
        with stop.reading():
            line = stream.readline()
        if not line:
            return
        number += 1
        text = line_moves(line.lstrip("\ufeff"))  # a byte order mark is not a move
        if text is None:
            continue
        try:
            game.parse_moves(text)
        except MoveError as e:
            bad.append(number)
            click.echo(f"error: line {number}: {e}")
            continue
        yield text


def solve_positions(game, path, db, options):
    """`solve --positions`: one shared database, a result line per position (flushed as each
    is found); with '-' the positions come from standard input as they are written."""
    from pndb import api

    unsolved, bad = 0, []
    with stop_on_signals() as should_stop:
        if path == "-":
            lines = streamed_positions(game, click.get_text_stream("stdin"), bad, should_stop)
        else:
            lines = read_positions(game, path)
        for r in api.solve_positions(game, lines, db=db, should_stop=should_stop, **options):
            unsolved += not r.solved
            click.echo(f"{r.moves} {r.value.name} {r.nodes} {r.microseconds:.0f}")
            if r.interrupted:
                sys.exit(130)
    if bad:
        click.echo(f"{len(bad)} lines were no positions (lines {', '.join(map(str, bad[:10]))})", err=True)
        sys.exit(2)
    if unsolved:
        click.echo(f"{unsolved} positions not solved within the limits", err=True)
        sys.exit(3)


@main.command()
@click.argument("db", metavar="DB|BOOK", type=NonEmptyPath())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(db, as_json):
    """Show what the database DB knows: game, start, result, numbers, size and time spent; or
    what the book BOOK's header says: game, start, value, records, size.

    Example: pndb status db/qango6.lmdb --json
    """
    from pndb import api

    info = api.status(db)
    if as_json:
        click.echo(json.dumps(info))
        return
    width = max(len(k) for k in info)
    for k, v in info.items():
        if k.startswith("root_") and v is None:
            v = "inf"
        elif k == "start" and not v:
            v = "(empty board)"
        click.echo(f"{k:<{width}}  {v}")


@main.command()
@click.argument("db", type=NonEmptyPath())
@click.option(
    "-o", "--output", type=NonEmptyPath(dir_okay=False), required=True, help="The picture: .png, .svg, .pdf."
)
def plot(db, output):
    """Draw the solve in the database DB over time: the root's proof and disproof numbers, the
    stored nodes and the file's size, the rate of expansions (a point per checkpoint, thinned
    on a long solve). Needs matplotlib: pip install 'pndb[plot]'.

    Example: pndb plot db/qango6.lmdb -o qango6.png
    """
    from pndb import api

    click.echo(api.plot(db, output))


@main.command()
@click.argument("db", type=NonEmptyPath())
def check(db):
    """Check the integrity of the database DB: every expanded node agrees with its children and
    every parent link with its child link. Exit 1 on any inconsistency.

    Example: pndb check db/qango6.lmdb
    """
    from pndb import api

    with ProgressShown("check") as progress:
        report = api.check(db, progress=progress)
    click.echo(f"{report.nodes} nodes, {report.expanded} expanded, {report.links} parent links")
    for p in report.problems:
        click.echo(p)
    if report.problems:
        click.echo("INCONSISTENT", err=True)
        sys.exit(1)
    click.echo("consistent")


@main.command()
@click.argument("db", type=NonEmptyPath())
@click.option(
    "-o", "--output", type=NonEmptyPath(dir_okay=False), help="Book file (default: DB name + .pnbook)."
)
@click.option("--partial", is_flag=True, help="Export an unsolved DB: what is proven so far, marked partial.")
def export(db, output, partial):
    """Export the proof in the database DB as a solution book (docs/book-format.md).

    Example: pndb export db/qango6.lmdb -o qango6.pnbook
    """
    from pndb import api

    with ProgressShown("export") as progress:
        r = api.export(db, output, partial=partial, progress=progress)
    h = r.header
    click.echo(
        f"{r.path}: {h['game']} {h['value']}{' (partial)' if partial else ''}, "
        f"{h['records']} positions, {r.bytes} bytes"
    )


@main.command()
@click.argument("db", type=NonEmptyPath())
def compact(db):
    """Compact the database DB: keep the open part of the search, turn what is decided into the
    strategy moves a book needs, and shrink the file. Values, books and resuming are unchanged.

    Example: pndb compact db/qango6-castle.lmdb
    """
    from pndb import api

    with ProgressShown("compact") as progress:
        r = api.compact(db, progress=progress)
    click.echo(
        f"{db}: nodes {r.nodes_before} -> {r.nodes_after}, parent links {r.links_before} -> {r.links_after}, "
        f"proof records {r.proof_records_before} -> {r.proof_records_after}, "
        f"{r.bytes_before / 1e6:.1f} MB -> {r.bytes_after / 1e6:.1f} MB"
    )


@main.command()
@click.argument("book", type=NonEmptyPath())
def verify(book):
    """Check the proof in BOOK with the independent verifier (tools/verify.py).

    Exit 0 when the proof holds, 1 with the first hole when it does not, 2 for an unreadable file.

    Example: pndb verify db/qango6.pnbook
    """
    from pndb_tools.verify import main as verify_main

    with ProgressShown("verify") as progress:
        code = verify_main([book], progress)
    sys.exit(code)


@main.command()
@click.argument("book", metavar="BOOK|GAME", type=NonEmptyPath())
@click.option(
    "--as",
    "side",
    type=click.Choice(["first", "second"]),
    default="first",
    show_default=True,
    help="The side you play.",
)
@click.option("--moves", "-m", default="", help="Start from the position after these moves.")
def play(book, side, moves):
    """Play against BOOK in the terminal; the book plays its proven strategy (where it has no
    move, pndb says so and plays the best move the book's values know). Given a GAME spec
    instead of a book file, pndb plays what the rules alone tell (a move that ends the game in
    its favour, else one at random). Qango's colour areas are drawn beside the board; at the
    end the winning pattern is named. Besides a move: hint (the book's move for you), undo
    (take back your last move and the answer), quit.

    Example: pndb play db/qango6.pnbook --as second
    """
    from pndb import api
    from pndb.games import MoveError, load_game
    from pndb.terminal import board_text, pattern_name

    from_book = os.path.isfile(book)
    if from_book:
        source = api.open_book(book)
        g, player = source.game, "book"
        intro = f"the book's value is {source.value.name}"
    else:
        source = g = load_game(book)
        player, intro = "pndb", "no book: pndb plays by the rules alone"
    pos, played = g.parse_moves(moves)
    human = "first" if side == "first" else "second"
    click.echo(f"{g.spec}: {intro}. You play {'X (first)' if human == 'first' else 'O (second)'}.")
    click.echo("Type a move, or hint, undo or quit.")
    start = len(played)  # the moves given are not yours to undo
    while True:
        view = api.describe(source, g.format_moves(played))
        click.echo(board_text(view))
        if view.outcome is not None:
            for cells in view.wins:
                click.echo(f"winning pattern: {pattern_name(view, cells, g.board_name)}")
            click.echo(f"game over: {view.outcome_text}")
            return
        if view.to_move != human:
            if view.strategy_move is None and from_book:
                click.echo("the book has no move here: pndb plays on its own")
            move = view.reply()
            click.echo(f"{player if view.strategy_move else 'pndb'} plays {move.move}")
            pos = g.play(pos, move.cell)
            played.append(move.cell)
            continue
        while True:
            try:
                text = click.prompt("your move", default="", show_default=False).strip()
            except UnicodeDecodeError:
                click.echo("that is not UTF-8 text; try again", err=True)
                continue
            command = text.lower()
            if command == "quit":
                click.echo("bye")
                return
            if command == "hint":
                click.echo(hint_text(view, from_book))
                continue
            if command == "undo":
                mine = [i for i in range(start, len(played)) if (i % 2 == 0) == (human == "first")]
                if not mine:
                    click.echo("nothing of yours to undo")
                    continue
                del played[mine[-1] :]  # your last move and what came after it
                pos = g.parse_moves(g.format_moves(played))[0]
                click.echo(f"undone: back before your move {len(mine)}")
                break
            try:
                move = g.parse_move(pos, text)
            except MoveError as e:
                click.echo(f"{e}; try again", err=True)
                continue
            pos = g.play(pos, move)
            played.append(move)
            break


def hint_text(view, from_book):
    """`pndb play`'s hint: the move the source would make in the player's place, and why."""
    hint = view.reply()
    strategy = "the book's strategy" if from_book else "the rules prove it"
    whose = strategy if view.strategy_move else "as good as any known here"
    return f"hint: {hint.move} ({whose}; after it: {hint.value.name})"


@main.command()
@click.argument("source", metavar="BOOK|DB|GAME", type=NonEmptyPath())
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (0.0.0.0: every network; the page has no password).",
)
def serve(source, port, host):
    """Explore BOOK, DB or GAME in the browser: the board, each legal move's value as far as the
    source knows, click to play, step back and forward, play against the book. Read-only: a
    database is read live while a solve writes it, and never written. Ctrl-C stops.

    Example: pndb serve db/qango6.pnbook --port 8000
    """
    from pndb import api, jit
    from pndb.serve import Explorer, make_server, url_of

    try:
        server = make_server(host, port)
    except OSError as e:
        fail(f"cannot serve on {host} port {port}: {e.strerror or e}")
    try:
        jit.interpret()  # kernels as Python: nothing to wait for, and quick enough on a small board
        server.explorer = explorer = Explorer(source)
        if explorer.game.ncells > api.QUICK_CELLS and jit.first_compile(explorer.game) is None:
            # on a larger board the compiled kernels (in the cache: never compiled here) describe a
            # position sooner (Qango 6's start: 0.06 s, not 0.23 s); numba loads now, not at the
            # page's first request
            jit.interpret(False)
            explorer.position("")
        click.echo(f"pndb serve: {explorer.kind} {explorer.path} at {url_of(server)} (Ctrl-C stops)")
        server.serve_forever()
    finally:
        server.server_close()
