"""The outer, persistent proof-number search over the DAG stored in LMDB.

Values are intervals [lo, hi] over the ordered outcomes second-wins (0) < draw (1) < first-wins
(2); the six states are the six intervals. A first-player node takes the max of its children's
intervals, a second-player node the min, intersected with what the node had proven before.

PN search answers two yes/no questions, "value >= first-wins" (q0) and "value >= draw" (q1),
with pn/dn per question kept in every node. The first player is the prover of both, so nodes
where the first player moves are OR nodes. Each iteration selects a most-proving leaf from the
root, expands it (children from the kernel, keyed canonically, transpositions linked through the
parent table) and pushes every change to every parent, most stones first, so each node is
recomputed at most once per update however many paths lead to it.

Nodes live in a write-back cache; a checkpoint writes every dirty node and new parent link in
one LMDB transaction, only between iterations, so that the database always holds a consistent DAG.
"""

import heapq
import signal
import time
from dataclasses import dataclass, field

import numpy as np

from pndb.games import kernels as K
from pndb.inner import InnerJob
from pndb.store import NO_MOVE

S, D, F = 0, 1, 2
THRESHOLDS = (F, D)  # q0: does the first player win; q1: does the first player avoid losing
INF = 1 << 62
COUNTERS = ("checkpoints", "seconds", "expansions")
EXPANDED = 1
TERMINAL = 2
EVALUATED = (4, 8)  # the inner solver has searched this leaf for q0 / q1
PROOF_FACT = {  # (question, proven) -> the interval a proof or disproof establishes
    (0, True): (F, F),
    (0, False): (S, D),
    (1, True): (D, F),
    (1, False): (S, S),
}
# the interval of each decided status (a game over, or a win with the next stone)
STATUS_INTERVAL = {s: (int(K.OUTCOME[s]), int(K.OUTCOME[s])) for s in range(1, len(K.OUTCOME))}

VALUE_NAMES = {
    (S, F): "unknown",
    (F, F): "first-wins",
    (S, S): "second-wins",
    (D, D): "draw",
    (S, D): "first-wont-win",
    (D, F): "second-wont-win",
}
VALUE_TEXT = {
    "first-wins": "first player wins",
    "second-wins": "second player wins",
    "draw": "draw",
    "first-wont-win": "first player does not win (draw or second player wins)",
    "second-wont-win": "second player does not win (draw or first player wins)",
    "unknown": "unknown",
}


def keys_from_arrays(ka, kb):
    """16-byte keys from arrays of key halves."""
    raw = np.stack([ka, kb], axis=1).astype(">u8").tobytes()
    return [raw[16 * i : 16 * i + 16] for i in range(len(ka))]


def key_of(a, b):
    return int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big")


def split_key(key):
    return int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")


def stones(key):
    a, b = split_key(key)
    return (a | b).bit_count()


def first_moves(key):
    a, b = split_key(key)
    return a.bit_count() == b.bit_count()


def numbers_for(lo, hi, t, pn, dn):
    """pn/dn for threshold t: fixed when the interval decides the question."""
    if lo >= t:
        return 0, INF
    if hi < t:
        return INF, 0
    return pn, dn


def good_for(lo, hi, q, proven):
    """True when [lo, hi] answers question q as a strategy needs: yes when proving, no else."""
    t = THRESHOLDS[q]
    return lo >= t if proven else hi < t


def proof_move(proof, q, proven):
    """The strategy move a proof record holds for question q, or None. A move proving the other
    question serves when that question's fact implies this one's (first-wins implies draw-or-better;
    second-wins implies first-does-not-win)."""
    if proof is not None:
        for other in (q, 1 - q):
            if proof[2 + other] != NO_MOVE and good_for(*PROOF_FACT[(other, proven)], q, proven):
                return proof[2 + other]
    return None


def leaf_record(lo, hi, flags=0, work=0, estimates=(1, 1, 1, 1)):
    """A node record for an unexpanded or terminal node."""
    pn0, dn0 = numbers_for(lo, hi, F, estimates[0], estimates[1])
    pn1, dn1 = numbers_for(lo, hi, D, estimates[2], estimates[3])
    return (lo, hi, flags, work, pn0, dn0, pn1, dn1)


def combine(first, own, kids):
    """The record of an expanded node from its own record and its children's records."""
    if first:
        lo = max(max(c[0] for c in kids), own[0])
        hi = min(max(c[1] for c in kids), own[1])
    else:
        lo = max(min(c[0] for c in kids), own[0])
        hi = min(min(c[1] for c in kids), own[1])
    nums = []
    for q, t in enumerate(THRESHOLDS):
        if lo >= t:
            nums += (0, INF)
        elif hi < t:
            nums += (INF, 0)
        else:
            pns = [c[4 + 2 * q] for c in kids]
            dns = [c[5 + 2 * q] for c in kids]
            if first:
                nums += (min(pns), min(sum(dns), INF - 1))
            else:
                nums += (min(sum(pns), INF - 1), min(dns))
    return (lo, hi, own[2] | EXPANDED, own[3], *nums)


