"""Proof extraction: the owner's move (or a certificate) at each owner-to-move position of a
solved position's proof tree, read from the table, searched again where the table no longer
knows it, and appended to record buffers; the positions read are kept in a hash set of their
own (so that a proof is read once and never depends on what the table keeps)."""

from typing import NamedTuple

import numba as nb
import numpy as np

from pndb.games.placement import kernels as K
from pndb.games.placement import patterns as P
from pndb.contracts import CERTIFIED
from pndb.inner.frames import MAX_DEPTH, solve_one
from pndb.inner.knowledge import knowledge_asked, knowledge_decides
from pndb.inner.table import (
    EMPTY, INF, KNOWLEDGE_DECIDED, NO_SEQUENCE, REPORTED, WORK_SHIFT, entry_numbers, entry_sequence,
    home_block, key_hash, lookup, mark_reported, numbers, prefetch,
)


NO_LIMIT = np.int64(1 << 62)  # a node budget that is never reached


class ProofBuffers(NamedTuple):
    """Proof records as extract_proof appends them: arrays doubled when full, and the counts."""

    key_a: np.ndarray  # uint64
    key_b: np.ndarray  # uint64
    move: np.ndarray  # int64
    certificate_size: np.ndarray  # int64
    certificates: np.ndarray  # uint8
    used: np.ndarray  # int64[2]: records, certificate bytes


@nb.njit(cache=True, inline="always")
def decided_good(state, q, proven):
    """Whether a decided (not ongoing) status is won for the proof's owner (proven: first,
    else second)."""
    return (K.OUTCOME[state] >= 2 - q) == proven


@nb.njit(cache=True, _nrt=False)
def settled_by_children(n, cs, q, proven, owner):
    """Whether the children's statuses alone settle a position for the proof's owner: one of
    the owner's stones wins now or next, or (the other player to move) every reply loses so."""
    for i in range(n):
        if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
            if owner:
                return True
        elif not owner:
            return False
    return not owner


@nb.njit(cache=True, _nrt=False)
def decided_good_child(n, cs, q, proven):
    """A child whose status alone makes it won for the proof's owner (a stone that wins now or
    next, or a draw that reaches the owner's goal); -1 when none."""
    for i in range(n):
        if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
            return i
    return -1


@nb.njit(cache=True, _nrt=False)
def known_good_child(n, cs, ca, cb, q, proven, recs):
    """The ongoing child the table knows won for the proof's owner with the least proof to
    read: the one proven with the least work recorded (a search that took fewer nodes leaves a
    smaller proof); -1 when none is known. The children's table windows are prefetched first,
    so that their reads overlap."""
    for i in range(n):
        if cs[i] == K.ONGOING:
            prefetch(recs, home_block(ca[i], cb[i], recs.shape[0] - 1))
    best = -1
    least = NO_LIMIT
    for i in range(n):
        if cs[i] != K.ONGOING:
            continue
        s, nums, meta = lookup(recs, ca[i], cb[i])
        if s < 0:
            continue
        pn, dn = entry_numbers(meta, nums, q)
        work = np.int64(meta >> WORK_SHIFT)
        if ((pn == 0) if proven else (dn == 0)) and work < least:
            best, least = i, work
    return best


@nb.njit(cache=True)
def grown(x, size):
    out = np.empty(size, x.dtype)
    for i in range(x.shape[0]):  # (a loop: a slice assignment compiles numba's shape-error message)
        out[i] = x[i]
    return out


@nb.njit(cache=True)
def new_proof_buffers():
    return ProofBuffers(
        np.empty(64, np.uint64),
        np.empty(64, np.uint64),
        np.empty(64, np.int64),
        np.empty(64, np.int64),
        np.empty(1024, np.uint8),
        np.zeros(2, np.int64),
    )


@nb.njit(cache=True)
def roomier(out, size):
    """The buffers ``out``, or larger ones holding the same records, with room for one more
    record and ``size`` more certificate bytes."""
    count, used = out.used[0], out.used[1]
    if count < out.key_a.shape[0] and used + size <= out.certificates.shape[0]:
        return out
    more = out.key_a.shape[0] * (2 if count == out.key_a.shape[0] else 1)
    room = max(out.certificates.shape[0], 2 * (used + size))
    return ProofBuffers(
        grown(out.key_a, more), grown(out.key_b, more), grown(out.move, more),
        grown(out.certificate_size, more), grown(out.certificates, room), out.used,
    )  # fmt: skip


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for the buffers
def record(out, a, b, move, cert, size):
    """Append the proof record (a, b, move) with the certificate cert[:size] (size 0: none) to
    buffers with room for it (roomier)."""
    count, used = out.used[0], out.used[1]
    out.key_a[count] = a
    out.key_b[count] = b
    out.move[count] = move
    out.certificate_size[count] = size
    for i in range(size):
        out.certificates[used + i] = cert[i]
    out.used[0] = count + 1
    out.used[1] = used + size


