"""The df-pn frames: solve_one and search_frames, the search of one position with an explicit
stack of frames (Stack), its expansion with threats, threat sequences and knowledge.

The search keeps, for each position on its stack, the position's images under every symmetry
of the board; a child's canonical key (the lexicographically smallest (first, second) image)
is then one OR and compare per symmetry, or one OR for most children (those that keep the
position's orientation: kernels.own_key_below), and the children's statuses come from the
parent's threat cells (kernels.child_status). Children that are decided need neither key nor table.
Nor do most of the others while the table is young: each stored position sets a bit for its
orbit hash (kernels.StepTables.orbit_hash, a sum over its stones that is the same for all its
images, a child's its parent's plus one term), and a child whose bit is clear is not in the table
and starts with the numbers of a child the table does not know, its key made only if the frame
enters it (three quarters of the children of the qango6 start's search, which reads a twentieth
of its children from the table). Without gravity such children all start with the same numbers,
so the frame does not write them: it keeps their ranks in the move order as a mask (Stack.pending),
counts them in its sum and its least two numbers at once, and writes one when it enters it (the
same search, 7% less time on the qango6 start). Once the table holds SEEN_ENTRIES positions nearly
every bit is set, and the bits are no longer asked.

Threats (any placement game, Connect Four included): a position whose mover can complete a
pattern with a legal stone is decided without children. Otherwise a child is left out when it
loses at once for its mover's goal: the opponent can complete a pattern next in it (a move that
does not block the opponent's single threat, or, with gravity, a move right under an opponent's
threat cell), or it ends the game short of the mover's goal (a draw by a full board or the disc
cap, for the player who needs a win). With one playable threat of the opponent the block is the
only child; with two the position has no child and is lost; a draw the mover's goal allows
decides the position for it. This is sound under every rule pndb has: a child left out is lost
for the question whatever follows (the opponent wins with its next stone, which is legal: the
first-stone rule binds only the first stone, and the game is not over in the child by the disc
cap or a full board, checked first). Proof extraction needs nothing of the search for it: at the
opponent's positions it walks every legal reply, those left out included, and at the owner's
positions it finds the winning stone by the children's statuses (kernels.statuses_into; it
makes the canonical keys of the children it walks on alone).

Threat sequences (without gravity; up to THREAT_DEPTH attacker moves, PNDB_THREAT_DEPTH, 0: off): where the
opponent has no threat, a position whose mover wins by a threat sequence (patterns.threat_sequence:
stones that each make one threat, the opponent's block forced, ending in a stone that makes two)
is decided for the mover without children, as the single-threat and double-threat cases are;
the attacker's other moves are not tried. A position searched and found without one is marked
so in its table entry (NO_SEQUENCE) and not asked again while the table holds it. A frame that
enters a child first asks whether its opponent, were it to move, has a sequence: when it has
none, it has none after any stone of the player to move either (that stone, the defender's,
only takes cells and patterns from the attacker, and a sequence's stones then reach the disc
cap sooner; the first-stone rule is why this is asked only with a stone on the board), so the
children it enters skip the search (tests/test_threats.py checks the claim child by child).
The answer is kept in the frame's table entry (OPPONENT_ASKED, OPPONENT_NONE): df-pn enters a
position many times, and on the qango6 start a third of these searches were of positions
searched before (432 in 1,700 nodes, 290 with the marks; 888 of the player to move besides).
When it has one, the frame keeps its moves (Stack.line, SEQUENCE_FOUND), and each child it
enters first checks whether they, taken to the child's image, are a sequence there that the
search would accept (patterns.sequence_holds: a pass over the patterns through a few cells), and
searches only when they are not; a sequence a child's search finds replaces the frame's line for
the children after it (siblings' sequences share most moves). The check accepts only lines the
search could find, so the same positions are decided; the position's entry keeps no first stone
then (proof extraction searches for one, and hands out the same proof as without the check). On
the qango6 start 606 of the 866 sequences the search found were so checked instead of searched
(187 checks failed; extraction searched 101 instead of 66): 673 searches and 793 checks instead
of 1,244 searches; on mnk:5,5,4 (10,000 nodes) 2,277 of 3,298 found were checked. Proof
extraction plays the sequence's first stone that the search stored with the position (it wins
outright, so it serves either question), or else asks the same search at an owner-to-move
position where no stone wins by its status, before it reads the table (the search decided most
positions that have a sequence by it; a NO_SEQUENCE mark skips it; on the qango6 start 24 of the
125 sequences extraction walks are so stored, 59 without the check above), and walks the
sequence as any proof (sequence_move): the owner's move at each of its positions, every reply of
the opponent (those that do not block lose at once), so a book needs no certificate for it.
Measured (bench/threats.py, depth 3 against off, whole solves with their books verified, on a
shared 2-core machine):
qango6:castle 57 -> 15 s, qango6:tournament 221 -> 100 s, qango7plus:tournament 64 -> 39 s,
qango7plus:edges stopped at 300 s -> 35 s, mnk:5,5,4 12 -> 10 s, mnk:7,7,5 the same (5.1 s);
mnk:8,8,5 (unsolved) searches about a fifth fewer inner nodes a second.

A child the table does not know yet starts with the number its player to move sums at the
child's estimated replies, and the other number at 1. The estimate is the child's legal moves
(mobility), so that a position is not expanded only to learn how many moves it has; with gravity
(Connect Four) it is the mover's threats playable in the child when there are any (every other
reply loses at once). With gravity children are ordered by threats (the mover's patterns the
stone brings to one stone from completion, counted twice, plus the opponent's patterns it takes
from two missing), ties in the game's static order: forcing moves are so searched first, as in a
threat-space search. Starting numbers are only numbers: a position is decided by facts alone, so
they change no answer. Without gravity the threat order and the forced replies were measured
(bench/inner.py) and left out: nearly every stone makes a threat in Qango 6 and mnk:5,5,4; with
forced replies the inner search solved fewer random Qango 6 positions (377 of 400 instead of
391), and the order alone solved a few more (393, and 326 instead of 319 for mnk:5,5,4) but
tripled the expansions of a whole qango6:castle solve (9 to 28). Mobility against (1, 1) without
gravity: the qango6 start took 1,700 nodes instead of 4,165; disproving mnk:5,5,4's first-player
win in a 256 MB table 7.1 M nodes in 8.8 s instead of 21.1 M in 19.8 s; 346 of 400 random
mnk:5,5,4 questions solved in 10,000 nodes instead of 323 (Qango 6: 394 instead of 393). Half or
a quarter of the mobility took fewer nodes on the qango6 start (495, 434) but more on the
disproof (11.4 M, 16.0 M).
"""

