"""The outer, persistent proof-number search over the DAG stored in LMDB.

Values are intervals (pndb.values); PN search answers two questions with the first player as
prover, so nodes where the first player moves are OR nodes. Each step selects a most-proving leaf
from the root, expands it (children from the game, keyed canonically, transpositions linked
through the parent table) or has its evaluator search it, and pushes every change to every
parent in the game's topological order (most stones first), so each node is recomputed at most
once per update however many paths lead to it.

Node keys are the game's keys: canonical board keys, or with `--graph-keys` the node keys of a
graphkey.GraphKeyedGame (positions whose remaining games are isomorphic share one node); the
search needs nothing but the game interface either way, and the evaluator gets the game's
evaluator keys (game.evaluator_key: board keys either way).

The evaluator (pndb.contracts.Evaluator; the inner solver, or None: every leaf is expanded) is
a function of the jobs it is given: the search chooses every budget (the base budget of a leaf's
first search, --inner-nodes, and the scheme's later ones, from its settings.SolveSettings) and
reads nothing of the evaluator but its results; what it must know of it (how many positions its
table holds) it is told when made.

The search reads and writes through a write-back NodeCache (pndb.cache) and checkpoints it when
its monitor (pndb.monitor: the clock, the limits, the checkpoint timer and the progress reports)
says so, about once a second; it reads no clock itself. It installs no signal handlers and
prints nothing: the caller passes ``should_stop`` and ``on_progress`` and owns signals and
formatting.
"""

import functools
import gc
import heapq
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

from pndb.contracts import CERTIFIED, EPS, LeafJob
from pndb.monitor import Monitor, Stop
from pndb.settings import SolveSettings
from pndb.timeseries import SeriesPoint
from pndb.values import EMPTY_PROOF, EVALUATED, INF, NO_MOVE, Fact, Node, Status
from pndb.values import combine, good_for, intersect

COUNTERS = ("checkpoints", "seconds", "expansions", "inner_nodes")
GROWTH = 4  # follow scheme: a leaf's work before expansion grows by the base budget every GROWTH expansions
MAX_WORK = (1 << 32) - 1  # a node's work is stored in 32 bits
CHILDREN_MEMO = 1024  # positions whose children a Search keeps at hand (the least recently used go)
WAIT_SECONDS = 0.05  # with a pool: the longest wait for a job before should_stop() and the clocks are seen to
FACTS = {(q, proven): Fact(q, proven) for q in (0, 1) for proven in (False, True)}