@nb.njit(cache=True, _nrt=False)
def set_insert(seen, a, b):
    """Add (a, b) to an open-addressing set of pairs (EMPTY marks free slots; seen[0, 0] counts
    the entries, slot 0 holds no pair); False when it was there already."""
    cap = seen.shape[0]
    s = max(1, np.int64(key_hash(a, b) & np.uint64(cap - 1)))
    while seen[s, 0] != EMPTY:
        if seen[s, 0] == a and seen[s, 1] == b:
            return False
        s = max(1, (s + 1) & (cap - 1))
    seen[s, 0] = a
    seen[s, 1] = b
    seen[0, 0] += np.uint64(1)
    return True


@nb.njit(cache=True)
def new_set(cap):
    seen = np.full((cap, 2), EMPTY, np.uint64)
    seen[0, 0] = np.uint64(0)
    return seen


@nb.njit(cache=True)
def larger_set(seen):
    """The set with twice the slots, the same pairs."""
    bigger = new_set(2 * seen.shape[0])
    for i in range(1, seen.shape[0]):
        if seen[i, 0] != EMPTY:
            set_insert(bigger, seen[i, 0], seen[i, 1])
    return bigger


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for its arrays
def sequence_move(a, b, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts):
    """The cell that starts a threat sequence winning for the player to move at (a, b), or -1:
    the search decides such positions without children, and their proof is the sequence,
    walked as any other proof. (The arrays and numbers of P.threat_sequence; never under
    gravity.)"""
    first = K.first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    if threat_depth == 0 or K.threat_cells(theirs, mine, win_masks) != K.ZERO:
        return -1
    stones = K.popcount(a | b)
    return P.threat_sequence(
        mine, theirs, stones, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts
    )


WALK_DONE = 0  # walk_proof's answers: every position of the proof is read,
WALK_ROOM = 1  # the record buffers or the set of positions read must grow first,
WALK_SEARCH = 2  # the owner's position it stopped at has no winning child the table knows


class ProofWalk(NamedTuple):
    """extract_proof's walk: the positions still to read, and the position walk_proof stopped
    at (WALK_SEARCH) with its children."""

    stack_a: np.ndarray  # uint64[MAX_DEPTH * 64]
    stack_b: np.ndarray
    at: np.ndarray  # int64[2]: the stack's size; the number of children of the position stopped at
    stopped: np.ndarray  # uint64[2]: the position walk_proof stopped at (WALK_SEARCH)
    moves: np.ndarray  # int64[64]: the moves of the position read last (K.statuses_into)
    ca: np.ndarray  # uint64[64]: the keys of its children (those walked on; all at a stop)
    cb: np.ndarray
    cs: np.ndarray  # int64[64]: their statuses
    img: np.ndarray  # uint64[2 * nsym]: scratch for K.key_images
    near: np.ndarray  # int64[nsym]: scratch for K.keys_into


@nb.njit(cache=True)
def new_proof_walk(ka, kb, nsym):
    w = ProofWalk(
        np.empty(MAX_DEPTH * 64, np.uint64), np.empty(MAX_DEPTH * 64, np.uint64), np.zeros(2, np.int64),
        np.zeros(2, np.uint64),
        np.empty(64, np.int64), np.empty(64, np.uint64), np.empty(64, np.uint64), np.empty(64, np.int64),
        np.empty(2 * nsym, np.uint64), np.empty(nsym, np.int64),
    )  # fmt: skip
    w.stack_a[0] = ka
    w.stack_b[0] = kb
    w.at[0] = 1
    return w


@nb.njit(cache=True, _nrt=False)
def push_move(w, out, a, b, found, cert):
    """Record the owner's move ``found`` (a child index of w) at (a, b) and push the child
    unless the game is over in it. (``cert``: any uint8 array; a move has no certificate.)"""
    record(out, a, b, w.moves[found], cert, np.int64(0))
    if not K.FIRST_WON <= w.cs[found] <= K.DRAW:
        w.stack_a[w.at[0]] = w.ca[found]
        w.stack_b[w.at[0]] = w.cb[found]
        w.at[0] += 1


