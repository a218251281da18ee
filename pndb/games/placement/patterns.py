"""Win-pattern knowledge for placement games: the live pattern graph of a position and what
it decides without search (dead cells, pairing strategies, forced moves, threat sequences,
move ordering).

A win pattern is *live* for a player while it holds no stone of the other player: that player
could still complete it. The live pattern graph of a position has the live patterns of both
players as vertices, joined when they share an empty cell. An empty cell in no live pattern is
*dead*: a stone there can never complete, nor block, any pattern. (Patterns are the game's
minimal ones, ``t.win_masks``: a pattern holding another one is only ever completed after it.)

Every function here is numba-compiled (``cache=True``) and takes the rules as the game's
:class:`~pndb.games.placement.kernels.Tables`, so a search can call it at every node. The Python wrappers
at the end (:func:`pattern_graph`, :func:`pairing`, :func:`searched_moves`) are for tools and
tests.

In a search, per ongoing node (a, b):

- ``moves_to_search(a, b, t)`` -> (moves, verdict): MOVER_WINS / MOVER_LOSES decide the node;
  else only the cells of ``moves`` need children (the value over them is the node's value).
- ``find_pairing(a, b, t, DEFENDER_SECOND, budget, pairs) >= 0``: the first player does not
  win (disproves "first wins"); with DEFENDER_FIRST: the second player does not win (proves
  "first at least draws"). The pairs are the book's kind-1 certificate, in the orientation of
  (a, b): call it on the canonical position to store them.
- ``order_moves(a, b, t, moves, out)``: the children's order.
- ``threat_sequence(own, other, stones, depth, levels, tried, ...tables) >= 0``: the player to move
  wins by a threat sequence (single threats, each block forced, then a double threat) of at
  most ``depth`` of its stones; the result is its first move.

A book needs an answer to every move of the strategy's opponent. Moves dropped at a node
where that opponent moves (a dead-cell move, a move that does not block) are not in the
search's proof: the export has to answer them itself (a non-blocking move is answered by the
winning cell; a dead-cell move needs a search of its own), or the search prunes only at the
strategy owner's nodes.
"""

import os
from typing import NamedTuple

from pndb.jit import njit
import numpy as np

from pndb.defaults import SettingsError
from pndb.games.errors import shown

from pndb.games.placement.kernels import (
    ONE,
    ZERO,
    first_to_move,
    legal_mask,
    lowest_cell,
    play,
    popcount,
    threat_cells,
    threats_made,
)

# verdicts of forced_moves / moves_to_search
UNDECIDED = 0  # the returned moves are the ones worth searching; the value is not known
MOVER_WINS = 1  # the player to move completes a pattern with any of the returned moves
MOVER_LOSES = 2  # every legal move (returned) lets the opponent complete a pattern at once

# who defends a pairing: the byte of a book's pairing certificate (docs/book-format.md)
DEFENDER_FIRST = 1
DEFENDER_SECOND = 2
NO_PAIRING = -1
MAX_PAIRS = 32  # pairs are disjoint cells of a 64-cell board
PAIRING_BUDGET = 500  # default search nodes for one find_pairing call (bench/patterns_effect.py)

MAX_OPTIONS = 120  # pairs tried for one pattern: every pair of a pattern with <= 16 free cells
UNCOVERED = 1 << 30
BOUND_AFTER = 16  # cover_by_pairs nodes after which the b-matching bound is worth its cost

# move ordering weights: an own win beats blocking, blocking beats everything else
OWN_WIN_SCORE = np.int64(1) << np.int64(56)
BLOCK_SCORE = np.int64(1) << np.int64(48)


# ---------------------------------------------------------------- the live pattern graph


@njit(cache=True)
def live_patterns(own, other, win_masks, out):
    """Write the patterns ``own`` can still complete (no stone of ``other``) into ``out``.

    Returns their number. Patterns are whole masks (stones of ``own`` included).
    """
    n = 0
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        if m & other == ZERO:
            out[n] = m
            n += 1
    return n


@njit(cache=True)
def live_cells(a, b, t):
    """Empty playable cells that lie in a live pattern of either player."""
    empty = t.cell_mask[0] & ~(a | b)
    live = ZERO
    win_masks = t.win_masks
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        if m & a == ZERO or m & b == ZERO:
            live |= m
    return live & empty


