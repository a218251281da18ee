"""The inner solver as the outer search's evaluator: InnerJob and InnerResult, run_job (the
search and the extraction of each proof, one numba call), the slicing of large budgets, and
InnerSolver, whose evaluate() is the contracts.Evaluator entry."""

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from pndb import jit
from pndb.games.placement import kernels as K
from pndb.games.placement import patterns as P
from pndb import values
from pndb.contracts import CERTIFIED, EPS, LeafProofs, LeafResult
from pndb.defaults import INNER_ENTRY_BYTES as ENTRY_BYTES
from pndb.games.interface import arrays_from_keys, keys_from_arrays
from pndb.values import Certificate
from pndb.inner.frames import new_stack, solve_one
from pndb.inner.knowledge import KNOWLEDGE_RARE, KNOWLEDGE_TRIAL
from pndb.inner.proof import extract_proof, grown, new_proof_buffers
from pndb.inner.table import INF, TableMemory, entry_work, new_table, numbers, shared_table


SLICE = 100_000  # nodes of a large budget spent between two looks at should_stop()


class InnerJob(NamedTuple):
    """Positions (canonical keys) to search for one question, in turn."""

    keys_a: np.ndarray  # uint64
    keys_b: np.ndarray  # uint64
    question: int  # 0: value >= first-wins, 1: value >= draw
    budget: int  # nodes per position
    stop_on_proof: bool = False  # stop after the first proven position
    stop_on_disproof: bool = False  # stop after the first disproven position
    th_pn: int = INF  # search a position only while its pn is below this (INF or more: no threshold)
    th_dn: int = INF  # ... and its dn below this


class ProofRecords(NamedTuple):
    """One record per owner-to-move position of the proofs found: the owner's move there, or
    CERTIFIED and the certificate that decides it."""

    key_a: np.ndarray  # uint64
    key_b: np.ndarray  # uint64
    move: np.ndarray  # int64, a cell of the canonical position (key_a, key_b), or CERTIFIED
    question: np.ndarray  # int64
    proven: np.ndarray  # bool: a proof (owner: first player) or a disproof (second player)
    certificate_size: np.ndarray  # int64: bytes of the record's certificate in certificates (0: a move)
    certificates: np.ndarray  # uint8: the certificates of the CERTIFIED records in order, each its
    # kind byte and payload (docs/book-format.md)


class InnerResult(NamedTuple):
    """Numbers of the positions searched (a prefix of the job's when it stopped early); a
    position is proven when pn == 0, disproven when dn == 0. work: nodes spent on each,
    extracting its proof included. subtree: the nodes the table has recorded below each
    position after the job, over all the searches of this solver that went through it (0 when
    the table does not hold it)."""

    pn: np.ndarray
    dn: np.ndarray
    work: np.ndarray
    proofs: ProofRecords
    subtree: np.ndarray


@nb.njit(cache=True)
def run_job(
    keys_a,
    keys_b,
    q,
    t,
    rules,
    placement,
    steps,
    tab,
    st,
    budget,
    eps,
    stop_on_proof,
    stop_on_disproof,
    pair_budget,
    proof_pair_budget,
    th_pn,
    th_dn,
):
    """Search the positions in turn (each until ``budget`` nodes or its thresholds), extracting
    each one's proof as soon as it is solved; stop after the first proven (or disproven) one
    when asked.

    Returns (pn, dn, work, count, proof buffers, proof owners, table, subtree): only the first
    ``count`` positions were searched; the table may have grown; subtree: the work the table
    records for each of them after the job (InnerResult).
    """
    n = keys_a.shape[0]
    pns = np.ones(n, np.int64)
    dns = np.ones(n, np.int64)
    work = np.zeros(n, np.int64)
    out = new_proof_buffers()
    owner = np.empty(64, np.bool_)
    count = n
    for i in range(n):
        pns[i], dns[i] = numbers(tab.recs, keys_a[i], keys_b[i], q)
        if pns[i] == 0 or dns[i] == 0:  # solved by an earlier job: only its proof is read
            work[i] = 1
        else:
            pns[i], dns[i], work[i], tab = solve_one(
                keys_a[i], keys_b[i], q, t, rules, placement, steps, tab, st, budget, eps, pair_budget, th_pn,
                th_dn,
            )  # fmt: skip
        # proofs are read with knowledge whenever the search may have used them (in this job or
        # an earlier one whose table entries it reads)
        if pns[i] == 0 or dns[i] == 0:
            proven = pns[i] == 0
            before = out.used[0]
            out, nodes, tab = extract_proof(
                keys_a[i], keys_b[i], q, proven, t, rules, placement, steps, tab, st, eps, out,
                proof_pair_budget,
            )  # fmt: skip
            work[i] += nodes
            if owner.shape[0] < out.key_a.shape[0]:
                owner = grown(owner, out.key_a.shape[0])
            owner[before : out.used[0]] = proven
        if (stop_on_proof and pns[i] == 0) or (stop_on_disproof and dns[i] == 0):
            count = i + 1
            break
    subtree = np.empty(count, np.int64)
    for i in range(count):
        subtree[i] = entry_work(tab.recs, keys_a[i], keys_b[i])
    return pns, dns, work, count, out, owner, tab, subtree