@contextmanager
def rare_collections():
    """Python's cycle collector run seldom meanwhile: a search allocates some million small
    records a minute (proof records, nodes, keys), none of them in a reference cycle, and at
    the default thresholds the collector took 14% of a qango6:tournament solve. The objects
    alive at the start (numba's, the modules') are frozen out of its walks."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


class Flight(NamedTuple):
    """A job in flight: the leaves it searches (node keys) and its question."""

    keys: tuple
    question: int


class Outcome(NamedTuple):
    """How a solve ended: the root as committed, whether the target is answered, the work."""

    root: Node
    solved: bool
    expansions: int
    seconds: float
    interrupted: bool

    @property
    def value(self):
        return self.root.value


@dataclass
class Search:
    """PN search over the stored DAG of one game."""

    cache: object  # a NodeCache
    game: object
    # what the solve is asked (settings.SolveSettings): the base budget of a leaf's first search
    # (inner_nodes), the scheme of later ones (inner_scheme), knowledge, the limits and the
    # checkpoint interval (these two the monitor's)
    settings: SolveSettings = SolveSettings()
    evaluator: object = None  # a contracts.Evaluator that searches new leaves, or None
    pool: object = None  # or a workers.WorkerPool: leaves searched in parallel (step_parallel)
    # a quick start: no evaluator for the monitor's first moment (Monitor.quick_start_over),
    # then this function's (a small game may be solved sooner than numba and the inner solver load)
    start_evaluator: object = None
    # the most positions the evaluator's table holds (INF: no limit): the follow scheme's budgets
    # stay within half of it
    evaluator_capacity: int = INF
    monitor: Monitor = None  # its clock, limits, checkpoint timer and progress; None: Monitor(settings)
    expansions: int = 0  # over the life of this object (one Search may serve many solves)
    evaluator_nodes: int = 0  # nodes the evaluator searched for this object
    stored: dict = None  # the persistent counters (meta) as this object found them
    checkpoints: int = 0  # written by this object
    root: bytes = None  # the key of the root being solved (its numbers go into the time series)

    def first(self, key):
        return self.game.first_to_move(self.game.position(key))

    def __post_init__(self):
        # select() walks the same upper nodes at every step and update() goes back over them:
        # a position's children, a function of its key, are made once while they stay in use
        # (a solve of tictactoe, its kernels run as Python, made 350 for 49 expansions)
        self.children = functools.lru_cache(maxsize=CHILDREN_MEMO)(self.children_of)
        if self.monitor is None:
            self.monitor = Monitor(self.settings)
        self.flight = {}  # with a pool: ticket -> Flight, the jobs in flight
        self.busy = set()  # ... and the leaves they search
        self.last_checkpoint = (0, 0.0)  # (expansions, run seconds) at this object's last checkpoint

    def children_of(self, key):
        return self.game.children(self.game.position(key))

    def ensure_root(self, key):
        """Create the root record if the DB does not have it yet."""
        if self.cache.get(key) is None:
            state = self.game.status(self.game.position(key))
            self.cache.put(key, self.new_leaf(key) if state == Status.ONGOING else Node.terminal_of(state))

    def new_leaf(self, key):
        """The record of a new ongoing node: unknown, or what the game's knowledge certifies
        (its certificates are stored, for the book)."""
        lo, hi = Node.leaf().lo, Node.leaf().hi
        if self.settings.knowledge:
            for cert in self.game.certificates(self.game.position(key)):
                v = self.game.certificate_value(cert)
                lo, hi = intersect((lo, hi), (v.lo, v.hi))
                self.cache.add_certificate(key, cert)
        return Node.leaf(lo, hi)

    # ------------------------------------------------------------ the steps

    def select(self, root, q, busy=frozenset()):
        """A most-proving leaf for question q (min pn where the first player moves, min dn else)
        and its thresholds (th_pn, th_dn): the leaf stays most-proving while its pn < th_pn and
        its dn < th_dn, up to the 1+eps slack df-pn gives (INF: no threshold).

        With ``busy`` (the leaves whose jobs are in flight), a most-proving leaf among the others,
        as if every busy leaf's job had come back with the outcome the root's numbers make the
        likelier (a virtual proof where the root's pn <= dn, else a virtual disproof; the same
        for all, as the answer will be): a node that outcome decides is passed over, so a second
        job goes where the first one's outcome leaves work the answer needs (the other children
        of a node that needs them all), not to an alternative it would make moot. (Assuming
        each leaf's own likelier outcome searched 20-30% more nodes on connect4:6x5 with two
        workers.) None when every path from the root is so passed over."""
        if not busy:
            return self.descend(root, q, {})
        if root in busy:
            return None
        rec = self.cache.get(root)
        blocked = dict.fromkeys(busy, rec.pn(q) <= rec.dn(q))  # the outcome assumed: a proof?
        while True:
            picked = self.descend(root, q, blocked)
            if picked is not None or root in blocked:
                return picked

    def descend(self, root, q, blocked):
        """select()'s walk from the root, avoiding the children in ``blocked`` (the key of each
        with the outcome assumed of it: a proof?). A node that a blocked child decides (a proof
        where the first player moves, a disproof where the second does), or whose children are
        all blocked or hopeless, is added to ``blocked`` with the outcome it then has, and None
        returned."""
        key = root
        rec = self.cache.get(key)
        th_pn = th_dn = INF
        while rec.expanded:
            keys = self.children(key).keys
            recs = [self.cache.get(k) for k in keys]
            first = self.first(key)
            near, far = (Node.pn, Node.dn) if first else (Node.dn, Node.pn)
            th_near, th_far = (th_pn, th_dn) if first else (th_dn, th_pn)
            open_ = [j for j in range(len(keys)) if keys[j] not in blocked] if blocked else range(len(keys))
            i = min(open_, key=lambda j: near(recs[j], q), default=None)  # the first of equals: move order
            if blocked:
                if any(blocked.get(k) == first for k in keys):  # a blocked child decides it
                    blocked[key] = bool(first)
                    return None
                if i is None or near(recs[i], q) >= INF:  # every child blocked or hopeless
                    blocked[key] = not first
                    return None
            second = min((near(recs[j], q) for j in open_ if j != i), default=INF)
            if second < INF:
                th_near = min(th_near, int(second * (1.0 + EPS)) + 1)
            if th_far < INF:  # a blocked child's far number is 0 as the assumed outcome has it
                siblings = sum(far(recs[j], q) for j in open_ if j != i) if blocked else far(rec, q) - far(recs[i], q)
                th_far = th_far - siblings
            th_pn, th_dn = (th_near, th_far) if first else (th_far, th_near)
            key, rec = keys[i], recs[i]
        return key, th_pn, th_dn

    def expand(self, key, q):
        """Create the children of a leaf, link them, evaluate the new ones, recompute the leaf."""
        fresh = self.add_children(key, q)
        if fresh and self.evaluator is not None:
            self.evaluate(fresh, q, self.settings.inner_nodes, **self.first_search(key))
        self.recompute(key)

    def add_children(self, key, q):
        """Create and link the children of a leaf; the new ones that q's answer needs searched."""
        keys, _, statuses = self.children(key)
        fresh = []
        for k, st in zip(keys, statuses):
            if self.cache.get(k) is None:
                if st == Status.ONGOING:
                    leaf = self.new_leaf(k)
                    self.cache.put(k, leaf)
                    if not leaf.decided(q):
                        fresh.append(k)
                else:
                    self.cache.put(k, Node.terminal_of(st))
            self.cache.link(k, key)
        self.expansions += 1
        return fresh

    def first_search(self, key):
        """The stop conditions of the first search of an expanded node's new children: one
        proven child proves a first-player node, one disproven child disproves a second-player
        node, and the other children need no search for this question."""
        first = self.first(key)
        return {"stop_on_proof": first, "stop_on_disproof": not first}

    def recompute(self, key):
        """A node's record from its children's."""
        own = self.cache.get(key)
        self.cache.put(key, combine(self.first(key), own, [self.cache.get(k) for k in self.children(key).keys]))

    def evaluate(self, keys, q, budget, stop_on_proof=False, stop_on_disproof=False, th_pn=INF, th_dn=INF):
        """Search each leaf with the evaluator for question q (one job, ``budget`` nodes a leaf,
        each only while its numbers are below the thresholds); keep its proofs."""
        job = self.job(keys, q, budget, stop_on_proof, stop_on_disproof, th_pn, th_dn)
        (result,) = self.evaluator.evaluate([job], self.monitor.should_stop)
        self.merge(keys, q, result)

    def job(self, keys, q, budget, stop_on_proof=False, stop_on_disproof=False, th_pn=INF, th_dn=INF):
        """The LeafJob that searches the leaves ``keys``."""
        return LeafJob(
            keys=tuple(self.game.evaluator_key(k) for k in keys),
            question=q,
            budget=budget,
            th_pn=th_pn,
            th_dn=th_dn,
            stop_on_proof=stop_on_proof,
            stop_on_disproof=stop_on_disproof,
        )

    def merge(self, keys, q, result):
        """A job's LeafResult into the leaves ``keys`` it searched (a prefix of them) and the
        proof table."""
        self.evaluator_nodes += result.nodes
        for key, pn, dn, work, subtree in zip(keys, result.pn, result.dn, result.work, result.subtree):
            rec = self.cache.get(key)
            lo, hi = rec.lo, rec.hi
            if pn == 0 or dn == 0:
                fact = Fact(q, pn == 0)
                lo, hi = intersect((lo, hi), fact.interval)
            estimates = [rec.pn0, rec.dn0, rec.pn1, rec.dn1]
            estimates[2 * q : 2 * q + 2] = pn, dn
            # what was spent below the leaf: its own searches, or more when the searches of an
            # ancestor went through it (the table's count)
            work = min(max(rec.work + work, subtree), MAX_WORK)
            self.cache.put(key, Node.leaf(lo, hi, rec.flags | EVALUATED[q], work, estimates))
        self.add_proofs(q, result.proofs)

    def add_proofs(self, q, proofs):
        """Merge the evaluator's proof records for question q (the owner's move at each
        owner-to-move position of its proofs, or the certificate that decides it) into the proof
        table. A record whose fact the table holds already, with a move or a certificate, is
        left as it is (its move's proof was stored with it): the inner solver hands a proof out
        again when its table has lost the mark that it did (pndb.inner.table.REPORTED)."""
        keys, moves = proofs.keys, proofs.moves
        known = self.cache.proofs_of([k for k, m in zip(keys, moves) if m != CERTIFIED])
        certificates = iter(proofs.certificates)
        for key, move, proven in zip(keys, moves, proofs.proven):
            fact = FACTS[q, proven]
            if move == CERTIFIED:
                self.add_certificate(key, fact, next(certificates))
                continue
            old = known.get(key, EMPTY_PROOF)
            if old.move(q) == NO_MOVE or not good_for(old.lo, old.hi, fact):
                known[key] = new = old.with_fact(fact, move)
                self.cache.put_proof(key, new)

    def add_certificate(self, key, fact, cert):
        """Store the evaluator's certificate of ``key`` (it proves ``fact``), unless one
        that proves it is stored already. It is not checked here: the export checks each
        certificate it writes, and `pndb check` every one stored."""
        for old in self.cache.certificates(key):
            v = self.game.certificate_value(old)
            if good_for(v.lo, v.hi, fact):
                return
        self.cache.add_certificate(key, cert)

    def update(self, *starts):
        """Push the changes at ``starts`` to every ancestor, in the game's topological order."""
        heap = []
        queued = set()

        def push_parents(key):
            for p in self.cache.parents(key):
                if p not in queued:
                    queued.add(p)
                    heapq.heappush(heap, (-self.game.rank(self.game.position(p)), p))

        for start in starts:
            push_parents(start)
        while heap:
            _, key = heapq.heappop(heap)
            old = self.cache.get(key)
            new = combine(self.first(key), old, [self.cache.get(k) for k in self.children(key).keys])
            if new != old:
                self.cache.put(key, new)
                push_parents(key)

    def step(self, root, q):
        """One iteration for question q: select a leaf, search or expand it, update.

        Both schemes search every new leaf once with the base budget (new children of an
        expansion in one job that stops at the first child that decides the node). The fixed
        scheme expands a searched leaf when it is selected again. The follow scheme searches it
        again first, as long as the work spent below it is less than expand_work() (which grows
        with the outer tree, as PN2's budgets do): with a budget as large as that work (so the
        budgets double from visit to visit) and with the thresholds select() gives, so that the
        search returns once the leaf is no longer the one the outer search would pick. A search
        continues from what the evaluator's table holds of the leaf, so visits add up rather
        than start again. Without an evaluator every selected leaf is expanded."""
        leaf, th_pn, th_dn = self.select(root, q)
        rec = self.cache.get(leaf)
        if self.evaluator is None:
            self.expand(leaf, q)
        elif not rec.evaluated(q):
            self.evaluate([leaf], q, self.settings.inner_nodes)
        elif self.settings.inner_scheme == "follow" and rec.work < self.expand_work():
            self.evaluate([leaf], q, self.follow_budget(rec), th_pn=th_pn, th_dn=th_dn)
        else:
            self.expand(leaf, q)
        self.update(leaf)

    def follow_budget(self, rec):
        """The follow scheme's budget for a leaf searched again: as much as was spent below it
        so far (the budgets double from visit to visit), within expand_work()."""
        return max(self.settings.inner_nodes, min(rec.work, self.expand_work() - rec.work))

    def expand_work(self):
        """The follow scheme's work below a leaf before it is expanded: the base budget times
        the stored tree's expansions / GROWTH (the budget follows the outer tree, as in PN2),
        at least the base budget, at most half of what the evaluator's table can hold. A small
        tree (a game its leaves' first searches nearly solve) grows as with the fixed scheme."""
        base = self.settings.inner_nodes
        tree = self.stored["expansions"] + self.expansions  # earlier runs' and this one's
        return max(base, min(base * (tree // GROWTH), self.evaluator_capacity // 2))

    # ------------------------------------------------------------ jobs in flight (a pool)

    def step_parallel(self, root, q):
        """One round with a pool of workers (pndb.workers): give them jobs for leaves not in
        flight, as step() would for the leaf select() picks among the others, then merge what
        comes back within a moment. Expansions happen here, between jobs; the first search of
        an expansion's new children is one job, as in step()."""
        base = self.settings.inner_nodes
        while self.pool.room() > 0 and not self.cache.get(root).decided(q):
            picked = self.select(root, q, self.busy)
            if picked is None:
                break
            leaf, th_pn, th_dn = picked
            rec = self.cache.get(leaf)
            if not rec.evaluated(q):
                self.submit([leaf], q, leaf, base)
            elif self.settings.inner_scheme == "follow" and rec.work < self.expand_work():
                # a threshold the leaf's numbers reach already (the virtual outcomes are an
                # estimate) would send a job back at once: the budget alone bounds that one
                th_pn, th_dn = (th if th > number else INF for th, number in ((th_pn, rec.pn(q)), (th_dn, rec.dn(q))))
                self.submit([leaf], q, leaf, self.follow_budget(rec), th_pn=th_pn, th_dn=th_dn)
            else:
                fresh = self.add_children(leaf, q)
                if fresh:
                    self.submit(fresh, q, leaf, base, **self.first_search(leaf))
                self.recompute(leaf)
                self.update(leaf)
        if self.flight:
            self.collect(WAIT_SECONDS)

    def submit(self, keys, q, home, budget, **job):
        """Send the job that searches the leaves ``keys`` to the pool (to the worker of ``home``
        where it can); they are busy until it comes back."""
        ticket = self.pool.submit(self.job(keys, q, budget, **job), home, keys)
        self.flight[ticket] = Flight(tuple(keys), q)
        self.busy.update(keys)

    def collect(self, timeout):
        """Merge the jobs that come back within ``timeout`` seconds. A job whose worker died
        comes back empty: its leaves are free to be selected again. A leaf decided meanwhile
        (through another path) takes the job's facts as well: they agree, both being proofs."""
        for done in self.pool.wait(timeout):
            flight = self.flight.pop(done.ticket)
            self.busy.difference_update(flight.keys)
            if done.result is not None:
                searched = flight.keys[: len(done.result.pn)]
                self.merge(searched, flight.question, done.result)
                self.update(*searched)

    # ------------------------------------------------------------ the solve loop

    def checkpoint(self):
        """Commit the cache, with the persistent counters (meta): earlier runs' plus this
        object's, and the point of the time series (pndb.timeseries) they make."""
        self.checkpoints += 1
        run_seconds = self.monitor.run_seconds()
        meta = {
            "checkpoints": self.stored["checkpoints"] + self.checkpoints,
            "seconds": round(self.stored["seconds"] + run_seconds, 3),
            "expansions": self.stored["expansions"] + self.expansions,
            "inner_nodes": self.stored["inner_nodes"] + self.evaluator_nodes,
            "memory_mb": round(self.cache.memory_bytes / 2**20, 1),
            "memory_budget_mb": round(self.cache.budget_bytes / 2**20, 1),
            "workers": self.pool.size if self.pool is not None else 1,  # of the last solve
        }
        expansions, seconds = self.last_checkpoint
        rate = (self.expansions - expansions) / max(run_seconds - seconds, 1e-9)
        self.last_checkpoint = (self.expansions, run_seconds)
        self.cache.checkpoint(meta, self.series_point(meta, rate))
        self.monitor.checkpointed()

    def series_point(self, meta, rate):
        """The checkpoint's timeseries.SeriesPoint from its counters (``meta``) and the root's
        numbers; the store fills in the nodes and the file's size."""
        root = self.cache.get(self.root) if self.root is not None else None
        numbers = (root.pn0, root.dn0, root.pn1, root.dn1) if root is not None else (1, 1, 1, 1)
        return SeriesPoint(
            meta["checkpoints"], meta["seconds"], *numbers, nodes=0, expansions=meta["expansions"],
            inner_nodes=meta["inner_nodes"], db_bytes=0, memory_bytes=self.cache.memory_bytes,
            rate=round(rate, 1), workers=meta["workers"],
        )  # fmt: skip

    def solve(self, root, should_stop=None, on_progress=None, final_checkpoint=True):
        """Search until the root answers the settings' target, the monitor stops it (a limit,
        or ``should_stop()`` true); checkpoint when the monitor says on the way and, with
        ``final_checkpoint``, at the end (a caller solving many roots in a row may leave that
        to the timer and call checkpoint() when done). ``on_progress`` gets a monitor.Progress
        every few seconds."""
        monitor = self.monitor
        monitor.begin(self.expansions, should_stop, on_progress)
        if self.stored is None:
            self.stored = {name: self.cache.view.meta(name, 0) for name in COUNTERS}
        first_wins = self.settings.target == "first-wins"
        stop = None
        self.root = root
        self.ensure_root(root)
        with rare_collections():
            while True:
                rec = self.cache.get(root)
                q = 0 if not rec.decided(0) else 1
                if rec.decided(q) or (q == 1 and first_wins):
                    break
                stop = monitor.stop(self.expansions)
                if stop is not None:
                    break
                if self.start_evaluator is not None and monitor.quick_start_over(self.expansions):
                    self.evaluator, self.start_evaluator = self.start_evaluator(), None
                if self.pool is not None:
                    self.step_parallel(root, q)
                else:
                    self.step(root, q)
                if monitor.checkpoint_due():
                    self.checkpoint()
                monitor.report(self.expansions, lambda: self.figures(root, q))  # noqa: B023  (called at once)
        interrupted = stop is Stop.INTERRUPTED
        if final_checkpoint or interrupted:
            self.checkpoint()
        rec = self.cache.get(root)
        solved = rec.value.exact or (first_wins and rec.decided(0))
        return Outcome(rec, solved, monitor.expansions(self.expansions), monitor.seconds(), interrupted)

    def figures(self, root, q):
        """The search's part of a monitor.Progress: the root's numbers for question q and the
        store's and the cache's figures."""
        return dict(
            question=q,
            root=self.cache.get(root),
            nodes=self.cache.stored_counts()["nodes"],
            db_bytes=self.cache.store.file_bytes(),
            memory_bytes=self.cache.memory_bytes,
            budget_bytes=self.cache.budget_bytes,
            jobs=len(self.flight),
            workers=tuple(self.pool.stats()) if self.pool is not None else (),
        )