@njit(cache=True)
def dead_cells(a, b, t):
    """Empty playable cells in no live pattern of either player: every pattern through such a
    cell already holds stones of both players, and stones are never removed, so it stays dead."""
    return t.cell_mask[0] & ~(a | b) & ~live_cells(a, b, t)


@njit(cache=True)
def components_of(sets, n, out):
    """Connected components of the first ``n`` cell sets, joined when they share a cell.

    Writes each component's union of cells into ``out`` (in no particular order) and returns
    their number. Sets that are zero are skipped.
    """
    k = 0
    for i in range(n):
        merged = sets[i]
        if merged == ZERO:
            continue
        j = 0
        while j < k:
            if out[j] & merged != ZERO:
                merged |= out[j]
                k -= 1
                out[j] = out[k]  # removed: re-check the component moved into slot j
            else:
                j += 1
        out[k] = merged
        k += 1
    return k


@njit(cache=True)
def live_components(a, b, t, out):
    """The components of the live pattern graph, as the empty cells of each (into ``out``).

    Live patterns of both players are joined when they share an empty cell; a component is the
    part of the board where moves interact. Returns the number of components.
    """
    empty = t.cell_mask[0] & ~(a | b)
    sets = np.empty(t.win_masks.shape[0], np.uint64)
    n = 0
    win_masks = t.win_masks
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        if m & a == ZERO or m & b == ZERO:
            sets[n] = m & empty
            n += 1
    return components_of(sets, n, out)


# ---------------------------------------------------------------- dead cells


@njit(cache=True)
def prune_dead(a, b, t, moves):
    """The moves among ``moves`` worth searching once moves on dead cells are dropped.

    Rule: with no gravity, drop every dead-cell move when ``moves`` holds a move on a live
    cell; else keep the lowest dead cell alone. The value of the position over the moves kept
    is the value over ``moves``.

    Why it is sound (no gravity). Dead cells stay dead, and a stone on one takes part in no
    pattern either player can complete. (1) Any two dead moves d, e are equivalent: swapping
    the cells d and e maps the game after d onto the game after e (patterns through them are
    blocked for both players forever, a stone counts the same toward a disc cap wherever it
    is, and with no gravity every empty cell stays playable). (2) A move x on any other empty
    cell is never worse than d: take the mover's strategy S after d and play it after x,
    reading the board with x and d exchanged. When S asks for x, play d; when the opponent
    takes d, S sees the opponent take x. At every moment the real game gives the mover the
    same stones as S's game except that the real one has x where S's has the dead d, and the
    opponent the same except d (dead) where S's has x; the stone counts are equal, so the disc
    cap and a full board end both games together, the mover completes every pattern S
    completes, and the opponent none that S's opponent does not. So dropping all dead moves
    is sound also with a disc cap. A rule on the first stone only restricts which moves are
    in ``moves`` (the kept dead move is one of them), never the later game.

    Not sound with gravity: a stone on a dead cell makes the cell above it playable, so dead
    moves are neither interchangeable nor droppable; ``moves`` is returned unchanged.
    """
    if t.gravity[0]:
        return moves
    dead = moves & dead_cells(a, b, t)
    if dead == ZERO:
        return moves
    live = moves & ~dead
    if live != ZERO:
        return live
    return dead & (~dead + ONE)  # the lowest dead cell


# ---------------------------------------------------------------- forced moves


@njit(cache=True)
def forced_moves(a, b, t):
    """(moves, verdict): the legal moves worth searching in an ongoing position, by threats.

    - The player to move can complete a pattern: MOVER_WINS, the moves that do so.
    - Else, every legal move lets the opponent complete a pattern with the next stone (two
      threats on different cells, or one the mover may not take): MOVER_LOSES, all legal moves.
    - Else UNDECIDED, the moves that do not lose at once: with one opponent threat that is
      the blocking move alone. Moves that lose at once cannot be the mover's best unless all
      moves lose, so the value over the moves returned is the value of the position.

    A move that brings the disc cap (or fills the board) draws, and so never loses at once.
    Gravity is handled: an opponent's threat counts only once its cell is playable.
    """
    legal = legal_mask(a, b, t)
    first = first_to_move(a, b)
    own = a if first else b
    opp = b if first else a
    wins = threat_cells(own, opp, t.win_masks) & legal
    if wins != ZERO:
        return wins, MOVER_WINS
    opp_threats = threat_cells(opp, own, t.win_masks)
    if opp_threats == ZERO:
        return legal, UNDECIDED
    keep = ZERO
    last_stone = popcount(a | b) + 1 >= t.disc_cap[0]
    rest = legal
    while rest != ZERO:
        bit = rest & (~rest + ONE)
        rest ^= bit
        na, nb_ = play(a, b, lowest_cell(bit))
        child_legal = legal_mask(na, nb_, t)
        if last_stone or child_legal == ZERO or opp_threats & child_legal == ZERO:
            keep |= bit
    if keep == ZERO:
        return legal, MOVER_LOSES
    return keep, UNDECIDED