def merged(parts):
    """One InnerResult from the slices of a sliced job: (position index, slice result) in
    order; a position's numbers are its last slice's, its work and proofs the sum of all."""
    last = {}
    work = {}
    for i, part in parts:
        last[i] = part
        work[i] = work.get(i, 0) + int(part.work[0])
    order = sorted(last)
    proofs = [part.proofs for _, part in parts]
    return InnerResult(
        pn=np.array([int(last[i].pn[0]) for i in order], np.int64),
        dn=np.array([int(last[i].dn[0]) for i in order], np.int64),
        work=np.array([work[i] for i in order], np.int64),
        proofs=ProofRecords(*(np.concatenate([getattr(p, f) for p in proofs]) for f in ProofRecords._fields)),
        subtree=np.array([int(last[i].subtree[0]) for i in order], np.int64),
    )


def leaf_result(result):
    """An InnerResult as the evaluator contract's LeafResult: this solver's infinity (INF) as
    values.INF, keys as bytes, the certificates of CERTIFIED records cut apart."""
    p = result.proofs
    raw = p.certificates.tobytes()
    ends = np.cumsum(p.certificate_size)
    certified = np.flatnonzero(p.move == CERTIFIED)
    starts = (ends - p.certificate_size)[certified].tolist()
    proofs = LeafProofs(
        keys=keys_from_arrays(p.key_a, p.key_b), moves=p.move.tolist(), proven=p.proven.tolist(),
        certificates=[Certificate(raw[s], raw[s + 1 : e]) for s, e in zip(starts, ends[certified].tolist())],
    )  # fmt: skip
    pn, dn = ([values.INF if x >= INF else x for x in numbers.tolist()] for numbers in (result.pn, result.dn))
    return LeafResult(pn=pn, dn=dn, work=result.work.tolist(), subtree=result.subtree.tolist(), proofs=proofs)


