"""Worker processes that search a solve's leaves in parallel (job-level PN search).

The process that owns the database and the outer DAG sends contracts.LeafJobs to workers and
merges their LeafResults as they come back (search.Search, with a pool). Each worker is a
process of its own, started fresh (spawn: no LMDB environment or numba state crosses a fork),
that makes its game from the rules the database stores and its own evaluator. The evaluators
share one inner table where the system lets processes share memory by a file (Linux: a memfd
the workers open through /proc, gone with the owner whatever ends the solve): what one worker's
search finds, every later job reads. (With a table each, the serial search's jobs dealt to two
workers in turn searched 1.9 times the nodes on connect4:6x5.) Elsewhere each has its own.
Workers hold nothing a solve needs: the database has it all, so a solve resumes without them,
and a worker that dies costs only its job (the pool starts another in its place).

Routing keeps the follow scheme's "continue what the table holds" paying where tables are a
worker's own: a job names the leaf whose searches it continues (``home``: the leaf itself, or
for the children of an expanded leaf that leaf), and goes to the worker that last searched it
when that worker has room; otherwise to the worker with the fewest jobs. Each worker holds up to
DEPTH jobs, so that it never waits for the owner between two.
"""

import ctypes
import multiprocessing
import os
import signal
import time
from collections import OrderedDict
from multiprocessing.connection import wait
from typing import NamedTuple

DEPTH = 2  # jobs a worker holds: the one it runs and the next
HOMES = 1 << 20  # leaves whose worker the pool remembers (the least recently used are forgotten)
MAX_DEATHS = 8  # workers that may die in one solve before the pool gives up
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


class WorkerError(RuntimeError):
    """A worker's evaluator failed (not a worker killed: that costs only its job)."""


class Done(NamedTuple):
    """A job that came back: its ticket, its result (None: its worker died, the job is lost)."""

    ticket: int
    result: object  # a contracts.LeafResult, or None
    worker: int


class WorkerStats(NamedTuple):
    """What one worker has done in this solve."""

    jobs: int
    nodes: int
    busy_seconds: float  # running jobs, as the worker measured it
    seconds: float  # since it started


class EvaluatorSpec(NamedTuple):
    """What a worker needs to make its evaluator: the game as stored (spec and rules data) and
    the evaluator's settings. Plain data: it crosses into a new process."""

    spec: str
    rules: dict
    settings: object  # settings.SolveSettings
    memory: object  # settings.MemorySplit: each evaluator's table is its table_mb
    warm_key: bytes  # the evaluator key of a position a throwaway evaluator searches first (warm_up)
    region: object = None  # a contracts.SharedRegion the evaluators' table lives in; None: a table each


def make_evaluator(spec, memory=None):
    """The evaluator an EvaluatorSpec describes (in the worker's process): its game family's
    (Family.evaluator), in the spec's shared region if any; with ``memory`` in place of the
    spec's where given, a table of its own."""
    from pndb import jit
    from pndb.games import family_of, game_from_rules

    jit.interpret(False)
    game = game_from_rules(spec.rules, spec.spec)
    region = spec.region if memory is None else None
    return family_of(game).evaluator(game, spec.settings, memory or spec.memory, region=region)


def shares_memory():
    """Whether this system lets the workers share memory (shared_region)."""
    return hasattr(os, "memfd_create") and os.path.isdir(f"/proc/{os.getpid()}/fd")


def shared_region(megabytes):
    """A zeroed contracts.SharedRegion of ``megabytes`` MB, and the descriptor that keeps it: a
    memfd, which each worker opens through /proc (it holds no memory until written, and is
    freed with the last process that holds it, however the solve ends)."""
    from pndb.contracts import SharedRegion

    fd = os.memfd_create("pndb-inner-table", os.MFD_CLOEXEC)
    os.ftruncate(fd, megabytes << 20)
    return SharedRegion(f"/proc/{os.getpid()}/fd/{fd}", megabytes << 20), fd


