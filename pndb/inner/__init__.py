"""The inner solver: depth-first proof-number search (df-pn) with the 1+eps trick, in numba.

The outer search hands leaves to this solver as contracts.LeafJob values (canonical keys, a
question, a node budget, optional pn/dn thresholds at which a search returns, as a df-pn frame
does) and gets back contracts.LeafResult values (InnerSolver.evaluate, the contracts.Evaluator
entry): plain data only, so that a job could run in another process unchanged. Inside, a job is
an :class:`InnerJob` of key arrays and its answer an :class:`InnerResult` of arrays, with this
solver's numbers (INF, 32 bits; larger thresholds are clamped to it). A question is
"value >= first-wins" (q0) or "value >= draw" (q1), the first player being the prover. Every
position the job solves comes back with its proof: the strategy owner's move at every
owner-to-move position of its proof tree, extracted at once (before later searches can evict
what the table knew), and searched again when the table no longer holds it, so that a proof
never depends on the table.

The package, one concern per module (each imports only those above it):
  table      the transposition table: entries, the META/NUMS layout and flags, find/store/grow
  knowledge  the game's certificate evaluators as the search asks them (pairings, Allis' rules)
  frames     df-pn: solve_one and search_frames (the frame loop, one function for speed), Stack
  proof      proof extraction into record buffers, with its own set of the positions read
  solver     InnerJob/InnerResult, run_job, slicing, and InnerSolver (the contracts.Evaluator)
"""

from pndb import jit

jit.realise()  # the kernels of this package call those of pndb.games, which must be numba's then

from pndb.inner.solver import InnerJob, InnerResult, InnerSolver, ProofRecords  # noqa: E402
from pndb.inner.table import INF  # noqa: E402

__all__ = ["INF", "InnerJob", "InnerResult", "InnerSolver", "ProofRecords"]