@njit(cache=True)
def moves_to_search(a, b, t):
    """(moves, verdict) of an ongoing position: forced_moves, then prune_dead on the moves
    left when undecided. Both keep the value (see their docstrings), so together they do."""
    moves, verdict = forced_moves(a, b, t)
    if verdict != UNDECIDED:
        return moves, verdict
    return prune_dead(a, b, t, moves), verdict


# ---------------------------------------------------------------- threat sequences

MAX_THREAT_DEPTH = 8  # the most attacker moves a threat sequence may have
THREAT_DEPTH = 3  # attacker moves of the threat sequences the search looks for; 0: off (PNDB_THREAT_DEPTH)
SEQ_OWN, SEQ_OTHER, SEQ_GAINED, SEQ_TODO = 0, 1, 2, 3  # the words of a level of new_sequence_work


def new_sequence_work():
    """Scratch for threat_sequence: per level the attacker's and the defender's stones, the
    attacker's stones of the sequence so far, the single-threat moves still to try; and the
    move tried at each level."""
    return np.zeros((MAX_THREAT_DEPTH, 4), np.uint64), np.zeros(MAX_THREAT_DEPTH + 1, np.int64)


def default_threat_depth():
    """THREAT_DEPTH, or the environment's PNDB_THREAT_DEPTH (0 turns threat sequences off); a
    SettingsError for anything but a whole number from 0 to MAX_THREAT_DEPTH. Here, not beside
    the inner solver, so that a solve checks it before numba is loaded (pndb.api.checked_game)."""
    text = os.environ.get("PNDB_THREAT_DEPTH", "").strip()
    if not text:
        return THREAT_DEPTH
    if not (text.isascii() and text.isdigit() and int(text) <= MAX_THREAT_DEPTH):
        raise SettingsError(
            f"PNDB_THREAT_DEPTH must be a whole number from 0 to {MAX_THREAT_DEPTH}, not '{shown(text, 40)}'"
        )
    return int(text)


@njit(cache=True, inline="always")
def two_missing(m, own, other):
    """The two cells ``own`` still needs in pattern ``m`` when it needs exactly two and ``other``
    has no stone in it (a stone on either makes a threat), else zero."""
    missing = m & ~own
    rest = missing & (missing - ONE)
    return missing if (m & other) | (rest & (rest - ONE)) == ZERO and rest != ZERO else ZERO


THREAT_NONE, THREAT_SINGLE, THREAT_DOUBLE = 0, 1, 2  # threat_kind's answers


@njit(cache=True, inline="always")
def threat_kind(own, other, cell, block_checked, masks_by_cell, mask_counts):
    """(kind, made): what a stone of ``own`` on the empty ``cell`` makes as a threat sequence
    counts it (neither player has a threat): THREAT_DOUBLE, threats on two cells (the sequence
    wins); THREAT_SINGLE, a threat on one cell whose block makes no threat of ``other`` (the
    block checked only with ``block_checked``, else taken as good); else THREAT_NONE. ``made``:
    the threat cells it makes. One rule for threat_moves and sequence_holds."""
    made = threats_made(own, other, cell, masks_by_cell, mask_counts)
    if made & (made - ONE) != ZERO:
        return THREAT_DOUBLE, made
    if made == ZERO:
        return THREAT_NONE, made
    if block_checked:
        block = lowest_cell(made)
        if threats_made(other, own | (ONE << np.uint64(cell)), block, masks_by_cell, mask_counts) != ZERO:
            return THREAT_NONE, made
    return THREAT_SINGLE, made