def value_name(rec):
    return VALUE_NAMES[(rec[0], rec[1])]


def decided(rec, q):
    t = THRESHOLDS[q]
    return rec[0] >= t or rec[1] < t


@dataclass
class Limits:
    max_seconds: float = 0.0  # 0: no limit
    max_nodes: int = 0  # expansions in this run; 0: no limit
    target: str = "value"  # or "first-wins": stop once q0 is answered


@dataclass
class Outcome:
    record: tuple
    solved: bool
    expansions: int
    seconds: float
    interrupted: bool = False


@dataclass
class DagSearch:
    """PN search over the stored DAG of one game, with a write-back node cache."""

    store: object
    game: object
    checkpoint_seconds: float = 1.0
    cache_limit: int = 500_000  # node records kept in memory between checkpoints (~150 MB)
    inner: object = None  # an InnerSolver that evaluates new leaves, or None
    cache: dict = field(default_factory=dict)
    new_proofs: dict = field(default_factory=dict)  # key -> proof record not yet committed
    dirty: set = field(default_factory=set)
    new_links: dict = field(default_factory=dict)  # child -> [parents] not yet committed
    txn: object = None
    expansions: int = 0  # over the life of this object

    # ------------------------------------------------------------ node access

    def get(self, key):
        rec = self.cache.get(key)
        if rec is None:
            rec = self.store.get_node(self.txn, key)
            if rec is not None:
                self.cache[key] = rec
        return rec

    def put(self, key, rec):
        self.cache[key] = rec
        self.dirty.add(key)

    def parents(self, key):
        return self.store.get_parents(self.txn, key) + self.new_links.get(key, [])

    def children(self, key):
        """(keys, moves, statuses) of the children of an ongoing node, in move order."""
        a, b = split_key(key)
        n, moves, ka, kb, st = K.children(np.uint64(a), np.uint64(b), self.game.tables, True)
        return keys_from_arrays(ka[:n], kb[:n]), moves[:n], st[:n]

    def ensure_root(self, key):
        """Create the root record if the DB does not have it yet."""
        if self.get(key) is None:
            a, b = split_key(key)
            state = K.status(np.uint64(a), np.uint64(b), self.game.tables)
            if state == K.ONGOING:
                self.put(key, leaf_record(S, F))
            else:
                self.put(key, leaf_record(*STATUS_INTERVAL[state], flags=TERMINAL))

    # ------------------------------------------------------------ the three steps

    def select(self, root, q):
        """A most-proving leaf for question q: min pn where the first player moves, min dn else."""
        key = root
        rec = self.get(key)
        while rec[2] & EXPANDED:
            keys, _, _ = self.children(key)
            col = 4 + 2 * q if first_moves(key) else 5 + 2 * q
            recs = [self.get(k) for k in keys]
            i = min(range(len(keys)), key=lambda j: recs[j][col])  # the first of equals: move order
            key, rec = keys[i], recs[i]
        return key

    def expand(self, key, q):
        """Create the children of a leaf, link them, evaluate the new ones, recompute the leaf."""
        keys, _, statuses = self.children(key)
        fresh = []
        for k, st in zip(keys, statuses):
            if self.get(k) is None:
                if st == K.ONGOING:
                    self.put(k, leaf_record(S, F))
                    fresh.append(k)
                else:
                    self.put(k, leaf_record(*STATUS_INTERVAL[int(st)], flags=TERMINAL))
            self.new_links.setdefault(k, []).append(key)
        if fresh and self.inner is not None:
            # one proven child proves a first-player node, one disproven child disproves a
            # second-player node: the other children need no search for this question
            first = first_moves(key)
            self.evaluate(fresh, q, stop_on_proof=first, stop_on_disproof=not first)
        own = self.get(key)
        self.put(key, combine(first_moves(key), own, [self.get(k) for k in keys]))
        self.expansions += 1

    def evaluate(self, keys, q, stop_on_proof=False, stop_on_disproof=False):
        """Search each leaf with the inner solver for question q; keep the proofs it finds."""
        halves = [split_key(k) for k in keys]
        job = InnerJob(
            keys_a=np.array([h[0] for h in halves], np.uint64),
            keys_b=np.array([h[1] for h in halves], np.uint64),
            question=q,
            budget=self.inner.budget,
            stop_on_proof=stop_on_proof,
            stop_on_disproof=stop_on_disproof,
        )
        result = self.inner.run(job)
        for key, pn, dn, work in zip(keys, result.pn, result.dn, result.work):
            lo, hi, flags, old_work, *nums = self.get(key)
            if pn == 0 or dn == 0:
                fact = PROOF_FACT[(q, bool(pn == 0))]
                lo, hi = max(lo, fact[0]), min(hi, fact[1])
            estimates = list(nums)
            estimates[2 * q : 2 * q + 2] = int(pn), int(dn)
            self.put(key, leaf_record(lo, hi, flags | EVALUATED[q], old_work + int(work), estimates))
        self.add_proof(result.proofs)

    def add_proof(self, proofs):
        """Merge the inner solver's proof records (the owner's move at each owner position of
        its proofs) into the proof table."""
        owners = zip(proofs.move.tolist(), proofs.question.tolist(), proofs.proven.tolist())
        for key, (move, q, proven) in zip(keys_from_arrays(proofs.key_a, proofs.key_b), owners):
            fact_lo, fact_hi = PROOF_FACT[(q, proven)]
            old = self.new_proofs.get(key) or self.store.get_proof(self.txn, key) or (S, F, NO_MOVE, NO_MOVE)
            rec = [max(old[0], fact_lo), min(old[1], fact_hi), old[2], old[3]]
            rec[2 + q] = move
            self.new_proofs[key] = tuple(rec)

    def update(self, start):
        """Push the change at ``start`` to every ancestor, most stones first."""
        heap = []
        queued = set()
        for p in self.parents(start):
            if p not in queued:
                queued.add(p)
                heapq.heappush(heap, (-stones(p), p))
        while heap:
            _, key = heapq.heappop(heap)
            old = self.get(key)
            kids, _, _ = self.children(key)
            new = combine(first_moves(key), old, [self.get(k) for k in kids])
            if new == old:
                continue
            self.put(key, new)
            for p in self.parents(key):
                if p not in queued:
                    queued.add(p)
                    heapq.heappush(heap, (-stones(p), p))

    # ------------------------------------------------------------ checkpoints

    def begin(self):
        self.txn = self.store.read()

    def checkpoint(self, meta=None):
        """Commit every dirty node and new link in one transaction, then start a fresh read."""
        self.txn.abort()
        links = [(c, p) for c, ps in self.new_links.items() for p in ps]
        self.store.commit(
            nodes=[(k, self.cache[k]) for k in self.dirty], links=links, proofs=self.new_proofs.items(), meta=meta
        )
        self.dirty.clear()
        self.new_links.clear()
        self.new_proofs.clear()
        if len(self.cache) > self.cache_limit:
            self.cache.clear()
        self.txn = self.store.read()

    def end(self):
        if self.txn is not None:
            self.txn.abort()
            self.txn = None

    # ------------------------------------------------------------ the solve loop

    def solve(self, root, limits, progress=None):
        """Search until the root answers the target question(s) or a limit is reached.

        SIGINT and SIGTERM stop the search between iterations, after a final checkpoint.
        """
        stop = []

        def on_signal(signum, frame):
            stop.append(signum)

        old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        start = time.monotonic()
        last_cp = last_progress = start
        with self.store.read() as txn:
            base = {name: self.store.get_meta(txn, name, 0) for name in COUNTERS}
        expansions_before = self.expansions  # one DagSearch may serve many solves (--positions)
        checkpoints = 0

        def counters():
            """The persistent counters (meta) as of now: earlier runs plus this one."""
            nonlocal checkpoints
            checkpoints += 1
            return {
                "checkpoints": base["checkpoints"] + checkpoints,
                "seconds": round(base["seconds"] + time.monotonic() - start, 3),
                "expansions": base["expansions"] + self.expansions - expansions_before,
            }

        self.begin()
        try:
            self.ensure_root(root)
            while True:
                rec = self.get(root)
                q = 0 if not decided(rec, 0) else 1
                if decided(rec, q) or (q == 1 and limits.target == "first-wins"):
                    break
                now = time.monotonic()
                if stop or (limits.max_seconds and now - start >= limits.max_seconds):
                    break
                if limits.max_nodes and self.expansions - expansions_before >= limits.max_nodes:
                    break
                leaf = self.select(root, q)
                if self.inner is not None and not self.get(leaf)[2] & EVALUATED[q]:
                    self.evaluate([leaf], q)
                else:
                    self.expand(leaf, q)
                self.update(leaf)
                if now - last_cp >= self.checkpoint_seconds:
                    self.checkpoint(counters())
                    last_cp = now
                if progress and now - last_progress >= 2.0:
                    progress(self, root, q, now - start)
                    last_progress = now
            self.checkpoint(counters())
        finally:
            self.end()
            for s, h in old_handlers.items():
                signal.signal(s, h)
        rec = self.get_committed(root)
        solved = rec[0] == rec[1] or (limits.target == "first-wins" and decided(rec, 0))
        expansions = self.expansions - expansions_before
        return Outcome(rec, solved, expansions, time.monotonic() - start, interrupted=bool(stop))

    def get_committed(self, key):
        with self.store.read() as txn:
            return self.store.get_node(txn, key)