from typing import NamedTuple

import numba as nb
import numpy as np

from pndb.games.placement import kernels as K
from pndb.games.connect4 import compiled as C
from pndb.games.placement import patterns as P
from pndb.inner.knowledge import knowledge_asked, knowledge_decides
from pndb.inner.table import (
    EMPTY, INF, KNOWLEDGE_DECIDED, NO_SEQUENCE, OPPONENT_ASKED, OPPONENT_NONE, SEEN_ENTRIES, home_block,
    larger_table, lookup, numbers_or, prefetch, seen_bit, store,
)


MAX_DEPTH = 65
UNKEYED = -1  # Stack.sym of a child whose key is not made yet (not in the table when written)
RANK_BITS = np.int64(6)  # a frame's children compared by near number, then rank: one key, number << 6 | rank
NO_CHILD_KEY = INF << RANK_BITS  # ... above every key of a child whose near number is below INF
# a frame's children count, when its expansion (in solve_one) finds the position decided:
DECIDED_FOR_MOVER = -1  # a child wins for the player to move (or draws where that suffices)
DECIDED_AGAINST_MOVER = -2  # knowledge decides the question for the other player
SEQUENCE_UNASKED = 0  # a frame's opponent threat sequences: to search when it enters a child,
SEQUENCE_NONE = 1  # searched and none found,
SEQUENCE_UNHELPFUL = 2  # not to be searched (threats on the board, gravity, no stone yet), or found before
SEQUENCE_FOUND = 3  # Stack.line holds a sequence, found here or by a child: the children entered try it first


