"""The game's knowledge, asked by the frames and by proof extraction: pairing strategies
without gravity, Allis' rules in Connect Four.

Knowledge (with ``knowledge``): at each position it expands and each it reads a proof from, the
search asks the game's certificate evaluator, compiled: pairing strategies without gravity,
Allis' rules in Connect Four (knowledge_decides). A decided position gets no children, and its
proof record says CERTIFIED and carries the certificate the evaluator found (its kind byte and
payload), which the outer search stores for the book as it is: the export checks each
certificate it writes with the game's own definitions, and `pndb check` every one stored. Where
knowledge rarely decides anything for a question at a number of empty cells (fewer than one in
KNOWLEDGE_RARE of KNOWLEDGE_TRIAL tries there), the search stops asking there
(InnerSolver.count_knowledge). A position where knowledge decides nothing is marked so in its
table entry and not asked again while the table holds it (df-pn enters a position many times,
and reads its proof after the search); proof extraction asks a pairing only for the owner it can
decide for. With knowledge, games without gravity also drop moves on dead cells
(patterns.prune_dead: never better than a live move), which needs no certificate: proof
extraction still reads every reply of the defending side.
"""

import numba as nb
import numpy as np

from pndb.games.placement import kernels as K
from pndb.games.connect4 import compiled as C
from pndb.games.placement import patterns as P
from pndb.values import PAIRING
from pndb.inner.table import NO_VERDICT, lookup


KNOWLEDGE_TRIAL = 2_000  # tries at one number of empty cells before judging whether knowledge pays
KNOWLEDGE_RARE = 100  # ... it pays when at least one in this many decides the question


@nb.njit(cache=True)
def pairing_decides(a, b, q, t, pair_budget, pairs, cover, cert):
    """Whether a pairing decides question q at (a, b) (-1 disproven, 1 proven, 0 not) and the
    size of the certificate payload it wrote into cert[1:]: for q0 one of the second player
    (the first never completes a pattern), for q1 one of the first player. (``pairs``,
    ``cover``: the Stack's scratch arrays.)"""
    defender = P.DEFENDER_SECOND if q == 0 else P.DEFENDER_FIRST
    npairs = P.find_pairing_into(a, b, t, defender, pair_budget, pairs, cover)
    cert[1] = defender
    for i in range(max(npairs, 0)):
        cert[2 + 2 * i] = pairs[i, 0]
        cert[3 + 2 * i] = pairs[i, 1]
    return (0 if npairs == P.NO_PAIRING else -1 if q == 0 else 1), 1 + 2 * npairs


@nb.njit(cache=True, inline="always")
def knowledge_asked(a, b, cell_mask, gravity, rules_limits, skip, everywhere):
    """Whether knowledge_decides is to be asked at (a, b): the search asks only at numbers of
    empty cells not in ``skip`` (its Stack's knowledge_skip), proof extraction ``everywhere``
    (the search may have used knowledge there before it was skipped); Allis' rules only with
    at most rules_limits[1] empty squares. (The few arrays it reads, not the tuples that hold
    them: an inlined function pays reference counting for every array of a tuple it takes.)"""
    empty = K.popcount(cell_mask[0] & ~(a | b))
    if skip[empty] and not everywhere:
        return False
    return gravity[0] != 1 or empty <= rules_limits[1]


@nb.njit(cache=True, inline="always")  # inlined: a call would pass every array of Tables
def knowledge_decides(a, b, q, t, rules, placement, pair_budget, recs, cert, tries, pairs, cover, everywhere):
    """(1 when the game's knowledge proves question q at (a, b), -1 when it disproves it, else 0;
    the NO_VERDICT mark to store for (a, b); when it decides, the size of the certificate it
    wrote into ``cert`` (the Stack's certificate): a kind byte, then the payload of
    docs/book-format.md), at a position where knowledge_asked says to ask. ``recs``: the
    table's entries; ``tries``, ``pairs``, ``cover``: the Stack's arrays of those names (not
    the tuples: see knowledge_asked).
    Without gravity a pairing: for q0 one of the second player (the first never completes a
    pattern: disproven), for q1 one of the first player (the second never does: proven). In
    Connect Four Allis' rules (pndb.games.connect4): ``rules``, their lines (t.rules_lines)
    with gravity, None without, and ``placement`` None with gravity (see search_frames).
    ``pair_budget``: the nodes of a pairing search (the rules take theirs from
    t.rules_limits[0], as the outer search does).

    The search (not ``everywhere``) counts the positions it evaluates and their decisions by
    number of empty cells in ``tries``. A position the table has marked for q is not
    asked again: df-pn enters a position many times, and a proof is read after its search (a
    table's marks are all at its solver's budget)."""
    mark = NO_VERDICT << np.uint64(q)
    if lookup(recs, a, b)[2] & mark != K.ZERO:
        return 0, mark, 0
    found, size = 0, 0
    if placement is not None:  # (the evaluations are calls that pass only the arrays they read)
        found, size = pairing_decides(a, b, q, t, pair_budget, pairs, cover, cert)
        cert[0] = PAIRING
    if rules is not None:
        w, h = t.columns.shape
        found, size = C.nb_decides(w, h, rules, a, b, t.rules_limits[0], q, cert[1:])
        cert[0] = C.CERTIFICATE_KIND
    if not everywhere:
        empty = K.popcount(t.cell_mask[0] & ~(a | b))
        tries[empty, 0] += 1
        tries[empty, 1] += found != 0
    if found == 0:
        return 0, mark, 0
    return found, K.ZERO, 1 + size