@njit(cache=True, inline="always")  # takes arrays, not t: binding a tuple counts a reference per array
def threat_moves(own, other, gained, legal, singles_wanted, win_masks, masks_by_cell, mask_counts):
    """(a cell of ``legal`` where a stone of ``own`` makes threats on two cells or -1, the cells
    of ``legal`` where it makes a threat on exactly one cell whose block makes no threat of
    ``other``: only when ``singles_wanted``, else 0, which saves a block's check per stone at a
    sequence's last level), for a position where neither player has a threat. With ``gained``
    non-zero only the stones that make a threat in a pattern through ``gained`` count as single
    threats (Allis' dependency: each threat builds on the sequence's earlier stones); those
    patterns are the ones through the cells of ``gained``, so only their lists are read (a few
    patterns a cell instead of all of them: most calls of a sequence search are below its first
    level)."""
    makers = ZERO
    if gained == ZERO:
        for i in range(win_masks.shape[0]):
            m = win_masks[i]
            makers |= two_missing(m, own, other)
    else:
        through = gained
        while through != ZERO:
            cell = lowest_cell(through)
            through &= through - ONE
            for j in range(mask_counts[cell]):
                makers |= two_missing(masks_by_cell[cell, j], own, other)
    makers &= legal
    singles = ZERO
    while makers != ZERO:
        cell = lowest_cell(makers)
        bit = ONE << np.uint64(cell)
        makers ^= bit
        kind, _ = threat_kind(own, other, cell, singles_wanted, masks_by_cell, mask_counts)
        if kind == THREAT_DOUBLE:
            return cell, ZERO
        if singles_wanted and kind == THREAT_SINGLE:
            singles |= bit
    return -1, singles