class Stack(NamedTuple):
    """One frame per depth: the position's images, its key, thresholds, node count at entry,
    and its ongoing children with their numbers as last read from the table (only the child
    just searched is read again)."""

    img: np.ndarray  # uint64[depth, 2 * nsym]: (a, b) under each symmetry; symmetry 0 is the position
    child: np.ndarray  # uint64[2 * nsym]: the same for the child being entered, before it is made canonical
    avail: np.ndarray  # uint64[depth]: cells a stone can take, before the first-move restriction
    # uint64[depth, 2]: the threat cells (K.threats_of_both) of the position's mover and of its
    # opponent; a child's from its parent's: a threat pattern has no empty cell but its threat,
    # so the stone on a cell blocks no threat but one on that cell, and makes those of
    # K.threats_made: one pass over the patterns through the cell instead of over all
    threats: np.ndarray
    key_a: np.ndarray
    key_b: np.ndarray
    th_pn: np.ndarray
    th_dn: np.ndarray
    start: np.ndarray
    n: np.ndarray  # ongoing children; -1 when a child decides the position for its mover
    marks: np.ndarray  # uint64[depth]: NO_VERDICT bits for the frame's table entry (the expansion)
    last: np.ndarray
    moves: np.ndarray
    sym: np.ndarray  # the symmetry mapping each child to its canonical key (UNKEYED: not made yet)
    ka: np.ndarray
    kb: np.ndarray
    near: np.ndarray  # int64[depth, 64]: each child's number the frame minimises (pn at an OR node)
    far: np.ndarray  # ... and the one it sums (dn at an OR node)
    pairs: np.ndarray  # int64[MAX_PAIRS, 2]: scratch for pairing searches
    cover: P.CoverWork  # ... and the rest of their scratch arrays
    certificate: np.ndarray  # uint8: the certificate knowledge_decides found (kind byte, payload)
    score: np.ndarray  # int64[64]: scratch for the expansion: each child's threats made, for its order
    near_syms: np.ndarray  # int64[nsym]: scratch for the expansion: K.near_symmetries of its position
    opponent_sequence: np.ndarray  # int64[depth]: SEQUENCE_*: the opponent's threat sequences, if asked
    sequence_move: np.ndarray  # int64[depth]: the first stone of a threat sequence that decided it, or -1
    # int64[depth, P.MAX_THREAT_DEPTH + 1]: with SEQUENCE_FOUND, the attacker moves (-1 ended) of a
    # sequence of the frame's opponent: its own, or the last a child found
    line: np.ndarray
    hashes: np.ndarray  # uint64[depth]: the position's orbit hash (kernels.StepTables)
    limit: np.ndarray  # uint64[depth]: the position's kernels.own_key_below, for its children's keys
    replies: np.ndarray  # int64[depth, 64]: each child's estimated non-losing replies (the expansion)
    rank: np.ndarray  # int64[depth, 64]: each child's place in the move order (ties go to the first)
    # uint64[depth]: the children not written yet (without gravity), by rank: each starts with the
    # numbers of a child the table does not know, the same for all; written when entered
    pending: np.ndarray
    knowledge_tries: np.ndarray  # int64[65, 2]: per number of empty cells, knowledge tries, decisions
    knowledge_skip: np.ndarray  # bool[65]: numbers of empty cells where the search no longer asks
    threat_depth: np.ndarray  # int64[1]: the most attacker moves of a threat sequence (0: none)
    seq_levels: np.ndarray  # uint64[P.MAX_THREAT_DEPTH, 4]: scratch for P.threat_sequence
    seq_tried: np.ndarray  # int64[P.MAX_THREAT_DEPTH]: ... and the moves it tries


def new_stack(nsym, patterns, threat_depth, rules_lines):
    def words(*shape):
        return np.zeros(shape, np.uint64)

    def ints(*shape):
        return np.zeros(shape, np.int64)

    d = MAX_DEPTH
    levels, tried = P.new_sequence_work()
    return Stack(
        img=words(d, 2 * nsym), child=words(2 * nsym), avail=words(d), threats=words(d, 2),
        key_a=words(d), key_b=words(d),
        th_pn=ints(d), th_dn=ints(d), start=ints(d), n=ints(d), marks=words(d), last=ints(d),
        moves=ints(d, 64), sym=ints(d, 64), ka=words(d, 64), kb=words(d, 64),
        near=ints(d, 64), far=ints(d, 64),
        pairs=ints(P.MAX_PAIRS, 2), cover=P.new_cover_work(patterns),
        certificate=np.zeros(1 + max(1 + 2 * P.MAX_PAIRS, C.payload_bound(rules_lines)), np.uint8),
        knowledge_tries=ints(65, 2),
        knowledge_skip=np.zeros(65, np.bool_), score=ints(64), near_syms=ints(nsym),
        replies=ints(d, 64), rank=ints(d, 64),
        pending=words(d),
        opponent_sequence=ints(d), sequence_move=ints(d), line=ints(d, P.MAX_THREAT_DEPTH + 1),
        hashes=words(d), limit=words(d),
        threat_depth=np.array([threat_depth], np.int64), seq_levels=levels, seq_tried=tried,
    )  # fmt: skip


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for its arrays
def keep_line(lines, row, tried, cell_images, s):
    """Copy the attacker moves of a sequence found (P.threat_sequence's ``tried``, -1 ended)
    into lines[row], each cell taken to its image under symmetry s (0: itself)."""
    for i in range(tried.shape[0]):
        c = tried[i]
        if c < 0:
            lines[row, i] = -1
            return
        lines[row, i] = K.lowest_cell(cell_images[c, s])