def warm_up(spec):
    """Compile (or load from the cache) the evaluator's kernels before the first job: a
    throwaway evaluator with a small table searches ``spec.warm_key`` for a node. Not the real
    one: an evaluator hands each proof out once, and this result is not stored."""
    from pndb.contracts import LeafJob

    small = spec.memory._replace(inner_mb=1, workers=1)
    make_evaluator(spec, small).evaluate([LeafJob(keys=(spec.warm_key,), question=0, budget=1)])


def die_with_owner():
    """On Linux, have the kernel kill this worker when its owner dies (a SIGKILL of the solve
    would otherwise leave it running its job to the end); elsewhere the worker leaves at its
    next message, when it finds the pipe closed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    owner = multiprocessing.parent_process()
    if owner is not None and os.getppid() != owner.pid:  # it died before prctl took effect
        os._exit(0)


def worker_main(conn, spec):
    """A worker's life: make the evaluator, then run each job that comes until told to stop
    (None) or the owner is gone. Ctrl-C is the owner's to handle: the whole process group gets
    it, and the owner stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_owner()
    try:
        warm_up(spec)
        evaluator = make_evaluator(spec)
        conn.send(("ready",))
        while True:
            message = conn.recv()
            if message is None:
                return
            ticket, job = message
            started = time.monotonic()
            (result,) = evaluator.evaluate([job])
            conn.send(("done", ticket, result, time.monotonic() - started))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the owner has gone
    except Exception as e:  # the evaluator's own failure: the owner reports it
        conn.send(("error", f"{type(e).__name__}: {e}"))


class Router:
    """Where a job goes: with ``sticky`` (workers with tables of their own) to the worker that
    last searched its ``home`` (the leaf it continues, or the expanded leaf whose children it
    searches) when that worker has room, else to the least loaded; that worker becomes the home
    of the job's leaves. Without (a shared table), always to the least loaded."""

    def __init__(self, sticky=True):
        self.sticky = sticky
        self.homes = OrderedDict()  # leaf key -> index of the worker that last searched it

    def choose(self, home, keys, loads):
        """The index of the worker for a job, given each worker's jobs in flight."""
        least = min(range(len(loads)), key=loads.__getitem__)
        if not self.sticky:
            return least
        index = self.homes.get(home)
        if index is None or index >= len(loads) or loads[index] >= DEPTH:
            index = least
        for key in (home, *keys):
            self.homes[key] = index
            self.homes.move_to_end(key)
        while len(self.homes) > HOMES:
            self.homes.popitem(last=False)
        return index


class Member:
    """The owner's account of one worker of a pool (a process here, a Ray actor in
    pndb.cluster): its jobs in flight and what it has done."""

    def __init__(self):
        self.jobs = {}  # the jobs in flight, by whatever names them (a ticket, a Ray reference)
        self.done_jobs = self.nodes = 0
        self.busy_seconds = 0.0
        self.started = time.monotonic()

    def finished(self, result, seconds):
        """Count a job that came back with ``result`` after ``seconds`` of work."""
        self.done_jobs += 1
        self.nodes += result.nodes
        self.busy_seconds += seconds

    def stats(self):
        return WorkerStats(self.done_jobs, self.nodes, self.busy_seconds, time.monotonic() - self.started)


class Pool:
    """What every pool of workers shares: jobs routed by a Router to its ``members`` (Member
    each, at most DEPTH jobs a member), tickets, the count of deaths, and a context manager
    that closes it. A pool provides send(member, ticket, job), wait(timeout) and close()."""

    def __init__(self, members, sticky=True):
        self.members = members
        self.size = len(members)
        self.router = Router(sticky)
        self.tickets = 0
        self.deaths = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def room(self):
        """How many more jobs the workers take now."""
        return sum(DEPTH - len(m.jobs) for m in self.members)

    def in_flight(self):
        return sum(len(m.jobs) for m in self.members)

    def submit(self, job, home, keys):
        """Send ``job`` to a worker (Router.choose); returns the job's ticket. Call only while
        room() > 0."""
        index = self.router.choose(home, keys, [len(m.jobs) for m in self.members])
        self.tickets += 1
        self.send(self.members[index], self.tickets, job)
        return self.tickets

    def died(self, detail=""):
        """Count a worker's death; WorkerError once more than MAX_DEATHS have died."""
        self.deaths += 1
        if self.deaths > MAX_DEATHS:
            raise WorkerError(f"{self.deaths} workers died in this solve{detail}")

    def stats(self):
        """Each worker's WorkerStats (a replaced worker's count from its start)."""
        return [m.stats() for m in self.members]