@nb.njit(cache=True, inline="always")  # inlined into run_job, as solve_one is
def extract_proof(ka, kb, q, proven, t, rules, placement, steps, tab, st, eps, out, pair_budget):
    """Append to the buffers ``out`` the owner's move at each owner-to-move position of the
    proof (or disproof) tree of the solved position (ka, kb), and CERTIFIED with the
    certificate instead of a move at each position knowledge decides.

    The proof is read from the table where it still is. Where it is not, the position is
    searched again; if the move is still not in the table after that (a small table evicts it
    while it searches), each child is searched on its own, most promising first, and the first
    one found won for the owner is taken: what a search returns never depends on the table
    keeping it. Returns (out, nodes, table).

    A position whose proof an earlier extraction handed out (its REPORTED mark, set as each
    position is read; by the end of the call all of its proof is out) is not read again: the
    outer search stored that proof, and a search that goes through a proven position would
    otherwise hand the same records back again and again. The mark lives with the table entry:
    an entry replaced has lost it, and its proof is handed out once more. (In a table shared by
    workers, each keeps its marks in a table of its own: Table.reported.)
    """
    seen = new_set(np.int64(1024))
    w = new_proof_walk(ka, kb, t.cell_images.shape[1])
    nodes = 0
    while True:
        event = walk_proof(
            q, proven, t, rules, placement, tab.recs, tab.reported, tab.reported_filled, st, out, seen, w,
            pair_budget,
        )  # fmt: skip
        if event == WALK_DONE:
            return out, nodes, tab
        if event == WALK_ROOM:
            out = roomier(out, st.certificate.shape[0])
            if seen[0, 0] * np.uint64(2) + np.uint64(2) > np.uint64(seen.shape[0]):
                seen = larger_set(seen)
            continue
        # the owner's position (a, b) is searched again; if the move is still not in the table
        # after that, each child on its own, most promising first
        a, b, n = w.stopped[0], w.stopped[1], w.at[1]
        ca, cb, cs = w.ca, w.cb, w.cs
        _, _, used, tab = solve_one(
            a, b, q, t, rules, placement, steps, tab, st, NO_LIMIT, eps, pair_budget, INF, INF
        )
        nodes += used
        found = known_good_child(n, cs, ca, cb, q, proven, tab.recs)
        if found < 0:
            near = np.empty(n, np.int64)
            for i in range(n):
                pn, dn = numbers(tab.recs, ca[i], cb[i], q)
                near[i] = pn if proven else dn
            for i in np.argsort(near, kind="mergesort"):
                if cs[i] != K.ONGOING:
                    continue
                pn, dn, used, tab = solve_one(
                    ca[i], cb[i], q, t, rules, placement, steps, tab, st, NO_LIMIT, eps, pair_budget, INF, INF
                )
                nodes += used
                if (pn == 0) if proven else (dn == 0):
                    found = i
                    break
        if found < 0:
            raise RuntimeError("inner proof extraction: a position taken as solved is not")
        push_move(w, out, a, b, found, st.certificate)


