"""The inner solver: depth-first proof-number search (df-pn) with the 1+eps trick, in numba.

The outer search hands every new leaf to this solver with a node budget. It answers one
question ("value >= first-wins", q0, or "value >= draw", q1) with the first player as prover,
in memory, against a transposition table that is a numpy open-addressing array keyed by the
full canonical key (16 bytes, never a truncated hash alone), shared by all leaves of a solve.
A leaf it solves comes back with its proof: the strategy owner's move at every position of the
proof tree where the owner moves, so that a book can be written without searching again.

Table entries keep pn/dn for both questions; what one question proved is used by the other
(proven >= first-wins implies proven >= draw; disproven >= draw implies disproven >= first-wins).
Replacement: within a window of WINDOW slots an entry is replaced by the one with the least work.
"""

from collections import namedtuple

import numba as nb
import numpy as np

from pndb.games import kernels as K

INF = np.int64(1 << 40)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no position has 64 first-player stones
WINDOW = 8
ENTRY_BYTES = 8 + 8 + 4 * 8 + 8
EPS = 0.25
MAX_DEPTH = 65

Table = namedtuple("Table", ["key_a", "key_b", "nums", "work"])  # nums: pn0 dn0 pn1 dn1
# one frame per depth: the position, its thresholds, the node count at entry, its children
# and the children's pn/dn as last read from the table (only the child just searched is read again)
Stack = namedtuple(
    "Stack", ["key_a", "key_b", "th_pn", "th_dn", "start", "n", "last", "moves", "ka", "kb", "status", "pn", "dn"]
)


