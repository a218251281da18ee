"""The evaluator contract: what the outer search hands an evaluator of leaves, and gets back.

An evaluator (the inner df-pn solver, pndb.inner.InnerSolver; later a pool of worker
processes) searches leaves of the outer DAG below them. The search gives it plain values only
and reads nothing of it but its results, so that a job can run in another process unchanged:

- A :class:`LeafJob` names its leaves by the game's evaluator keys (``game.evaluator_key``: for
  the placement games a canonical board key, also under graph keys), asks one question with a
  node budget per leaf that the search chose (its scheme, pndb.search), and may carry df-pn
  thresholds and stop conditions.
- A :class:`LeafResult` gives each leaf searched its numbers, the work spent on it and what the
  evaluator has recorded below it, plus the proof records of the leaves it solved.

Numbers are on the search's scale (values.INF is infinity); an evaluator that counts in fewer
bits clamps thresholds and widens its infinity at its own boundary. ``--inner-nodes 0`` means
that there is no evaluator at all (the search expands every leaf), never a job of budget 0.
"""

from typing import NamedTuple, Protocol

from pndb.values import INF, Certificate

CERTIFIED = -1  # a proof record's move: a certificate (knowledge) decides its position
EPS = 0.25  # the 1+eps trick (Pawlewicz and Lew): df-pn's child thresholds, and the search's for its jobs


class LeafJob(NamedTuple):
    """Leaves to search in turn, for one question."""

    keys: tuple[bytes, ...]  # the evaluator keys of the leaves (game.evaluator_key)
    question: int  # 0: value >= first-wins, 1: value >= draw
    budget: int  # nodes per leaf
    th_pn: int = INF  # search a leaf only while its pn is below this (INF: no threshold)
    th_dn: int = INF  # ... and its dn below this
    stop_on_proof: bool = False  # stop after the first proven leaf
    stop_on_disproof: bool = False  # stop after the first disproven leaf


class LeafProofs(NamedTuple):
    """One record per owner-to-move position of the proofs a job found, in columns: the
    position's key, the owner's move there (a cell of the canonical position) or CERTIFIED,
    and whether the record proves the question (the first player owns the strategy) or
    disproves it. The certificates of the CERTIFIED records come in their order."""

    keys: list[bytes]
    moves: list[int]
    proven: list[bool]
    certificates: list[Certificate]


class LeafResult(NamedTuple):
    """A job's answer: one entry per leaf searched (a prefix of the job's leaves when it stopped
    at a proof, a disproof or should_stop), pn == 0 proven, dn == 0 disproven."""

    pn: list[int]
    dn: list[int]
    work: list[int]  # nodes spent on each leaf, extracting its proof included
    subtree: list[int]  # the nodes the evaluator has recorded below each leaf over all its searches
    proofs: LeafProofs

    @property
    def nodes(self):
        """The nodes this job used."""
        return sum(self.work)


class SharedRegion(NamedTuple):
    """Memory the evaluators of a pool of workers share (pndb.workers makes it, each worker's
    evaluator maps it: the inner solver keeps its table there): a file of ``bytes`` bytes,
    zero when made, that each process opens by ``path``."""

    path: str
    bytes: int


class Evaluator(Protocol):
    """Something that searches leaves: its one entry runs a batch of jobs."""

    def evaluate(self, jobs: list[LeafJob], should_stop=None) -> list[LeafResult]:
        """A LeafResult for each LeafJob of ``jobs``, in order. ``should_stop()`` may be polled
        during long jobs, which then end early with what they have (a prefix of their leaves).
        Every result must be stored: an evaluator may hand a proof out once only."""
        ...