@nb.njit(cache=True)
def walk_proof(q, proven, t, rules, placement, recs, marks, marks_filled, st, out, seen, w, pair_budget):
    """extract_proof's walk over the positions of w's stack (each read once: ``seen``), until
    all are read (WALK_DONE), the buffers ``out`` or ``seen`` need room (WALK_ROOM), or an
    owner's position needs a search (WALK_SEARCH: w.stopped holds it, w its children). It runs
    with arrays that never change (extract_proof grows them and searches between its calls):
    an array variable a loop reassigns costs atomic reference counts at every use, which took
    half of the extraction's time. ``rules``, ``placement``: as search_frames'; ``marks``,
    ``marks_filled``: where this process keeps its REPORTED marks (Table.reported)."""
    reported = REPORTED << np.uint64(q)
    # a pairing only disproves q0 and proves q1: for the other owner it is not worth asking
    ask = pair_budget if t.gravity[0] == 1 or proven == (q == 1) else 0
    stack_a, stack_b, at = w.stack_a, w.stack_b, w.at
    moves, ca, cb, cs, img, near = w.moves, w.ca, w.cb, w.cs, w.img, w.near
    cert = st.certificate
    gravity = t.gravity[0] != 0
    threat_depth = 0 if gravity else st.threat_depth[0]
    levels, tried, sym_bytes, cell_images = st.seq_levels, st.seq_tried, t.sym_bytes, t.cell_images
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    win_masks, by_cell, counts = t.win_masks, t.masks_by_cell, t.mask_counts
    sp = at[0]
    while sp > 0:
        if (
            out.used[0] == out.key_a.shape[0]
            or out.used[1] + cert.shape[0] > out.certificates.shape[0]
            or seen[0, 0] * np.uint64(2) + np.uint64(2) > np.uint64(seen.shape[0])
        ):
            at[0] = sp
            return WALK_ROOM
        sp -= 1
        a = stack_a[sp]
        b = stack_b[sp]
        if not set_insert(seen, a, b):
            continue
        s, nums, meta = lookup(recs, a, b)
        if mark_reported(recs, s, nums, meta, a, b, reported, marks, marks_filled):
            continue
        owner = K.first_to_move(a, b) == proven
        # knowledge is asked where the search decided by it (for either question: a fact of one
        # may answer the other), or where the table does not say how the search decided
        # (positions it did not store, or evicted), unless the children decide at once (a stone
        # of the owner that wins now or next; replies that all lose)
        asked = ask != 0 and knowledge_asked(
            a, b, t.cell_mask, t.gravity, t.rules_limits, st.knowledge_skip, True
        )
        # the children's statuses, unless at the owner's position none can decide (no stone
        # completes a pattern, a draw is not the owner's goal) and a threat sequence may give
        # the move: they are read below if it does not
        statuses = not owner or asked or threat_depth == 0 or decided_good(K.DRAW, q, proven)
        if not statuses:  # the owner moves: the first player when it proves
            mine, theirs = (a, b) if proven else (b, a)
            statuses = K.threat_cells(mine, theirs, win_masks) & K.legal_mask(a, b, t) != K.ZERO
        n = K.statuses_into(a, b, t, moves, cs) if statuses else 0
        if asked and not settled_by_children(n, cs, q, proven, owner):
            if s < 0 or meta & (KNOWLEDGE_DECIDED * np.uint64(3)) != K.ZERO:
                verdict, _, size = knowledge_decides(
                    a, b, q, t, rules, placement, ask, recs, cert, st.knowledge_tries, st.pairs, st.cover,
                    True,
                )  # fmt: skip
                if verdict == (1 if proven else -1):
                    record(out, a, b, np.int64(CERTIFIED), cert, size)
                    continue
        if owner:
            # a stone whose status decides; else a threat sequence, which decides most of the
            # positions the search proved without children: the one the search stored, or one
            # searched for here (unless the table says there is none); else the child the table
            # knows, which needs every child's key
            found = decided_good_child(n, cs, q, proven)
            cell = -1 if found >= 0 or s < 0 else entry_sequence(meta)
            unknown = s < 0 or meta & NO_SEQUENCE == K.ZERO
            if placement is not None and found < 0 and cell < 0 and unknown:
                cell = sequence_move(
                    a, b, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts
                )  # fmt: skip
            if not statuses and cell >= 0:  # the sequence's stone: the game goes on after it
                moves[0], cs[0], n = cell, K.ONGOING, 1
            elif not statuses:
                n = K.statuses_into(a, b, t, moves, cs)
            for i in range(n if found < 0 and cell >= 0 else 0):
                if moves[i] == cell:
                    found = i
                    break
            if found >= 0 and not K.FIRST_WON <= cs[found] <= K.DRAW:  # the child walked on: its key
                on_a, limit = K.key_images(a, b, sym_bytes, cell_images, img)
                ca[found], cb[found], _ = K.canonical_child(img, cell_images[moves[found]], on_a, limit)
            if found < 0:
                n = K.keys_into(a, b, t, n, moves, ca, cb, cs, img, near)
                found = known_good_child(n, cs, ca, cb, q, proven, recs)
            at[0] = sp
            if found < 0:
                w.stopped[0], w.stopped[1], at[1] = a, b, n
                return WALK_SEARCH
            push_move(w, out, a, b, found, st.certificate)
            sp = at[0]
        else:
            imaged = False  # the keys of the replies walked on, from the images made once
            on_a = limit = K.ZERO
            for i in range(n):
                # a reply whose status decides it for the owner (the game over, or the owner
                # to move completing a pattern) needs no record: a reader finds that move itself
                if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
                    continue
                if not K.FIRST_WON <= cs[i] <= K.DRAW:
                    if not imaged:
                        on_a, limit = K.key_images(a, b, sym_bytes, cell_images, img)
                        imaged = True
                    ca[i], cb[i], _ = K.canonical_child(img, cell_images[moves[i]], on_a, limit)
                    stack_a[sp] = ca[i]
                    stack_b[sp] = cb[i]
                    sp += 1
    at[0] = 0
    return WALK_DONE