# without reference counting (_nrt=False): it allocates nothing, and numba counted a reference to
# each array it takes at every call and at every level's threat_moves, atomic operations that took
# a tenth of the inner search's time on qango6
@njit(cache=True, _nrt=False)
def threat_sequence(
    own, other, stones, depth, levels, tried, board, forbidden, cap, win_masks, masks_by_cell, mask_counts
):
    """The first move of a threat sequence that wins for ``own`` (the player to move, with
    ``stones`` stones on the board), or -1 when none of at most ``depth`` attacker moves is found.

    Call it only where the game is on, the player to move cannot complete a pattern, and the
    opponent has no threat (an empty cell completing one of its patterns). A threat sequence
    (Allis' threat-space search, in the dependency form) is a series of the attacker's stones,
    each making a threat on exactly one cell that the defender must take, ending with a stone
    that makes threats on two cells. It wins whatever the defender does: the defender never
    has a threat (it had none, the attacker's stones take none, and a block that makes one
    breaks the sequence: such a move is not tried), so it cannot complete a pattern; every
    other reply leaves the attacker a completing cell; the attacker plays a stone only when
    the defender's reply leaves the game on (fewer than the disc cap stones after it, and a
    threat cell is still empty then), and the rule on the first stone binds no later stone.
    ``levels`` and ``tried``: scratch (new_sequence_work); after a win ``tried`` holds the
    sequence's attacker moves, ended by -1. Without gravity only (its callers do not ask it
    under gravity). A search from a later position of the sequence may miss its rest (the
    rest's threats may build on stones that are no longer the sequence's): proof extraction
    then searches that position.
    The game's tables come as the arrays and numbers it reads (Tables: ``board`` cell_mask[0],
    ``forbidden`` first_forbidden[0], ``cap`` disc_cap[0]), not as the tuple: a call binding
    the tuple counted two atomic reference updates for each of its arrays.
    """
    if depth <= 0 or stones + 2 >= cap:
        return -1
    empty = board & ~(own | other)
    legal = empty & ~forbidden if stones == 0 else empty
    double, singles = threat_moves(own, other, ZERO, legal, depth > 1, win_masks, masks_by_cell, mask_counts)
    if double >= 0 or depth == 1:
        tried[0] = double
        tried[1] = -1
        return double
    levels[0, SEQ_OWN] = own
    levels[0, SEQ_OTHER] = other
    levels[0, SEQ_GAINED] = ZERO
    levels[0, SEQ_TODO] = singles
    level = 0
    while level >= 0:
        todo = levels[level, SEQ_TODO]
        if todo == ZERO:
            level -= 1
            continue
        cell = lowest_cell(todo)
        bit = ONE << np.uint64(cell)
        levels[level, SEQ_TODO] = todo ^ bit
        tried[level] = cell
        if stones + 2 * (level + 1) + 2 >= cap:  # the next threat's reply ends the game
            continue
        mine = levels[level, SEQ_OWN]
        theirs = levels[level, SEQ_OTHER]
        theirs |= threats_made(mine, theirs, cell, masks_by_cell, mask_counts)  # the block
        mine |= bit
        gained = levels[level, SEQ_GAINED] | bit
        legal = board & ~(mine | theirs)
        deeper = level + 2 < depth  # the singles found here are tried: the sequence may go on
        double, singles = threat_moves(
            mine, theirs, gained, legal, deeper, win_masks, masks_by_cell, mask_counts
        )  # fmt: skip
        if double >= 0:
            tried[level + 1] = double
            tried[level + 2] = -1
            return tried[0]
        if singles != ZERO:
            level += 1
            levels[level, SEQ_OWN] = mine
            levels[level, SEQ_OTHER] = theirs
            levels[level, SEQ_GAINED] = gained
            levels[level, SEQ_TODO] = singles
    return -1


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for its arrays
def sequence_holds(
    own, other, stones, depth, lines, row, cell_images, g, board, forbidden, cap, masks_by_cell, mask_counts
):
    """The first move of the attacker moves lines[row] (-1 ended), each cell taken to its image
    under symmetry g (cell_images[cell, g]), when they are a threat sequence that
    threat_sequence would accept for ``own`` in this position (its arguments), else -1.

    Each move is checked as threat_sequence checks its moves: a legal stone of a pattern missing
    two (through a stone the sequence gained, after the first), making threats on exactly one
    cell whose block makes no threat of ``other`` and leaves the game short of the disc cap,
    while a later move may follow, or on two cells, which ends the sequence. So the line is one
    of the sequences threat_sequence searches: where this takes a line, it finds one too (maybe
    another), and a search that asks here first decides the same positions."""
    if depth <= 0 or stones + 2 >= cap:
        return -1
    mine, theirs, gained = own, other, ZERO
    for i in range(depth):
        c = lines[row, i]
        if c < 0:
            return -1
        bit = cell_images[c, g]
        cell = lowest_cell(bit)
        empty = board & ~(mine | theirs)
        legal = empty & ~forbidden if i == 0 and stones == 0 else empty
        if bit & legal == ZERO:
            return -1
        if gained != ZERO:  # the dependency: a pattern through the cell and a gained stone
            builds = False
            for j in range(mask_counts[cell]):
                m = masks_by_cell[cell, j]
                if m & gained != ZERO and two_missing(m, mine, theirs) != ZERO:
                    builds = True
                    break
            if not builds:
                return -1
        kind, made = threat_kind(mine, theirs, cell, True, masks_by_cell, mask_counts)
        if kind == THREAT_DOUBLE:  # the sequence wins here
            return lowest_cell(cell_images[lines[row, 0], g])
        if kind == THREAT_NONE or stones + 2 * (i + 1) + 2 >= cap:  # (a single as the last move: -1 next)
            return -1
        theirs |= made
        mine |= bit
        gained |= bit
    return -1


# ---------------------------------------------------------------- move ordering


@njit(cache=True)
def move_scores(a, b, t, scores):
    """Score every empty cell into ``scores`` (int64[64]) by the live patterns through it.

    A live pattern with e empty cells adds 4^(12 - e) (at least 1) to each of its empty cells,
    for either player; a pattern one stone from completion instead adds OWN_WIN_SCORE (the
    mover's) or BLOCK_SCORE (the opponent's), so winning cells come first, then blocking cells.
    """
    first = first_to_move(a, b)
    own = a if first else b
    opp = b if first else a
    empty = t.cell_mask[0] & ~(a | b)
    for c in range(64):
        scores[c] = 0
    win_masks = t.win_masks
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        for side in range(2):
            other = opp if side == 0 else own
            if m & other != ZERO:
                continue
            e_cells = m & empty
            e = popcount(e_cells)
            if e == 0:
                continue
            if e == 1:
                w = OWN_WIN_SCORE if side == 0 else BLOCK_SCORE
            else:
                w = np.int64(1) << np.int64(2 * max(0, 12 - e))
            rest = e_cells
            while rest != ZERO:
                bit = rest & (~rest + ONE)
                rest ^= bit
                scores[lowest_cell(bit)] += w