def new_table(megabytes):
    """A transposition table of at most ``megabytes`` (a power of two of entries)."""
    entries = max(1024, int(megabytes * (1 << 20) // ENTRY_BYTES))
    size = 1 << (entries.bit_length() - 1)
    return Table(
        key_a=np.full(size, EMPTY, np.uint64),
        key_b=np.zeros(size, np.uint64),
        nums=np.ones((size, 4), np.int64),
        work=np.zeros(size, np.int64),
    )


def new_stack():
    return Stack(
        key_a=np.zeros(MAX_DEPTH, np.uint64),
        key_b=np.zeros(MAX_DEPTH, np.uint64),
        th_pn=np.zeros(MAX_DEPTH, np.int64),
        th_dn=np.zeros(MAX_DEPTH, np.int64),
        start=np.zeros(MAX_DEPTH, np.int64),
        n=np.zeros(MAX_DEPTH, np.int64),
        last=np.zeros(MAX_DEPTH, np.int64),
        moves=np.zeros((MAX_DEPTH, 64), np.int64),
        ka=np.zeros((MAX_DEPTH, 64), np.uint64),
        kb=np.zeros((MAX_DEPTH, 64), np.uint64),
        status=np.zeros((MAX_DEPTH, 64), np.int64),
        pn=np.zeros((MAX_DEPTH, 64), np.int64),
        dn=np.zeros((MAX_DEPTH, 64), np.int64),
    )


@nb.njit(cache=True, inline="always")
def home_slot(ka, kb, mask):
    h = ka * np.uint64(0x9E3779B97F4A7C15) ^ (kb + np.uint64(0x632BE59BD9B4E019)) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(31)
    return np.int64(h & np.uint64(mask))


@nb.njit(cache=True)
def find(tab, ka, kb):
    """The slot holding (ka, kb), or -1."""
    mask = tab.key_a.shape[0] - 1
    home = home_slot(ka, kb, mask)
    for j in range(WINDOW):
        s = (home + j) & mask
        if tab.key_a[s] == ka and tab.key_b[s] == kb:
            return s
        if tab.key_a[s] == EMPTY:
            return -1
    return -1


@nb.njit(cache=True)
def store(tab, ka, kb, q, pn, dn, work):
    mask = tab.key_a.shape[0] - 1
    home = home_slot(ka, kb, mask)
    victim = -1
    for j in range(WINDOW):
        s = (home + j) & mask
        if tab.key_a[s] == ka and tab.key_b[s] == kb:
            victim = s
            break
        if tab.key_a[s] == EMPTY:
            victim = s
            break
        if victim < 0 or tab.work[s] < tab.work[victim]:
            victim = s
    if tab.key_a[victim] != ka or tab.key_b[victim] != kb:
        tab.key_a[victim] = ka
        tab.key_b[victim] = kb
        for i in range(4):
            tab.nums[victim, i] = 1
        tab.work[victim] = 0
    tab.nums[victim, 2 * q] = pn
    tab.nums[victim, 2 * q + 1] = dn
    tab.work[victim] += work


@nb.njit(cache=True)
def numbers(tab, ka, kb, q):
    """(pn, dn) of a stored position for question q; (1, 1) when unknown."""
    s = find(tab, ka, kb)
    if s < 0:
        return np.int64(1), np.int64(1)
    if q == 1 and tab.nums[s, 0] == 0:
        return np.int64(0), INF
    if q == 0 and tab.nums[s, 3] == 0:
        return INF, np.int64(0)
    return tab.nums[s, 2 * q], tab.nums[s, 2 * q + 1]


@nb.njit(cache=True, inline="always")
def terminal_numbers(state, q):
    """(pn, dn) of a decided status: q0 asks outcome >= first-wins (2), q1 outcome >= draw (1)."""
    outcome = K.OUTCOME[state]
    if outcome >= (2 if q == 0 else 1):
        return np.int64(0), INF
    return INF, np.int64(0)


@nb.njit(cache=True, inline="always")
def add(x, y):
    if x >= INF or y >= INF:
        return INF
    return min(x + y, INF - 1)


@nb.njit(cache=True)
def solve_one(ka, kb, q, t, tab, st, budget, eps):
    """(pn, dn, nodes) of an ongoing position after at most ``budget`` nodes of df-pn.

    The classic recursive df-pn (Nagai) written with an explicit stack of frames, one per depth
    (numba's cached recursive functions are not reliable): a frame searches its position until
    pn >= its pn threshold or dn >= its dn threshold, each time descending into the most-proving
    child with thresholds by the 1+eps trick (Pawlewicz and Lew). A frame reads its children's
    numbers from the table once, and afterwards only the child it has just searched: numbers
    read earlier may be stale but never wrong about a proof.
    """
    counter = 1
    depth = 0
    st.key_a[0] = ka
    st.key_b[0] = kb
    st.th_pn[0] = INF
    st.th_dn[0] = INF
    st.start[0] = counter
    st.last[0] = -1
    st.n[0] = K.children_into(ka, kb, t, True, st.moves[0], st.ka[0], st.kb[0], st.status[0])
    while depth >= 0:
        first = K.first_to_move(st.key_a[depth], st.key_b[depth])
        cka = st.ka[depth]
        ckb = st.kb[depth]
        cst = st.status[depth]
        cpns = st.pn[depth]
        cdns = st.dn[depth]
        if st.last[depth] < 0:
            for i in range(st.n[depth]):
                if cst[i] != K.ONGOING:
                    cpns[i], cdns[i] = terminal_numbers(cst[i], q)
                else:
                    cpns[i], cdns[i] = numbers(tab, cka[i], ckb[i], q)
        else:
            i = st.last[depth]
            cpns[i], cdns[i] = numbers(tab, cka[i], ckb[i], q)
        # OR node (first player moves): pn = min, dn = sum; AND node: the other way round.
        # "near" is the number minimised at this node, "far" the one summed.
        near = INF
        far = np.int64(0)
        near2 = INF
        best = -1
        best_far = np.int64(0)
        for i in range(st.n[depth]):
            cnear, cfar = (cpns[i], cdns[i]) if first else (cdns[i], cpns[i])
            far = add(far, cfar)
            if cnear < near:
                near2 = near
                near = cnear
                best = i
                best_far = cfar
            elif cnear < near2:
                near2 = cnear
        pn, dn = (near, far) if first else (far, near)
        if pn >= st.th_pn[depth] or dn >= st.th_dn[depth] or counter >= budget:
            store(tab, st.key_a[depth], st.key_b[depth], q, pn, dn, counter - st.start[depth] + 1)
            depth -= 1
            continue
        th_near = st.th_pn[depth] if first else st.th_dn[depth]
        th_far = st.th_dn[depth] if first else st.th_pn[depth]
        child_near = th_near if near2 >= INF else min(th_near, np.int64(near2 * (1.0 + eps)) + 1)
        child_far = th_far - far + best_far if th_far < INF else INF
        st.last[depth] = best
        d = depth + 1
        st.last[d] = -1
        st.key_a[d] = cka[best]
        st.key_b[d] = ckb[best]
        st.th_pn[d] = child_near if first else child_far
        st.th_dn[d] = child_far if first else child_near
        counter += 1
        st.start[d] = counter
        st.n[d] = K.children_into(cka[best], ckb[best], t, True, st.moves[d], st.ka[d], st.kb[d], st.status[d])
        depth = d
    pn, dn = numbers(tab, ka, kb, q)
    return pn, dn, counter


@nb.njit(cache=True)
def solve_many(keys_a, keys_b, q, t, tab, st, budget, eps, stop_on_proof, stop_on_disproof):
    """Solve positions in turn; stop after the first proven (or disproven) one when asked.

    Returns (pn, dn, nodes, count): only the first ``count`` positions were searched.
    """
    n = keys_a.shape[0]
    pns = np.ones(n, np.int64)
    dns = np.ones(n, np.int64)
    nodes = np.zeros(n, np.int64)
    for i in range(n):
        pns[i], dns[i], nodes[i] = solve_one(keys_a[i], keys_b[i], q, t, tab, st, budget, eps)
        if (stop_on_proof and pns[i] == 0) or (stop_on_disproof and dns[i] == 0):
            return pns, dns, nodes, i + 1
    return pns, dns, nodes, n


@nb.njit(cache=True)
def favourable(state, ka, kb, q, proven, tab):
    """True when a child is known to be won for the proof's owner (proven: first, else second)."""
    if state != K.ONGOING:
        pn, dn = terminal_numbers(state, q)
    else:
        pn, dn = numbers(tab, ka, kb, q)
    return pn == 0 if proven else dn == 0


@nb.njit(cache=True)
def extract_proof(ka, kb, q, proven, t, tab, st, eps, max_size):
    """The owner's move at each owner-to-move position of the proof (or disproof) tree of (ka, kb).

    Returns (count, keys_a, keys_b, moves); count -1 when the tree has more than max_size owner
    positions. A position whose proof was evicted from the table is searched again.
    """
    out_a = np.empty(max_size, np.uint64)
    out_b = np.empty(max_size, np.uint64)
    out_m = np.empty(max_size, np.int64)
    cap = 1024
    while cap < 8 * max_size:
        cap *= 2
    seen_a = np.full(cap, EMPTY, np.uint64)
    seen_b = np.zeros(cap, np.uint64)
    stack_a = np.empty(MAX_DEPTH * 64, np.uint64)
    stack_b = np.empty(MAX_DEPTH * 64, np.uint64)
    moves = np.empty(64, np.int64)
    ca = np.empty(64, np.uint64)
    cb = np.empty(64, np.uint64)
    cs = np.empty(64, np.int64)
    stack_a[0] = ka
    stack_b[0] = kb
    sp = 1
    count = 0
    seen = 0
    while sp > 0:
        sp -= 1
        a = stack_a[sp]
        b = stack_b[sp]
        s = home_slot(a, b, cap - 1)
        while seen_a[s] != EMPTY and not (seen_a[s] == a and seen_b[s] == b):
            s = (s + 1) & (cap - 1)
        if seen_a[s] != EMPTY:
            continue
        seen_a[s] = a
        seen_b[s] = b
        seen += 1
        if seen * 2 > cap:
            return -1, out_a, out_b, out_m
        n = K.children_into(a, b, t, True, moves, ca, cb, cs)
        if K.first_to_move(a, b) == proven:
            found = -1
            for attempt in range(2):
                for i in range(n):
                    if favourable(cs[i], ca[i], cb[i], q, proven, tab):
                        found = i
                        break
                if found >= 0:
                    break
                solve_one(a, b, q, t, tab, st, INF, eps)
                n = K.children_into(a, b, t, True, moves, ca, cb, cs)
            if found < 0:
                return -2, out_a, out_b, out_m
            if count >= max_size:
                return -1, out_a, out_b, out_m
            out_a[count] = a
            out_b[count] = b
            out_m[count] = moves[found]
            count += 1
            if not K.FIRST_WON <= cs[found] <= K.DRAW:  # not over yet
                stack_a[sp] = ca[found]
                stack_b[sp] = cb[found]
                sp += 1
        else:
            for i in range(n):
                if not K.FIRST_WON <= cs[i] <= K.DRAW:
                    stack_a[sp] = ca[i]
                    stack_b[sp] = cb[i]
                    sp += 1
    return count, out_a, out_b, out_m


class InnerSolver:
    """One solve's inner df-pn: its table, its stack and its budget."""

    def __init__(self, game, node_budget, table_mb):
        self.tables = game.tables
        self.budget = int(node_budget)
        self.table = new_table(table_mb)
        self.stack = new_stack()
        self.nodes = 0

    def solve(self, keys_a, keys_b, q, stop_on_proof=False, stop_on_disproof=False):
        """(pn, dn, nodes) arrays for the ongoing positions (canonical keys) that were searched:
        all of them, or those up to the first proven (disproven) one when asked to stop there."""
        pns, dns, nodes, count = solve_many(
            np.asarray(keys_a, np.uint64), np.asarray(keys_b, np.uint64), q,
            self.tables, self.table, self.stack, self.budget, EPS, stop_on_proof, stop_on_disproof,
        )  # fmt: skip
        self.nodes += int(nodes.sum())
        return pns[:count], dns[:count], nodes[:count]

    def proof(self, ka, kb, q, proven):
        """(keys_a, keys_b, moves) of the owner's positions in the proof of a solved position."""
        size = 1 << 12
        while True:
            count, out_a, out_b, out_m = extract_proof(
                np.uint64(ka), np.uint64(kb), q, proven, self.tables, self.table, self.stack, EPS, size
            )
            if count >= 0:
                return out_a[:count], out_b[:count], out_m[:count]
            if count == -2:
                raise RuntimeError("inner proof extraction found a solved position without a proof")
            size *= 4