class Worker(Member):
    """The owner's side of one worker process."""

    def __init__(self, context, spec, index):
        super().__init__()
        self.index = index
        self.conn, child = context.Pipe()
        self.process = context.Process(target=worker_main, args=(child, spec), daemon=True)
        self.process.start()
        child.close()

    def send(self, ticket, job):
        """Send a job; to a worker that has died, the job is lost when its death is seen."""
        self.jobs[ticket] = job
        try:
            self.conn.send((ticket, job))
        except OSError:  # a broken pipe: the worker has died (receive() finds it)
            pass

    def ask_to_stop(self):
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass

    def stop(self, deadline):
        """Wait for the process to end until ``deadline`` (time.monotonic()), then kill it."""
        self.process.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class WorkerPool(Pool):
    """N worker processes with their evaluators: submit() a job with a home leaf, wait() for
    what comes back. A context manager: leaving it stops every worker (jobs still in flight are
    dropped; their leaves are simply searched again by a later solve)."""

    def __init__(self, spec, workers, stagger=False):
        """``stagger``: start one worker, wait until it has compiled the kernels (warm_up), then
        start the others, so that a cold kernel cache is compiled once, not by every worker at
        the same time, and the compiling is over before the solve's clock starts."""
        self.region_fd = None
        if spec.memory.shared:
            region, self.region_fd = shared_region(spec.memory.table_mb)
            spec = spec._replace(region=region)
        self.spec = spec
        self.context = multiprocessing.get_context("spawn")
        first = Worker(self.context, spec, 0)
        if stagger:
            self.await_ready(first)
        others = [Worker(self.context, spec, i) for i in range(1, workers)]
        super().__init__([first] + others, sticky=spec.region is None)

    def close(self):
        """Stop every worker: those between jobs end at once, those in a job are killed after a
        second (a job's result is worth less than a prompt stop; the database has the rest)."""
        for w in self.members:
            w.ask_to_stop()
        deadline = time.monotonic() + 1.0
        for w in self.members:
            w.stop(deadline)
        self.members = []
        if self.region_fd is not None:
            os.close(self.region_fd)
            self.region_fd = None

    def await_ready(self, w):
        """Wait for worker ``w``'s "ready" (WorkerError if it fails or dies first)."""
        try:
            message = w.conn.recv()
        except EOFError:
            raise WorkerError(f"a worker died while it started (exit code {w.process.exitcode})") from None
        if message[0] == "error":
            raise WorkerError(f"a worker failed: {message[1]}")

    def send(self, worker, ticket, job):
        worker.send(ticket, job)

    def wait(self, timeout):
        """The jobs that come back within ``timeout`` seconds (none when none do): each a Done."""
        ready = wait([w.conn for w in self.members] + [w.process.sentinel for w in self.members], timeout)
        done = []
        for w in list(self.members):
            if w.conn in ready or w.process.sentinel in ready:
                done.extend(self.receive(w))
        return done

    def receive(self, w):
        """What worker ``w`` has sent; if it has died, its jobs as lost and a new worker."""
        done = []
        while True:
            try:
                if not w.conn.poll():
                    break
                message = w.conn.recv()
            except (EOFError, OSError):  # its end of the pipe is closed: it has died
                return done + self.replace(w)
            if message[0] == "error":
                raise WorkerError(f"a worker failed: {message[1]}")
            if message[0] == "done":
                _, ticket, result, seconds = message
                del w.jobs[ticket]
                w.finished(result, seconds)
                done.append(Done(ticket, result, w.index))
        if not w.process.is_alive():
            done += self.replace(w)
        return done

    def replace(self, w):
        """A dead worker's jobs, lost, and a new worker in its place."""
        self.died(f" (exit code {w.process.exitcode})")
        lost = [Done(ticket, None, w.index) for ticket in w.jobs]
        w.process.kill()
        w.process.join()
        w.conn.close()
        self.members[w.index] = Worker(self.context, self.spec, w.index)
        return lost