@nb.njit(cache=True, inline="always")  # inlined: a library of its own compiles search_frames again (jit)
def solve_one(ka, kb, q, t, rules, placement, steps, tab, st, budget, eps, pair_budget, th_pn=INF, th_dn=INF):
    """(pn, dn, nodes, table) of an ongoing position after at most ``budget`` nodes of df-pn,
    or fewer once its pn reaches ``th_pn`` or its dn ``th_dn`` (INF: no threshold); the table is
    the one given, or a larger one when it grew.

    The classic recursive df-pn (Nagai) written with an explicit stack of frames, one per depth
    (numba's cached recursive functions are not reliable): a frame searches its position until
    pn >= its pn threshold or dn >= its dn threshold, each time descending into the most-proving
    child with thresholds by the 1+eps trick (Pawlewicz and Lew). A frame reads its children's
    numbers from the table once, and afterwards only the child it has just searched: numbers
    read earlier may be stale but never wrong about a proof.

    The frames run in search_frames, whose table arrays never change: when the table is to
    grow, it returns, the table grows here, and it resumes from its stack. (An array variable
    that a loop may reassign costs an atomic reference count increment and decrement at every
    use: with the table grown inside the frame loop, each child's table read paid two.)
    """
    K.images_into(ka, kb, t.sym_bytes, t.cell_images, st.img[0])
    st.avail[0] = K.available(ka, kb, t)
    first0 = K.first_to_move(ka, kb)
    mine, theirs = (ka, kb) if first0 else (kb, ka)
    st.threats[0, 0], st.threats[0, 1] = K.threats_of_both(mine, theirs, t.win_masks)
    st.hashes[0] = K.orbit_hash_of(ka, kb, steps.orbit_hash)
    st.key_a[0] = ka
    st.key_b[0] = kb
    st.th_pn[0] = th_pn
    st.th_dn[0] = th_dn
    st.start[0] = 1
    st.last[0] = -1
    stones0 = K.popcount(ka | kb)
    depth = np.int64(0)  # not the literal 0: numba would compile search_frames for both types
    counter = np.int64(1)
    entering = True  # the frame at depth is new: its children are still to be written
    while True:
        grow = tab.recs.shape[0] < tab.arena.shape[0]
        depth, counter, pn, dn, full = search_frames(
            q, t, rules, placement, steps, tab.recs, tab.filled, tab.seen, grow, st, budget, eps, pair_budget,
            first0, stones0, depth, counter, entering,
        )  # fmt: skip
        if full:
            tab = larger_table(tab)
        if depth < 0:
            return pn, dn, counter, tab
        entering = False