class InnerSolver:
    """One solve's inner df-pn: its table (kept from job to job) and its stack. It is the
    outer search's evaluator (contracts.Evaluator: evaluate()); run() is the same search on the
    solver's own arrays and numbers, for tests and benchmarks."""

    def __init__(self, game, table_mb, knowledge=False, threat_depth=None, region=None):
        """``region``: a contracts.SharedRegion the solver's table lives in, shared with the other
        workers of the solve (``table_mb`` then unused); None: a table of its own."""
        self.tables = game.tables
        # the family's knowledge, compiled for it alone (search_frames): Allis' rules with gravity
        self.rules = game.tables.rules_lines if game.gravity else None
        self.placement = None if game.gravity else True
        self.threat_depth = P.default_threat_depth() if threat_depth is None else int(threat_depth)
        # pairing strategies decide positions of games without gravity (pndb.games.placement.patterns),
        # Allis' rules those of Connect Four (where the game has rules tables)
        known = not game.gravity or len(game.tables.rules_lines) > 0
        self.pair_budget = P.PAIRING_BUDGET if knowledge and known else 0
        # per question and number of empty cells: tries and decisions; where the search skips it
        self.knowledge_stats = np.zeros((2, 65, 2), np.int64)
        self.knowledge_skip = np.zeros((2, 65), np.bool_)
        self.steps = K.step_tables(game.tables)
        self.table = new_table(table_mb) if region is None else shared_table(region)
        t = game.tables
        nsym = t.cell_images.shape[1]
        self.stack = new_stack(nsym, len(t.win_masks), self.threat_depth, len(t.rules_lines))
        self.nodes = 0
        self.family = jit.family(game)
        self.compiled = False  # whether its first job has run (its family's kernels are compiled then)

    def evaluate(self, jobs, should_stop=None):
        """A contracts.LeafResult for each contracts.LeafJob, the jobs run in turn (run())."""
        results = []
        for job in jobs:
            ka, kb = arrays_from_keys(job.keys)
            stops = job.stop_on_proof, job.stop_on_disproof
            inner_job = InnerJob(ka, kb, job.question, job.budget, *stops, job.th_pn, job.th_dn)
            results.append(leaf_result(self.run(inner_job, should_stop)))
        return results

    def run(self, job, should_stop=None):
        """Search a job's positions; an :class:`InnerResult` with the proofs of those solved.

        A budget larger than SLICE is spent one position at a time in slices of SLICE nodes
        (df-pn resumes from its table), asking ``should_stop()`` between slices: Ctrl-C then
        waits a fraction of a second, not for the whole budget. The result then covers the
        positions searched before the stop (a prefix, as when stopping at a proof)."""
        if should_stop is None or job.budget <= SLICE:
            return self.run_slice(job, job.budget)
        parts = []
        for i in range(len(job.keys_a)):
            one = job._replace(keys_a=job.keys_a[i : i + 1], keys_b=job.keys_b[i : i + 1])
            spent = 0
            while True:
                part = self.run_slice(one, min(SLICE, job.budget - spent))
                parts.append((i, part))
                spent += int(part.work[0])
                solved = part.pn[0] == 0 or part.dn[0] == 0
                crossed = part.pn[0] >= job.th_pn or part.dn[0] >= job.th_dn
                if solved or crossed or spent >= job.budget or should_stop():
                    break
            if should_stop() or (job.stop_on_proof and part.pn[0] == 0):
                break
            if job.stop_on_disproof and part.dn[0] == 0:
                break
        return merged(parts)

    def run_slice(self, job, budget):
        """One call of the numba job with ``budget`` nodes per position."""
        q = int(job.question)
        self.stack.knowledge_skip[:] = self.knowledge_skip[q]
        pns, dns, work, count, out, owner, self.table, subtree = run_job(
            np.asarray(job.keys_a, np.uint64), np.asarray(job.keys_b, np.uint64), q,
            self.tables, self.rules, self.placement, self.steps, self.table, self.stack, int(budget), EPS,
            bool(job.stop_on_proof), bool(job.stop_on_disproof),
            self.pair_budget, self.pair_budget,
            min(int(job.th_pn), int(INF)), min(int(job.th_dn), int(INF)),
        )  # fmt: skip
        if not self.compiled:
            jit.mark_compiled(self.family)
            self.compiled = True
        if self.pair_budget != 0:  # without knowledge there are no tries to count
            self.count_knowledge(q)
        self.nodes += sum(work[:count].tolist())
        records, used = out.used.tolist()
        proofs = ProofRecords(
            key_a=out.key_a[:records], key_b=out.key_b[:records], move=out.move[:records],
            question=np.full(records, q, np.int64), proven=owner[:records],
            certificate_size=out.certificate_size[:records], certificates=out.certificates[:used],
        )  # fmt: skip
        return InnerResult(pn=pns[:count], dn=dns[:count], work=work[:count], proofs=proofs, subtree=subtree)

    def count_knowledge(self, q):
        """Stop asking for question q at positions with a number of empty cells where knowledge
        has shown it rarely decides anything: fewer than one in KNOWLEDGE_RARE of the first
        KNOWLEDGE_TRIAL tries. Judged per number of empty cells because where knowledge pays
        changes with it: in qango6:tournament pairings fail near the start and decide the draw
        later, and a switch for the whole search (judged on its first tries) left it unsolved."""
        tries = self.stack.knowledge_tries
        self.knowledge_stats[q] += tries
        tries[:] = 0
        tried, found = self.knowledge_stats[q, :, 0], self.knowledge_stats[q, :, 1]
        self.knowledge_skip[q] |= (tried >= KNOWLEDGE_TRIAL) & (found * KNOWLEDGE_RARE < tried)

    def memory(self):
        """The table's bytes: in use, backed by the OS so far (estimated), allocated."""
        entries = self.table.recs.shape[0]
        used = int(self.table.filled[0])
        pages = max(1, entries * ENTRY_BYTES // (2 << 20))  # huge pages when the OS gives them
        touched = entries * ENTRY_BYTES * (1.0 - math.exp(-used / pages))
        return TableMemory(
            used=used * ENTRY_BYTES, touched=int(touched), allocated=entries * ENTRY_BYTES,
            limit=self.table.arena.nbytes,
        )  # fmt: skip