@njit(cache=True)
def order_moves(a, b, t, moves, out):
    """Write the cells of ``moves`` into ``out`` best first; returns their number.

    Best first by move_scores; ties keep the game's static order (t.order).
    """
    scores = np.empty(64, np.int64)
    move_scores(a, b, t, scores)
    n = 0
    for i in range(t.order.shape[0]):
        c = t.order[i]
        if moves & (ONE << np.uint64(c)) == ZERO:
            continue
        # insertion sort, stable: a cell goes after every cell of at least its score
        j = n
        while j > 0 and scores[out[j - 1]] < scores[c]:
            out[j] = out[j - 1]
            j -= 1
        out[j] = c
        n += 1
    return n


# ---------------------------------------------------------------- pairing strategies


@njit(cache=True)
def private_pairs_possible(sets, n, cov, used):
    """A necessary condition for covering the uncovered sets with disjoint pairs off ``used``.

    Two sets whose free cells (not in ``used``) meet in at most one cell cannot share a pair.
    Take greedily, fewest free cells first, a family of uncovered sets that pairwise meet in at
    most one free cell: each needs two cells of its own. That is a bipartite b-matching (each
    set twice, each cell once), grown by augmenting paths; when it falls short, no pairing
    exists. (On the empty 7 x 7 board with 5 in a row, for instance, the 32 rows, columns and
    diagonals of length 5 or more would need 64 cells.)
    """
    fam = np.empty(n, np.uint64)
    nf = 0
    maxk = 0
    for i in range(n):
        if cov[i] == UNCOVERED:
            maxk = max(maxk, popcount(sets[i] & ~used))
    for k in range(2, maxk + 1):
        for i in range(n):
            if cov[i] != UNCOVERED:
                continue
            f = sets[i] & ~used
            if popcount(f) != k:
                continue
            alone = True
            for j in range(nf):
                g = f & fam[j]
                if g & (g - ONE) != ZERO:
                    alone = False
                    break
            if alone:
                fam[nf] = f
                nf += 1
    owner = np.full(64, -1, np.int64)
    via = np.empty(nf, np.int64)
    seen = np.empty(nf, np.bool_)
    queue = np.empty(nf, np.int64)
    parent = np.empty(64, np.int64)
    for u in range(nf):
        for _ in range(2):
            seen[:] = False
            seen[u] = True
            queue[0] = u
            head = 0
            tail = 1
            reached = ZERO
            found = -1
            while head < tail and found < 0:
                v = queue[head]
                head += 1
                rest = fam[v] & ~reached
                while rest != ZERO:
                    bit = rest & (~rest + ONE)
                    rest ^= bit
                    reached |= bit
                    c = lowest_cell(bit)
                    parent[c] = v
                    o = owner[c]
                    if o < 0:
                        found = c
                        break
                    if not seen[o]:
                        seen[o] = True
                        via[o] = c
                        queue[tail] = o
                        tail += 1
            if found < 0:
                return False
            c = found
            while True:  # flip the path: each set on it takes the cell it reached
                v = parent[c]
                owner[c] = v
                if v == u:
                    break
                c = via[v]
    return True


class CoverWork(NamedTuple):
    """Scratch arrays of find_pairing and cover_by_pairs: allocated once per call of
    find_pairing, or once per search with find_pairing_into."""

    sets: np.ndarray  # uint64[patterns]: the empty cells of each live pattern of the attacker
    comps: np.ndarray  # uint64[patterns]: the components they form
    sub: np.ndarray  # uint64[patterns]: the sets of one component
    cov: np.ndarray  # int64[patterns]: depth at which each set got its pair (UNCOVERED: none yet)
    chosen: np.ndarray  # uint64[MAX_PAIRS + 1]: the pair taken at each depth
    opts: np.ndarray  # uint64[MAX_PAIRS + 1, MAX_OPTIONS]: the pairs to try at each depth
    scores: np.ndarray  # int64[MAX_OPTIONS]
    nopt: np.ndarray  # int64[MAX_PAIRS + 1]
    idx: np.ndarray  # int64[MAX_PAIRS + 1]: the next pair to try at each depth


@njit(cache=True)
def new_cover_work(patterns):
    """Scratch arrays for a game with ``patterns`` win patterns (len(t.win_masks))."""
    return CoverWork(
        np.empty(patterns, np.uint64),
        np.empty(patterns, np.uint64),
        np.empty(patterns, np.uint64),
        np.empty(patterns, np.int64),
        np.empty(MAX_PAIRS + 1, np.uint64),
        np.empty((MAX_PAIRS + 1, MAX_OPTIONS), np.uint64),
        np.empty(MAX_OPTIONS, np.int64),
        np.empty(MAX_PAIRS + 1, np.int64),
        np.empty(MAX_PAIRS + 1, np.int64),
    )


