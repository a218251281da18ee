"""The outer, persistent proof-number search over the DAG stored in LMDB.

Values are intervals (pndb.values); PN search answers two questions with the first player as
prover, so nodes where the first player moves are OR nodes. Each step selects a most-proving leaf
from the root, expands it (children from the game, keyed canonically, transpositions linked
through the parent table) or has the inner solver evaluate it, and pushes every change to every
parent in the game's topological order (most stones first), so each node is recomputed at most
once per update however many paths lead to it.

The search reads and writes through a write-back NodeCache (pndb.cache) and checkpoints it about
once a second. It installs no signal handlers and prints nothing: the caller passes
``should_stop`` and ``on_progress`` and owns signals and formatting.
"""

import heapq
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pndb.inner import CERTIFIED, InnerJob
from pndb.values import EVALUATED, Fact, Node, Status, combine, good_for

COUNTERS = ("checkpoints", "seconds", "expansions")
PROGRESS_SECONDS = 2.0


@dataclass
class Limits:
    max_seconds: float | None = None  # None: no limit
    max_nodes: int | None = None  # expansions in this run; None: no limit
    target: str = "value"  # or "first-wins": stop once q0 is answered


class Progress(NamedTuple):
    """What a running solve reports every few seconds."""

    seconds: float
    question: int  # 0: does the first player win; 1: does the first player avoid losing
    root: Node
    nodes: int  # stored, as of the last checkpoint
    expansions: int  # in this run
    db_bytes: int
    memory_bytes: int  # anonymous memory of the process at the last checkpoint
    budget_bytes: int  # what it may use (0: no budget)


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
    inner: object = None  # an InnerSolver that evaluates new leaves, or None
    knowledge: bool = True  # decide new leaves by the game's certificates where it can
    should_stop: object = None  # during solve(): the caller's should_stop, for long inner jobs
    checkpoint_seconds: float = 1.0
    expansions: int = 0  # over the life of this object (one Search may serve many solves)

    def first(self, key):
        return self.game.first_to_move(self.game.position(key))

    def children(self, key):
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
        if self.knowledge:
            for cert in self.game.certificates(self.game.position(key)):
                v = self.game.certificate_value(cert)
                lo, hi = max(lo, v.lo), min(hi, v.hi)
                self.cache.add_certificate(key, cert)
        return Node.leaf(lo, hi)

    # ------------------------------------------------------------ the steps

    def select(self, root, q):
        """A most-proving leaf for question q: min pn where the first player moves, min dn else."""
        key = root
        rec = self.cache.get(key)
        while rec.expanded:
            keys = self.children(key).keys
            recs = [self.cache.get(k) for k in keys]
            number = Node.pn if self.first(key) else Node.dn
            i = min(range(len(keys)), key=lambda j: number(recs[j], q))  # the first of equals: move order
            key, rec = keys[i], recs[i]
        return key

    def expand(self, key, q):
        """Create the children of a leaf, link them, evaluate the new ones, recompute the leaf."""
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
        first = self.first(key)
        if fresh and self.inner is not None:
            # one proven child proves a first-player node, one disproven child disproves a
            # second-player node: the other children need no search for this question
            self.evaluate(fresh, q, stop_on_proof=first, stop_on_disproof=not first)
        own = self.cache.get(key)
        self.cache.put(key, combine(first, own, [self.cache.get(k) for k in keys]))
        self.expansions += 1

    def evaluate(self, keys, q, stop_on_proof=False, stop_on_disproof=False):
        """Search each leaf with the inner solver for question q (one job); keep its proofs."""
        positions = [self.game.position(k) for k in keys]
        job = InnerJob(
            keys_a=np.array([p.first for p in positions], np.uint64),
            keys_b=np.array([p.second for p in positions], np.uint64),
            question=q,
            budget=self.inner.budget,
            stop_on_proof=stop_on_proof,
            stop_on_disproof=stop_on_disproof,
        )
        result = self.inner.run(job, self.should_stop)
        for key, pn, dn, work in zip(keys, result.pn.tolist(), result.dn.tolist(), result.work.tolist()):
            rec = self.cache.get(key)
            lo, hi = rec.lo, rec.hi
            if pn == 0 or dn == 0:
                fact = Fact(q, pn == 0)
                lo, hi = max(lo, fact.interval[0]), min(hi, fact.interval[1])
            estimates = [rec.pn0, rec.dn0, rec.pn1, rec.dn1]
            estimates[2 * q : 2 * q + 2] = pn, dn
            self.cache.put(key, Node.leaf(lo, hi, rec.flags | EVALUATED[q], rec.work + work, estimates))
        self.add_proofs(result.proofs)

    def add_proofs(self, proofs):
        """Merge the inner solver's proof records (the owner's move at each owner-to-move
        position of its proofs) into the proof table."""
        rows = zip(
            proofs.key_a.tolist(), proofs.key_b.tolist(), proofs.move.tolist(),
            proofs.question.tolist(), proofs.proven.tolist(),
        )  # fmt: skip
        for a, b, move, q, proven in rows:
            key = a.to_bytes(8, "big") + b.to_bytes(8, "big")
            fact = Fact(q, bool(proven))
            if move == CERTIFIED:  # a pairing decided it: the game finds the same one again
                self.certify(key, fact)
            else:
                self.cache.put_proof(key, self.cache.proof(key).with_fact(fact, move))

    def certify(self, key, fact):
        """Store the game's certificate of ``key`` that proves ``fact``."""
        for cert in self.game.certificates(self.game.position(key)):
            v = self.game.certificate_value(cert)
            if good_for(v.lo, v.hi, fact):
                self.cache.add_certificate(key, cert)
                return
        raise RuntimeError(f"no certificate for {key.hex()} although the inner search found one")

    def update(self, start):
        """Push the change at ``start`` to every ancestor, in the game's topological order."""
        heap = []
        queued = set()

        def push_parents(key):
            for p in self.cache.parents(key):
                if p not in queued:
                    queued.add(p)
                    heapq.heappush(heap, (-self.game.rank(self.game.position(p)), p))

        push_parents(start)
        while heap:
            _, key = heapq.heappop(heap)
            old = self.cache.get(key)
            new = combine(self.first(key), old, [self.cache.get(k) for k in self.children(key).keys])
            if new != old:
                self.cache.put(key, new)
                push_parents(key)

    def step(self, root, q):
        """One iteration for question q: select a leaf, evaluate or expand it, update."""
        leaf = self.select(root, q)
        if self.inner is not None and not self.cache.get(leaf).evaluated(q):
            self.evaluate([leaf], q)
        else:
            self.expand(leaf, q)
        self.update(leaf)

    # ------------------------------------------------------------ the solve loop

    def solve(self, root, limits, should_stop=None, on_progress=None):
        """Search until the root answers the target question(s), a limit is reached, or
        ``should_stop()`` is true; checkpoint on the way and at the end. ``on_progress`` gets a
        Progress every few seconds."""
        start = time.monotonic()
        last_cp = last_progress = start
        base = {name: self.cache.view.meta(name, 0) for name in COUNTERS}
        expansions_before = self.expansions
        checkpoints = 0
        stopped = False

        def counters():
            """The persistent counters (meta) as of now: earlier runs plus this one."""
            nonlocal checkpoints
            checkpoints += 1
            return {
                "checkpoints": base["checkpoints"] + checkpoints,
                "seconds": round(base["seconds"] + time.monotonic() - start, 3),
                "expansions": base["expansions"] + self.expansions - expansions_before,
                "memory_mb": round(self.cache.memory_bytes / 2**20, 1),
                "memory_budget_mb": round(self.cache.budget_bytes / 2**20, 1),
            }

        self.should_stop = should_stop
        self.ensure_root(root)
        while True:
            rec = self.cache.get(root)
            q = 0 if not rec.decided(0) else 1
            if rec.decided(q) or (q == 1 and limits.target == "first-wins"):
                break
            now = time.monotonic()
            if should_stop is not None and should_stop():
                stopped = True
                break
            if limits.max_seconds is not None and now - start >= limits.max_seconds:
                break
            if limits.max_nodes is not None and self.expansions - expansions_before >= limits.max_nodes:
                break
            self.step(root, q)
            if now - last_cp >= self.checkpoint_seconds:
                self.cache.checkpoint(counters())
                last_cp = now
            if on_progress is not None and now - last_progress >= PROGRESS_SECONDS:
                on_progress(
                    Progress(
                        seconds=now - start,
                        question=q,
                        root=self.cache.get(root),
                        nodes=self.cache.stored_counts()["nodes"],
                        expansions=self.expansions - expansions_before,
                        db_bytes=self.cache.store.file_bytes(),
                        memory_bytes=self.cache.memory_bytes,
                        budget_bytes=self.cache.budget_bytes,
                    )
                )
                last_progress = now
        self.cache.checkpoint(counters())
        rec = self.cache.view.node(root)
        solved = rec.value.exact or (limits.target == "first-wins" and rec.decided(0))
        return Outcome(rec, solved, self.expansions - expansions_before, time.monotonic() - start, stopped)