@nb.njit(cache=True)
def search_frames(
    q, t, rules, placement, steps, recs, filled, seen, grow, st, budget, eps, pair_budget, first0, stones0,
    depth, counter, entering,
):
    """Run solve_one's frames from ``depth`` (``entering``: its frame is new) until the root's
    frame returns, or until a frame's store fills the table half when it may ``grow``.
    Returns (depth, counter, the root's pn and dn once depth is -1, whether the table is full).

    ``rules``: the Connect Four rules' lines (t.rules_lines) with gravity, None without;
    ``placement``: None with gravity, True without. Their types tell the family at compile time:
    numba drops a branch on ``x is not None`` before it compiles its calls only where x is None
    (an argument's type rules out nothing else), so the branches of Allis' rules ask ``rules``
    and those of pairings, threat sequences and dead cells ``placement``: a game without
    gravity never compiles Allis' rules, and one with gravity none of the others (each family's
    search compiles in about half the time of both; with the one argument, ``rules is None``,
    Connect Four compiled the others too: 20 of its 154 CPU s of compiles, bench/cold_start.py).

    One function, in sections marked ``# ---- 1.`` to ``5.``: a call from its loop would pass
    the solver's tuples, and pay atomic reference counts for every array they hold (see the
    expansion's note)."""
    nsym = t.cell_images.shape[1]
    # Every array the loop reads is bound to a local once, here, and indexed in two dimensions
    # (st_far[depth, i], not a row view): a tuple member read, a row view or an array passed to
    # a call inside the loop costs an atomic reference count increment and decrement, which
    # took a fifth of the search's time.
    order, up_bit, cell_images = t.order, steps.up_bit, t.cell_images
    compose, inverse = steps.compose, steps.inverse
    orbit_hash, st_hashes, st_limit = steps.orbit_hash, st.hashes, st.limit
    rank_bytes = t.rank_bytes
    sym_bytes, win_masks = t.sym_bytes, t.win_masks
    masks_by_cell, mask_counts = t.masks_by_cell, t.mask_counts
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    gravity = t.gravity[0] != 0
    threat_depth = st.threat_depth[0]
    st_img, st_child, st_avail, st_marks, st_n, st_last = st.img, st.child, st.avail, st.marks, st.n, st.last
    st_threats = st.threats
    st_key_a, st_key_b, st_th_pn, st_th_dn, st_start = st.key_a, st.key_b, st.th_pn, st.th_dn, st.start
    st_ka, st_kb, st_near, st_far, st_moves, st_sym = st.ka, st.kb, st.near, st.far, st.moves, st.sym
    st_replies, st_score, seq_levels, seq_tried = st.replies, st.score, st.seq_levels, st.seq_tried
    near_syms = st.near_syms
    st_rank, st_pending = st.rank, st.pending
    st_opponent_sequence, st_sequence_move, st_line = st.opponent_sequence, st.sequence_move, st.line
    root_pn = np.int64(1)
    root_dn = np.int64(1)
    while depth >= 0:
        first = first0 != (depth & 1 == 1)
        side = 0 if first else 1  # the half the mover's stone goes to: a (0) or b (1)
        on_a = EMPTY if first else K.ZERO  # ... as a mask: all ones for a
        # ---- 1. expansion, once per frame: the position decided at once (a threat, a threat
        # sequence, knowledge), or its ongoing children written in move order
        if entering:
            entering = False
            # expansion: write the frame's ongoing children (keys canonical, one per symmetry
            # class), their number into st.n, or DECIDED_FOR_MOVER when a child decides the
            # position for its mover, DECIDED_AGAINST_MOVER when knowledge decides it for the
            # other player. (Written out here, not as a function: an inlined function that takes
            # the solver's tuples pays two atomic reference count updates for each of their
            # arrays, some 120 a node, which took a third of the search's time.)
            stones = stones0 + depth
            a = st_img[depth, 0]
            b = st_img[depth, 1]
            mine, theirs = (a, b) if first else (b, a)
            avail = st_avail[depth]
            legal = avail & ~forbidden if stones == 0 else avail
            own_threats = st_threats[depth, 0]
            opponent_threats = st_threats[depth, 1]
            st_marks[depth] = K.ZERO
            # ---- 1a. threat sequences
            # threat sequences are asked where the mover cannot win at once and the opponent has
            # no threat (the opponent's once the frame enters a child, below); the frame's table
            # flags may tell what was found here before
            quiet = opponent_threats == K.ZERO and own_threats & legal == K.ZERO
            sequences = threat_depth != 0 and not gravity and quiet
            known = lookup(recs, a, b)[2] if sequences else K.ZERO
            opponent = SEQUENCE_UNHELPFUL
            if sequences and own_threats == K.ZERO and stones > 0:
                opponent = SEQUENCE_UNASKED
                if known & OPPONENT_ASKED != K.ZERO:
                    opponent = SEQUENCE_NONE if known & OPPONENT_NONE != K.ZERO else SEQUENCE_UNHELPFUL
            st_opponent_sequence[depth] = opponent
            n = 0
            pending = K.ZERO
            st_sequence_move[depth] = -1
            if own_threats & legal != K.ZERO:
                n = DECIDED_FOR_MOVER
            elif placement is not None and sequences:
                if depth > 0 and st_opponent_sequence[depth - 1] == SEQUENCE_NONE:  # the parent showed none
                    st_marks[depth] = NO_SEQUENCE
                else:
                    if known & NO_SEQUENCE == K.ZERO:
                        found = -1
                        if depth > 0 and st_opponent_sequence[depth - 1] == SEQUENCE_FOUND:
                            found = P.sequence_holds(
                                mine, theirs, stones, threat_depth, st_line, depth - 1, cell_images,
                                st_sym[depth - 1, st_last[depth - 1]], board, forbidden, cap, masks_by_cell,
                                mask_counts,
                            )  # fmt: skip
                        if found < 0:
                            found = P.threat_sequence(
                                mine, theirs, stones, threat_depth, seq_levels, seq_tried, board, forbidden,
                                cap, win_masks, masks_by_cell, mask_counts,
                            )  # fmt: skip
                            st_sequence_move[depth] = found
                            if found >= 0 and depth > 0:
                                # the parent's children try this one next, in the parent's frame
                                back = inverse[st_sym[depth - 1, st_last[depth - 1]]]
                                keep_line(st_line, depth - 1, seq_tried, cell_images, back)
                                st_opponent_sequence[depth - 1] = SEQUENCE_FOUND
                        if found >= 0:
                            n = DECIDED_FOR_MOVER
                        else:
                            st_marks[depth] = NO_SEQUENCE
            # ---- 1b. knowledge
            if n == 0 and pair_budget != 0:
                if knowledge_asked(a, b, t.cell_mask, t.gravity, t.rules_limits, st.knowledge_skip, False):
                    decided, mark, _ = knowledge_decides(
                        a, b, q, t, rules, placement, pair_budget, recs, st.certificate, st.knowledge_tries,
                        st.pairs, st.cover, False,
                    )  # fmt: skip
                    st_marks[depth] |= mark
                    if decided != 0:
                        st_marks[depth] |= KNOWLEDGE_DECIDED << np.uint64(q)
                        n = DECIDED_FOR_MOVER if (decided == 1) == first else DECIDED_AGAINST_MOVER
                if placement is not None and n == 0:  # moves on dead cells dropped (patterns.prune_dead)
                    legal = P.prune_dead(a, b, t, legal)
            # ---- 1c. the children: one per symmetry class, each keyed unless the table cannot hold it
            if n == 0:
                # a draw reaches the mover's goal: q1 for the first player
                draw_wins = q == (1 if first else 0)
                img = st_img[depth]
                nears = K.near_symmetries(img, first, near_syms)  # those that map a child to another
                twins = K.ZERO  # the cells whose children repeat one written
                limit = K.own_key_below(img)
                st_limit[depth] = limit  # for the keys of the children made when entered
                # the cells to try, in move order (their ranks, lowest first): with the opponent's
                # threat cells open, only a stone on one can leave the game on (a child short of
                # the disc cap is no draw, and every other stone leaves the threat playable)
                blocks = opponent_threats & avail
                asks_seen = filled[0] < SEEN_ENTRIES
                tried = legal & blocks if blocks != K.ZERO and stones + 1 < cap else legal
                ranks = K.permute(tried, rank_bytes, K.IDENTITY)
                while ranks != K.ZERO:
                    rank = K.lowest_cell(ranks)
                    cell = order[rank]
                    ranks &= ranks - K.ONE
                    bit = K.ONE << np.uint64(cell)
                    if twins & bit != K.ZERO:
                        continue
                    child_avail = (avail ^ bit) | up_bit[cell]
                    state = K.child_status(
                        first, bit, own_threats, opponent_threats, child_avail, stones + 1, cap
                    )
                    if state == K.DRAW and draw_wins:
                        n = DECIDED_FOR_MOVER
                        break
                    if state != K.ONGOING:  # a draw short of the mover's goal, or the opponent wins next
                        continue
                    if nears:
                        twins |= K.twin_cells(img, first, cell_images, cell, near_syms, nears)
                    stored = True  # whether the table may hold the child; if not, keyed when entered
                    if asks_seen:
                        word, mask = seen_bit(st_hashes[depth] + orbit_hash[side, cell])
                        stored = seen[word] & mask != K.ZERO
                        if not stored and not gravity:  # its numbers are every such child's
                            pending |= K.ONE << np.uint64(rank)
                            continue
                    if stored:
                        best_a, best_b, g = K.canonical_child(img, cell_images[cell], on_a, limit)
                        prefetch(recs, home_block(best_a, best_b, recs.shape[0] - 1))
                    else:
                        best_a = best_b = K.ZERO
                        g = UNKEYED
                    made = 0  # the order: most threats made first, ties in t.order (a stable insertion)
                    reply = K.popcount(child_avail)  # the replies the child starts with: its legal moves
                    if gravity:
                        makes = K.makers_at(mine, theirs, cell, masks_by_cell, mask_counts)
                        made = 2 * makes + K.makers_at(theirs, mine, cell, masks_by_cell, mask_counts)
                        # with gravity the replies are the mover's threats playable after the stone
                        # when it has any: every other reply loses at once
                        forcing = own_threats & up_bit[cell]
                        if makes > 0:
                            made_threats = K.threats_made(mine, theirs, cell, masks_by_cell, mask_counts)
                            forcing |= made_threats & child_avail
                        if forcing != K.ZERO:
                            reply = K.popcount(forcing)
                    j = n
                    while j > 0 and st_score[j - 1] < made:
                        st_score[j] = st_score[j - 1]
                        st_moves[depth, j] = st_moves[depth, j - 1]
                        st_sym[depth, j] = st_sym[depth, j - 1]
                        st_ka[depth, j] = st_ka[depth, j - 1]
                        st_kb[depth, j] = st_kb[depth, j - 1]
                        st_replies[depth, j] = st_replies[depth, j - 1]
                        j -= 1
                    st_score[j] = made
                    st_replies[depth, j] = reply
                    st_rank[depth, j] = rank  # (with gravity the order is the array's, below)
                    st_moves[depth, j] = cell
                    st_sym[depth, j] = g
                    st_ka[depth, j] = best_a
                    st_kb[depth, j] = best_b
                    n += 1
                if gravity:
                    for j in range(n):
                        st_rank[depth, j] = j
            st_n[depth] = n
            st_pending[depth] = pending if n >= 0 else K.ZERO
        # ---- 2. the children's numbers from the table (after the first pass, only the child just searched)
        n = st_n[depth]
        pending = st_pending[depth]
        # a child the table does not know starts with the mover's number (the one the child's
        # player sums) at its estimated replies, the other at 1 (module docstring).
        # OR node (first player moves): pn = min, dn = sum; AND node: the other way round. A
        # child's "near" number is the one minimised at this node, its "far" number the one summed.
        # A child refuted for the mover (near INF, far 0) is dropped, the frame's last child moved
        # into its place: it is never the least and adds nothing to the sum, and the scans below
        # then read only the children still open (the rank keys keep every choice the same).
        lo = 0 if st_last[depth] < 0 else st_last[depth]
        hi = n if st_last[depth] < 0 else lo + 1
        i = lo
        while i < hi:
            r = st_replies[depth, i]
            pn0, dn0 = (r, np.int64(1)) if first else (np.int64(1), r)
            if st_sym[depth, i] == UNKEYED:
                cpn, cdn = pn0, dn0
            else:
                cpn, cdn = numbers_or(recs, st_ka[depth, i], st_kb[depth, i], q, pn0, dn0)
            near_i, far_i = (cpn, cdn) if first else (cdn, cpn)
            if near_i >= INF and far_i == 0:
                n -= 1
                hi -= 1  # the child moved in was read already, or is read next
                st_moves[depth, i] = st_moves[depth, n]
                st_sym[depth, i] = st_sym[depth, n]
                st_ka[depth, i] = st_ka[depth, n]
                st_kb[depth, i] = st_kb[depth, n]
                st_replies[depth, i] = st_replies[depth, n]
                st_rank[depth, i] = st_rank[depth, n]
                st_near[depth, i] = st_near[depth, n]
                st_far[depth, i] = st_far[depth, n]
                continue
            st_near[depth, i] = near_i
            st_far[depth, i] = far_i
            i += 1
        st_n[depth] = n
        # ---- 3. the frame's numbers: the far numbers' sum, the least two near numbers and their child
        # the sum saturates: INF when a child's number is INF, else at most INF - 1 (numbers are
        # at most INF, so 64 of them sum within int64); a loop without branches, vectorised
        far_sum = np.int64(0)
        far_max = np.int64(0)
        for i in range(n):
            far_sum += st_far[depth, i]
            far_max = max(far_max, st_far[depth, i])
        # the least and second-least near numbers, ties to the child first in the move order: as
        # keys of the number and the rank, and by selects, not branches (which child is least is
        # unpredictable)
        least = NO_CHILD_KEY
        second = NO_CHILD_KEY
        best = -1
        for i in range(n):
            key = st_near[depth, i] << RANK_BITS | st_rank[depth, i]
            best = i if key < least else best
            second = min(second, max(least, key))
            least = min(least, key)
        # a pending child's numbers: the near one (which the child sums) its legal moves, the far 1
        near0 = K.popcount(st_avail[depth]) - 1
        if pending != K.ZERO:  # the pending children, the same numbers each: the first two count
            far_sum += K.popcount(pending)  # (far numbers of 1: far_max need not see them)
            key = near0 << RANK_BITS | K.lowest_cell(pending)
            best = n if key < least else best  # n: the first pending child, written when entered
            second = min(second, max(least, key))
            least = min(least, key)
            rest = pending & (pending - K.ONE)
            if rest != K.ZERO:
                key = near0 << RANK_BITS | K.lowest_cell(rest)
                second = min(second, max(least, key))
        far = INF if far_max >= INF else min(far_sum, INF - 1)
        near = least >> RANK_BITS
        near2 = second >> RANK_BITS
        best_far = st_far[depth, best] if 0 <= best < n else np.int64(1) if best == n else np.int64(0)
        if n == DECIDED_FOR_MOVER:
            near = np.int64(0)
            far = INF
        elif n == DECIDED_AGAINST_MOVER:
            near = INF
            far = np.int64(0)
        pn, dn = (near, far) if first else (far, near)
        # ---- 4. past a threshold or the budget: the frame's numbers stored, back to the parent
        if pn >= st_th_pn[depth] or dn >= st_th_dn[depth] or counter >= budget:
            work = counter - st_start[depth] + 1
            store(
                recs, filled, st_key_a[depth], st_key_b[depth], q, pn, dn, work, st_marks[depth],
                st_sequence_move[depth],
            )  # fmt: skip
            word, mask = seen_bit(st_hashes[depth])
            seen[word] |= mask
            if depth == 0:
                root_pn, root_dn = pn, dn
            depth -= 1
            if grow and filled[0] * 2 > recs.shape[0]:
                return depth, counter, root_pn, root_dn, True
            continue
        # ---- 5. into the best child: its thresholds (1+eps), the opponent's sequences asked once,
        # a pending child written, the child's images, threats and hash
        th_near = st_th_pn[depth] if first else st_th_dn[depth]
        th_far = st_th_dn[depth] if first else st_th_pn[depth]
        child_near = th_near if near2 >= INF else min(th_near, np.int64(near2 * (1.0 + eps)) + 1)
        child_far = th_far - far + best_far if th_far < INF else INF
        st_last[depth] = best
        d = depth + 1
        if placement is not None and st_opponent_sequence[depth] == SEQUENCE_UNASKED:
            # whether the opponent, were it to move here, has a threat sequence: if not, it has
            # none after any stone of the mover, so the children this frame enters need not ask
            a = st_img[depth, 0]
            b = st_img[depth, 1]
            opponent, mover = (b, a) if first else (a, b)
            found = P.threat_sequence(
                opponent, mover, stones0 + depth, threat_depth, seq_levels, seq_tried, board, forbidden, cap,
                win_masks, masks_by_cell, mask_counts,
            )  # fmt: skip
            st_opponent_sequence[depth] = SEQUENCE_NONE if found < 0 else SEQUENCE_FOUND
            if found >= 0:
                keep_line(st_line, depth, seq_tried, cell_images, K.IDENTITY)
            st_marks[depth] |= OPPONENT_ASKED | (OPPONENT_NONE if found < 0 else K.ZERO)
        if best == n:  # a pending child is entered: written now, unkeyed
            rank = K.lowest_cell(pending)
            st_pending[depth] = pending ^ (K.ONE << np.uint64(rank))
            st_n[depth] = n + 1
            st_moves[depth, n] = order[rank]
            st_rank[depth, n] = rank
            st_sym[depth, n] = UNKEYED
            st_replies[depth, n] = near0
        # the child's images, reordered so that the frame's position is its canonical key:
        # then its children's order depends on the position alone, not on the path to it
        cell = st_moves[depth, best]
        if st_sym[depth, best] == UNKEYED:
            st_ka[depth, best], st_kb[depth, best], st_sym[depth, best] = K.canonical_child(
                st_img[depth], cell_images[cell], on_a, st_limit[depth]
            )
        g = st_sym[depth, best]
        bit = K.ONE << np.uint64(cell)
        for s in range(2 * nsym):
            st_child[s] = st_img[depth, s]
        for s in range(nsym):
            st_child[2 * s + side] |= cell_images[cell, s]
        for s in range(nsym):
            h = compose[s, g]
            st_img[d, 2 * s] = st_child[2 * h]
            st_img[d, 2 * s + 1] = st_child[2 * h + 1]
        avail = (st_avail[depth] ^ bit) | up_bit[cell]
        mover = st_img[depth, side]
        opponent = st_img[depth, 1 - side]
        child_own = st_threats[depth, 1] & ~bit  # the child's mover is the opponent
        made = K.threats_made(mover, opponent, cell, masks_by_cell, mask_counts)
        child_opponent = (st_threats[depth, 0] & ~bit) | made
        if g != 0:  # the child's frame is its canonical image
            avail = K.permute(avail, sym_bytes, g)
            child_own = K.permute(child_own, sym_bytes, g)
            child_opponent = K.permute(child_opponent, sym_bytes, g)
        st_avail[d] = avail
        st_threats[d, 0] = child_own
        st_threats[d, 1] = child_opponent
        st_last[d] = -1
        st_hashes[d] = st_hashes[depth] + orbit_hash[side, cell]
        st_key_a[d] = st_ka[depth, best]
        st_key_b[d] = st_kb[depth, best]
        st_th_pn[d] = child_near if first else child_far
        st_th_dn[d] = child_far if first else child_near
        counter += 1
        st_start[d] = counter
        entering = True
        depth = d
    return depth, counter, root_pn, root_dn, False