@njit(cache=True)
def cover_by_pairs(sets, n, budget, pairs, start, w):
    """Depth-first search for disjoint pairs of cells such that each of the first ``n`` cell
    sets contains both cells of some pair; the pairs go into ``pairs[start:]``.

    Returns (pair count after start or -1 when none is found, nodes used). Each step takes the
    uncovered set with the fewest cells not yet in a pair (a set with two such cells has one
    choice; one with fewer, none) and tries each pair of those cells, the pairs that cover the
    most uncovered sets first. Exhaustive unless ``budget`` nodes run out: -1 with nodes left
    means no such pairing exists. A search still on after BOUND_AFTER nodes asks
    private_pairs_possible whether the sets can be covered at all (that costs a few easy
    searches, and saves many hopeless ones).
    """
    cov, chosen, opts, scores, nopt, idx = w.cov, w.chosen, w.opts, w.scores, w.nopt, w.idx
    cov[:n] = UNCOVERED
    used = ZERO
    nodes = 0
    d = 0
    while True:
        # select the uncovered set with the fewest free cells; note the free cells that lie in
        # two or more uncovered sets
        sel = -1
        selk = 65
        once = ZERO
        twice = ZERO
        for i in range(n):
            if cov[i] == UNCOVERED:
                f = sets[i] & ~used
                twice |= once & f
                once |= f
                k = popcount(f)
                if k < selk:
                    selk = k
                    sel = i
        if sel < 0:
            for j in range(d):
                x = lowest_cell(chosen[j])
                pairs[start + j, 0] = x
                pairs[start + j, 1] = lowest_cell(chosen[j] ^ (ONE << np.uint64(x)))
            return d, nodes
        nopt[d] = 0
        idx[d] = 0
        # a set with two free cells of its own takes them: no other set needs them, and the
        # pair that would cover it otherwise only uses up cells (no branching, no loss)
        own = ZERO
        if selk >= 2:
            for i in range(n):
                if cov[i] == UNCOVERED:
                    own = sets[i] & ~used & ~twice
                    if popcount(own) >= 2:
                        break
        if popcount(own) >= 2:
            low = own & (~own + ONE)
            rest = own ^ low
            opts[d, 0] = low | (rest & (~rest + ONE))
            nopt[d] = 1
        elif selk >= 2 and d < MAX_PAIRS:
            free = sets[sel] & ~used
            rx = free
            while rx != ZERO and nopt[d] < MAX_OPTIONS:
                bx = rx & (~rx + ONE)
                rx ^= bx
                ry = rx
                while ry != ZERO and nopt[d] < MAX_OPTIONS:
                    by = ry & (~ry + ONE)
                    ry ^= by
                    p = bx | by
                    s = 0
                    for i in range(n):
                        if cov[i] == UNCOVERED and sets[i] & p == p:
                            s += 1
                    j = nopt[d]  # insertion by score, best first
                    while j > 0 and scores[j - 1] < s:
                        scores[j] = scores[j - 1]
                        opts[d, j] = opts[d, j - 1]
                        j -= 1
                    scores[j] = s
                    opts[d, j] = p
                    nopt[d] += 1
        # take the next choice at depth d, backing up over exhausted depths
        while idx[d] >= nopt[d]:
            if d == 0:
                return -1, nodes
            d -= 1
            used &= ~chosen[d]
            for i in range(n):
                if cov[i] == d:
                    cov[i] = UNCOVERED
        nodes += 1
        if nodes > budget:
            return -1, nodes
        if nodes == BOUND_AFTER and not private_pairs_possible(
            sets, n, np.full(n, UNCOVERED, np.int64), ZERO
        ):
            return -1, nodes
        p = opts[d, idx[d]]
        idx[d] += 1
        chosen[d] = p
        used |= p
        for i in range(n):
            if cov[i] == UNCOVERED and sets[i] & p == p:
                cov[i] = d
        d += 1


@njit(cache=True)
def find_pairing(a, b, t, defender, budget, pairs):
    """Pairs for ``defender`` (DEFENDER_FIRST or DEFENDER_SECOND) into ``pairs`` (int64[32, 2]).

    Returns the number of pairs, or NO_PAIRING. A pairing is the kind-1 certificate of
    docs/book-format.md: disjoint pairs of empty cells such that every pattern the attacker can
    still complete (no defender stone) holds both cells of a pair. It proves that the attacker
    never completes a pattern (the defender answers a stone on a pair with the other cell),
    whoever is to move, with or without a disc cap or a first-stone rule. With gravity the
    defender may not be able to answer: never found there.

    The attacker's live patterns are split into components (joined through shared empty
    cells) and each is covered by cover_by_pairs; ``budget`` bounds the search nodes of the
    call. A live pattern with fewer than two empty cells has no pair: found at once.
    """
    return find_pairing_into(a, b, t, defender, budget, pairs, new_cover_work(t.win_masks.shape[0]))


@njit(cache=True)
def find_pairing_into(a, b, t, defender, budget, pairs, w):
    """find_pairing with the caller's scratch arrays ``w`` (new_cover_work(len(t.win_masks))): a
    search that asks at every node allocates them once."""
    if t.gravity[0]:
        return NO_PAIRING
    defence = a if defender == DEFENDER_FIRST else b
    empty = t.cell_mask[0] & ~(a | b)
    sets = w.sets
    n = np.int64(0)  # int64 from the start (n, k, npairs): a literal would compile the callees twice
    win_masks = t.win_masks
    for j in range(win_masks.shape[0]):
        m = win_masks[j]
        if m & defence == ZERO:
            e = m & empty
            if popcount(e) < 2:
                return NO_PAIRING
            sets[n] = e
            n += 1
    comps = w.comps
    ncomp = components_of(sets, n, comps)
    sub = w.sub
    npairs = np.int64(0)
    for c in range(ncomp):
        k = np.int64(0)
        for i in range(n):
            if sets[i] & comps[c] != ZERO:
                sub[k] = sets[i]
                k += 1
        got, nodes = cover_by_pairs(sub, k, budget, pairs, npairs, w)
        if got < 0:
            return NO_PAIRING
        npairs += got
        budget -= nodes
    return npairs


# ---------------------------------------------------------------- Python wrappers


class PatternGraph(NamedTuple):
    """The live pattern graph of a position, as bitboards (bit i = cell i)."""

    live_first: tuple  # the patterns the first player can still complete (whole masks)
    live_second: tuple  # the patterns the second player can still complete
    dead: int  # empty cells in no live pattern
    components: tuple  # the empty cells of each component of live patterns, ascending


class Pairing(NamedTuple):
    found: bool
    defender: int  # DEFENDER_FIRST or DEFENDER_SECOND (0 when not found)
    pairs: tuple  # (x, y) cell pairs


def pattern_graph(game, a, b):
    """The PatternGraph of the position (a, b) of ``game``."""
    t = game.tables
    a, b = np.uint64(a), np.uint64(b)
    out = np.empty(t.win_masks.shape[0], np.uint64)
    n1 = live_patterns(a, b, t.win_masks, out)
    first = tuple(int(m) for m in out[:n1])
    n2 = live_patterns(b, a, t.win_masks, out)
    second = tuple(int(m) for m in out[:n2])
    nc = live_components(a, b, t, out)
    comps = tuple(sorted(int(m) for m in out[:nc]))
    return PatternGraph(first, second, int(dead_cells(a, b, t)), comps)


def pairing(game, a, b, defender=None, budget=PAIRING_BUDGET):
    """A Pairing for ``defender`` (or for either player, the second tried first, when None)."""
    pairs = np.zeros((MAX_PAIRS, 2), np.int64)
    for d in (DEFENDER_SECOND, DEFENDER_FIRST) if defender is None else (defender,):
        n = find_pairing(np.uint64(a), np.uint64(b), game.tables, d, budget, pairs)
        if n != NO_PAIRING:
            return Pairing(True, d, tuple((int(x), int(y)) for x, y in pairs[:n]))
    return Pairing(False, 0, ())


def searched_moves(game, a, b):
    """(cells best first, verdict) of an ongoing position: moves_to_search, then order_moves."""
    t = game.tables
    a, b = np.uint64(a), np.uint64(b)
    moves, verdict = moves_to_search(a, b, t)
    out = np.empty(64, np.int64)
    n = order_moves(a, b, t, moves, out)
    return [int(c) for c in out[:n]], int(verdict)
