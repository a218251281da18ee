"""Numba kernels for placement games on at most 64 cells.

A position is two uint64 bitboards: ``a`` (first player's stones) and ``b`` (second
player's stones); bit i is cell i (row-major on the game's bounding grid). Every rule
difference between games is data in a :class:`Tables` tuple built by ``pndb.games.placement.game``,
so one compiled set of kernels serves every placement game.

Loops over an array index it (``for i in range(win_masks.shape[0])``) rather than iterate it
(``for m in win_masks``): numba's array iterator holds a counted reference, and the loop it
makes is not vectorised (threats_of_both: 68 ns against 22 ns a call on qango6's patterns).
"""

from collections import namedtuple

from pndb.jit import njit
import numpy as np

from pndb.values import Status

# the codes of values.Status as plain ints, which numba compiles in as constants
ONGOING = int(Status.ONGOING)
FIRST_WON = int(Status.FIRST_WON)
SECOND_WON = int(Status.SECOND_WON)
DRAW = int(Status.DRAW)
# ongoing, but the player to move completes a pattern with the next stone: decided one ply early
FIRST_WINS_NEXT = int(Status.FIRST_WINS_NEXT)
SECOND_WINS_NEXT = int(Status.SECOND_WINS_NEXT)
# status -> outcome (second-wins 0 < draw 1 < first-wins 2) of a decided status
OUTCOME = np.array([-1, 2, 0, 1, 2, 0], np.int64)

ZERO = np.uint64(0)
ONE = np.uint64(1)
BYTE = np.uint64(255)
# Symmetry 0 maps every cell to itself. An int64, not the literal 0: numba compiles a kernel
# once per type of its arguments, and a literal argument is a type of its own (Literal[int](0)).
IDENTITY = np.int64(0)

Tables = namedtuple(
    "Tables",
    [
        "cell_mask",  # uint64[1]: the playable cells
        "win_masks",  # uint64[n]: every (minimal) win pattern
        "masks_by_cell",  # uint64[64, k]: win patterns through each cell, zero-padded
        "mask_counts",  # int64[64]: how many rows of masks_by_cell are used
        "sym_bytes",  # uint64[nsym, 8, 256]: image of byte j with value v under symmetry s
        "cell_images",  # uint64[64, nsym]: the bit of cell i's image under symmetry s (one row a cell)
        "first_forbidden",  # uint64[1]: cells the first stone of the game may not take
        "disc_cap",  # int64[1]: the game is drawn once this many stones are down
        "gravity",  # int64[1]: 1 when a stone drops to the lowest empty cell of a column
        "columns",  # int64[w, h]: cells of each column from the bottom up (-1 padded)
        "order",  # int64[ncells]: playable cells, best first (static move ordering)
        "rank_bytes",  # uint64[1, 8, 256]: as sym_bytes, a cell's image the bit of its rank in
        # order: permute(mask, rank_bytes, 0) holds the mask's cells in move order, lowest first
        "rules_lines",  # uint64[k]: Connect Four's groups for Allis' rules (none: no rules)
        "rules_limits",  # int64[2]: the rules' chosen-set nodes, the most empty squares they try
    ],
)


def bit_count(x):
    """popcount in plain Python, for interpreted kernels: a tenth of the time of its numpy-scalar
    arithmetic (a quick-started tictactoe counts bits some 3,500 times)."""
    return np.int64(int(x).bit_count())


@njit(cache=True, inline="always", python=bit_count)
def popcount(x):
    """Number of set bits of a uint64."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def lowest_cell(x):
    """Index of the lowest set bit of a non-zero uint64."""
    return popcount((x & (~x + ONE)) - ONE)


@njit(cache=True)
def first_to_move(a, b):
    """True when the first player is to move (equal stone counts)."""
    return popcount(a) == popcount(b)


@njit(cache=True)
def permute(x, sym_bytes, s):
    """Image of bitboard x under symmetry s, eight table lookups."""
    r = ZERO
    for j in range(8):
        r |= sym_bytes[s, j, (x >> np.uint64(8 * j)) & BYTE]
    return r


@njit(cache=True)
def canonical(a, b, sym_bytes):
    """(key_a, key_b, s): the smallest (a, b) image over the group and the symmetry giving it."""
    best_a = a
    best_b = b
    best_s = 0
    for s in range(1, sym_bytes.shape[0]):
        pa = permute(a, sym_bytes, s)
        if pa > best_a:
            continue
        pb = permute(b, sym_bytes, s)
        if pa < best_a or pb < best_b:
            best_a = pa
            best_b = pb
            best_s = s
    return best_a, best_b, best_s


@njit(cache=True, inline="always")
def images_into(a, b, sym_bytes, cell_images, img):
    """Write the images of (a, b) under every symmetry s into img[2s], img[2s + 1]: the OR of
    its stones' images (cell_images); on a board with more than four stones per symmetry, its
    bytes' images (permute), which cost the same for any number of stones. (Qango 6's positions
    of 3 to 11 stones: 37 ns against 143 ns by bytes.)"""
    nsym = cell_images.shape[1]
    if popcount(a | b) > 4 * nsym:
        for s in range(nsym):
            img[2 * s] = permute(a, sym_bytes, s)
            img[2 * s + 1] = permute(b, sym_bytes, s)
        return
    for s in range(2 * nsym):
        img[s] = ZERO
    or_stone_images(a, cell_images, img, 0)
    or_stone_images(b, cell_images, img, 1)


@njit(cache=True, inline="always")
def or_stone_images(x, cell_images, img, half):
    """OR the images of the stones ``x`` into img[2s + half] for each symmetry s (called once
    for each half, so that no stone asks which half it is in)."""
    while x != ZERO:
        cell = lowest_cell(x)
        x &= x - ONE
        for s in range(cell_images.shape[1]):
            img[2 * s + half] |= cell_images[cell, s]


@njit(cache=True, inline="always")
def own_key_below(img):
    """The bound under which a child keeps its parent's orientation: a stone whose bit in the a
    half of the position's own image (images_into) is less than it (or a stone of the second
    player, 0 there) makes a child whose canonical key is that image, with symmetry 0; 0 when
    another image's a half is not greater than the position's.

    It is the least, over the other images, of the highest bit where their a half differs from
    the position's (where theirs has the stone): above that bit the two agree, and a stone
    below it leaves the position's a half less than the other's with whatever stone the other
    gains, and keys compare the a halves first. Most children of a position that is its own
    key need one image, not one per symmetry."""
    limit = ~ZERO
    for s in range(1, img.shape[0] // 2):
        if img[2 * s] <= img[0]:
            return ZERO
        x = img[2 * s] ^ img[0]
        x |= x >> np.uint64(1)
        x |= x >> np.uint64(2)
        x |= x >> np.uint64(4)
        x |= x >> np.uint64(8)
        x |= x >> np.uint64(16)
        x |= x >> np.uint64(32)
        limit = min(limit, x ^ (x >> np.uint64(1)))
    return limit


@njit(cache=True, inline="always")
def key_images(a, b, sym_bytes, cell_images, img):
    """Write the images of a position that is its own key into ``img`` (images_into) and return
    what canonical_child takes besides them for each of its children: (on_a, limit)."""
    images_into(a, b, sym_bytes, cell_images, img)
    return (~ZERO if first_to_move(a, b) else ZERO), own_key_below(img)


@njit(cache=True, inline="always")
def canonical_child(img, sym, on_a, limit):
    """(key_a, key_b, s): the canonical key of a child and the symmetry s mapping the child to
    it, from its parent's images (images_into) and the images sym[s] of the new stone's bit:
    on_a all ones when the stone is the first player's, else 0; ``limit``: the parent's
    own_key_below. A child costs one OR and compare per symmetry, or none below the limit."""
    best_a = img[0] | (sym[0] & on_a)
    best_b = img[1] | (sym[0] & ~on_a)
    best_s = 0
    if sym[0] & on_a < limit:
        return best_a, best_b, best_s
    for s in range(1, sym.shape[0]):
        pa = img[2 * s] | (sym[s] & on_a)
        if pa > best_a:
            continue
        pb = img[2 * s + 1] | (sym[s] & ~on_a)
        if pa < best_a or pb < best_b:
            best_a = pa
            best_b = pb
            best_s = s
    return best_a, best_b, best_s


@njit(cache=True, inline="always")
def near_symmetries(img, first, near):
    """The symmetries s that map the position to itself, written into ``near`` as s, and those
    that map it to itself but for one stone of the player to move, which goes to an empty cell,
    as -s (``img``: its images, images_into; ``near``: int64[nsym]); returns how many. Only
    these map one child to another (twin_cells): with none, no child repeats another. A list,
    not a mask of symmetry bits: a group may have more than 64 symmetries, and a shift by 64 or
    more wraps around in numba (symmetry 64 + s then stood for s, and children that repeat no
    other were left out)."""
    mine = img[0] if first else img[1]
    theirs = img[1] if first else img[0]
    count = 0
    for s in range(1, img.shape[0] // 2):
        ma, mb = (img[2 * s], img[2 * s + 1]) if first else (img[2 * s + 1], img[2 * s])
        if mb == theirs:
            changed = popcount(ma ^ mine)  # even: the images of a set of stones are as many
            if changed == 0 or changed == 2:
                near[count] = s if changed == 0 else -s
                count += 1
    return count


@njit(cache=True, inline="always")
def twin_cells(img, first, cell_images, cell, near, count):
    """The cells whose stone of the player to move makes a child that a symmetry maps to the
    child of a stone on ``cell`` (its own cell among them, or not), from the ``count``
    symmetries near_symmetries wrote into ``near``. A fixed symmetry s maps that child to the
    one of the image of the cell; a moved one, which takes the mover's stone x to the empty
    cell y, maps it to the child of y when the cell's image is x."""
    mine = img[0] if first else img[1]
    twins = ZERO
    for i in range(count):
        s = near[i]
        if s > 0:
            twins |= cell_images[cell, s]
        else:
            image = cell_images[cell, -s]
            ma = img[-2 * s] if first else img[-2 * s + 1]
            if image == mine & ~ma:
                twins |= ma & ~mine
    return twins


@njit(cache=True)
def wins_with(bits, cell, masks_by_cell, mask_counts):
    """True when ``bits`` (which holds ``cell``) completes a win pattern through ``cell``."""
    for j in range(mask_counts[cell]):
        m = masks_by_cell[cell, j]
        if bits & m == m:
            return True
    return False


@njit(cache=True)
def has_win(bits, win_masks):
    """True when ``bits`` completes any win pattern."""
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        if bits & m == m:
            return True
    return False


@njit(cache=True)
def available(a, b, t):
    """Bitboard of the cells a stone could take, before the first-move restriction."""
    return available_cells(a, b, t.cell_mask[0], t.gravity[0] != 0, t.columns)


@njit(cache=True, inline="always")
def available_cells(a, b, board, gravity, columns):
    """available() from the arrays it reads (``board``: the playable cells)."""
    occupied = a | b
    if not gravity:
        return board & ~occupied
    legal = ZERO
    for c in range(columns.shape[0]):
        for r in range(columns.shape[1]):
            cell = columns[c, r]
            if cell < 0:
                break
            bit = ONE << np.uint64(cell)
            if occupied & bit == ZERO:
                legal |= bit
                break
    return legal


@njit(cache=True)
def legal_mask(a, b, t):
    """Bitboard of the cells the player to move may take (ignores whether the game is over)."""
    legal = available(a, b, t)
    if a | b == ZERO:
        legal &= ~t.first_forbidden[0]
    return legal


@njit(cache=True)
def status(a, b, t):
    """ONGOING, FIRST_WON, SECOND_WON or DRAW for any position (checks every pattern)."""
    if has_win(a, t.win_masks):
        return FIRST_WON
    if has_win(b, t.win_masks):
        return SECOND_WON
    if popcount(a | b) >= t.disc_cap[0] or legal_mask(a, b, t) == ZERO:
        return DRAW
    return ONGOING


@njit(cache=True)
def status_after(a, b, cell, t):
    """Status of (a, b) given that the last stone went on ``cell`` and the game was on before."""
    if first_to_move(a, b):  # the second player just moved
        if wins_with(b, cell, t.masks_by_cell, t.mask_counts):
            return SECOND_WON
    elif wins_with(a, cell, t.masks_by_cell, t.mask_counts):
        return FIRST_WON
    if popcount(a | b) >= t.disc_cap[0] or legal_mask(a, b, t) == ZERO:
        return DRAW
    return ONGOING


@njit(cache=True)
def threat_cells(own, other, win_masks):
    """Empty cells that would complete a pattern of ``own`` (the stones of ``other`` block)."""
    threats = ZERO
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        missing = m & ~own
        if missing & other == ZERO and missing & (missing - ONE) == ZERO:
            threats |= missing
    return threats


@njit(cache=True)
def threats_of_both(own, other, win_masks):
    """(threat_cells(own, other), threat_cells(other, own)) in one pass over the patterns, without
    branches (a pattern's state is unpredictable: selects cost less than mispredictions)."""
    own_threats = ZERO
    other_threats = ZERO
    for i in range(win_masks.shape[0]):
        m = win_masks[i]
        mine = m & ~own
        theirs = m & ~other
        own_threats |= mine if (m & other) | (mine & (mine - ONE)) == ZERO else ZERO
        other_threats |= theirs if (m & own) | (theirs & (theirs - ONE)) == ZERO else ZERO
    return own_threats, other_threats


@njit(cache=True, inline="always")
def threats_made(own, other, cell, masks_by_cell, mask_counts):
    """The cells where ``own`` completes a pattern through ``cell`` once it holds a stone there
    (patterns holding a stone of ``other`` are blocked): the threats a stone on ``cell`` makes.
    Costs the patterns through one cell."""
    bits = own | (ONE << np.uint64(cell))
    threats = ZERO
    for j in range(mask_counts[cell]):
        m = masks_by_cell[cell, j]
        missing = m & ~bits
        if m & other == ZERO and missing != ZERO and missing & (missing - ONE) == ZERO:
            threats |= missing
    return threats


@njit(cache=True, inline="always")
def makers_at(own, other, cell, masks_by_cell, mask_counts):
    """How many patterns of ``own`` through the empty ``cell`` miss exactly two cells (``other``
    blocks): the patterns a stone there brings to one cell from completion. Read as n below 4,
    else 4 + n modulo 4: the search orders children by it, and the bit-sliced counters that
    counted it over every pattern (a third of a Connect Four search's time) saturated so; a
    count at a child's cell costs only the patterns through it."""
    n = 0
    for j in range(mask_counts[cell]):
        m = masks_by_cell[cell, j]
        missing = m & ~own
        rest = missing & (missing - ONE)
        n += (m & other == ZERO) & (rest != ZERO) & (rest & (rest - ONE) == ZERO)
    return n if n < 4 else 4 + (n & 3)


@njit(cache=True)
def position_status(a, b, t):
    """The status children() gives this position: its status, or FIRST/SECOND_WINS_NEXT when the
    game is on and the player to move can complete a pattern with one legal stone."""
    state = status(a, b, t)
    if state != ONGOING:
        return state
    if first_to_move(a, b):
        if threat_cells(a, b, t.win_masks) & legal_mask(a, b, t) != ZERO:
            return FIRST_WINS_NEXT
    elif threat_cells(b, a, t.win_masks) & legal_mask(a, b, t) != ZERO:
        return SECOND_WINS_NEXT
    return ONGOING


@njit(cache=True)
def play(a, b, cell):
    """The position after the player to move puts a stone on ``cell``."""
    bit = ONE << np.uint64(cell)
    if first_to_move(a, b):
        return a | bit, b
    return a, b | bit


@njit(cache=True, inline="always")
def child_status(first, bit, own_threats, opponent_threats, child_legal, stones_after, disc_cap):
    """Status of the child made by a stone on ``bit``, from what is known of its parent: the
    mover's and the opponent's threat cells, the child's legal cells and its stone count. The
    threats come from threat_cells() once per parent, so a child costs a few mask operations."""
    if own_threats & bit != ZERO:
        return FIRST_WON if first else SECOND_WON
    if stones_after >= disc_cap or child_legal == ZERO:
        return DRAW
    if opponent_threats & child_legal != ZERO:
        return SECOND_WINS_NEXT if first else FIRST_WINS_NEXT
    return ONGOING


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for t's arrays at a call
def statuses_into(a, b, t, moves, st):
    """Write the legal moves of an ongoing position, in move order, and the status of the child
    each makes (children_into's, without keys: a reader who needs the keys of a few children
    only, as a proof's walk, makes those alone with canonical_child). Returns their number.

    ``st``: each child's status, where an ongoing child whose player to move can win with the
    next stone is FIRST_WINS_NEXT or SECOND_WINS_NEXT: most moves that leave an opponent's
    threat open are decided here without a search."""
    order, columns = t.order, t.columns
    gravity = t.gravity[0] != 0
    board = t.cell_mask[0]
    avail = available_cells(a, b, board, gravity, columns)
    legal = avail & ~t.first_forbidden[0] if a | b == ZERO else avail
    first = first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    # neither player's threats change with our stone but for the cell it takes: found once
    own_threats, opponent_threats = threats_of_both(mine, theirs, t.win_masks)
    stones_after = popcount(a | b) + 1
    cap = t.disc_cap[0]
    n = 0
    ranks = permute(legal, t.rank_bytes, IDENTITY)  # the legal cells in move order
    while ranks != ZERO:
        cell = order[lowest_cell(ranks)]
        ranks &= ranks - ONE
        bit = ONE << np.uint64(cell)
        moves[n] = cell
        # the child's legal cells: with gravity the cell above comes free too
        if gravity:
            na, nb_ = (a | bit, b) if first else (a, b | bit)
            child_legal = available_cells(na, nb_, board, gravity, columns)
        else:
            child_legal = avail ^ bit
        st[n] = child_status(first, bit, own_threats, opponent_threats, child_legal, stones_after, cap)
        n += 1
    return n


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for t's arrays at a call
def children_into(a, b, t, reduce_symmetry, moves, ka, kb, st, img, near):
    """Write the children of an ongoing position into the given arrays, in move order.

    Returns their number n. ``moves``: the cells played; ``ka``/``kb``: the children's keys
    (canonical with ``reduce_symmetry``, which also leaves out children that are symmetric
    images of an earlier child, since they have the same value; else the children themselves);
    ``st``: each child's status (statuses_into). ``img``, ``near``: scratch for 2 * nsym words
    and nsym ints.
    """
    n = statuses_into(a, b, t, moves, st)
    if not reduce_symmetry:
        for i in range(n):
            ka[i], kb[i] = play(a, b, moves[i])
        return n
    return keys_into(a, b, t, n, moves, ka, kb, st, img, near)


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for t's arrays at a call
def keys_into(a, b, t, n, moves, ka, kb, st, img, near):
    """children_into's second half: from the n moves and statuses of statuses_into, write the
    children's canonical keys, leaving out (moves and statuses too) each child that is a
    symmetric image of an earlier one (``img``, ``near``: children_into's scratch). Returns the
    number kept."""
    on_a, limit = key_images(a, b, t.sym_bytes, t.cell_images, img)
    first = on_a != ZERO
    nears = near_symmetries(img, first, near)  # the symmetries that map a child to another
    twins = ZERO  # the cells whose children repeat one kept
    kept = 0
    for i in range(n):
        cell = moves[i]
        if twins & (ONE << np.uint64(cell)) != ZERO:
            continue
        xa, xb, _ = canonical_child(img, t.cell_images[cell], on_a, limit)
        if nears:
            twins |= twin_cells(img, first, t.cell_images, cell, near, nears)
        moves[kept] = cell
        st[kept] = st[i]
        ka[kept] = xa
        kb[kept] = xb
        kept += 1
    return kept


@njit(cache=True)
def children(a, b, t, reduce_symmetry):
    """Every child of an ongoing position in one call: (n, moves, key_a, key_b, status)."""
    moves = np.empty(64, np.int64)
    ka = np.empty(64, np.uint64)
    kb = np.empty(64, np.uint64)
    st = np.empty(64, np.int64)
    img = np.empty(2 * t.cell_images.shape[1], np.uint64)
    near = np.empty(t.cell_images.shape[1], np.int64)
    n = children_into(a, b, t, reduce_symmetry, moves, ka, kb, st, img, near)
    return n, moves, ka, kb, st


@njit(cache=True)
def children_of_many(a, b, t):
    """children() of many ongoing positions in one call (a walk through a whole book pays one
    call's overhead per batch, not per position): (counts, moves, key_a, key_b, status), row i
    holding the counts[i] children of (a[i], b[i])."""
    n = a.shape[0]
    counts = np.empty(n, np.int64)
    moves = np.empty((n, 64), np.int64)
    ka = np.empty((n, 64), np.uint64)
    kb = np.empty((n, 64), np.uint64)
    st = np.empty((n, 64), np.int64)
    img = np.empty(2 * t.cell_images.shape[1], np.uint64)
    near = np.empty(t.cell_images.shape[1], np.int64)
    for i in range(n):
        counts[i] = children_into(a[i], b[i], t, True, moves[i], ka[i], kb[i], st[i], img, near)
    return counts, moves, ka, kb, st


@njit(cache=True)
def after_moves(a, b, cells, t):
    """The canonical keys and statuses of many positions after one stone each on ``cells``."""
    n = a.shape[0]
    ka = np.empty(n, np.uint64)
    kb = np.empty(n, np.uint64)
    st = np.empty(n, np.int64)
    for i in range(n):
        xa, xb = play(a[i], b[i], cells[i])
        ka[i], kb[i], _ = canonical(xa, xb, t.sym_bytes)
        st[i] = status(xa, xb, t)
    return ka, kb, st


StepTables = namedtuple(
    "StepTables",
    [
        "up_bit",  # uint64[64]: the cell a stone on cell i makes available (gravity), else 0
        "compose",  # int64[nsym, nsym]: the symmetry s after g (the image under it of cell i is
        # the image under s of the image under g of i): images of g(P) are images of P reordered
        "inverse",  # int64[nsym]: the symmetry that undoes each (compose[inverse[g], g] == 0)
        "orbit_hash",  # uint64[2, 64]: what a stone of the first (0) or second (1) player on cell
        # i adds to a position's orbit hash, the same on every cell of i's orbit: a position and
        # its images have one hash (the sum), and a child's is its parent's plus its stone's
    ],
)


def step_tables(t):
    """Per-cell tables for updating a position and its symmetric images one stone at a time."""
    nsym = t.sym_bytes.shape[0]
    image = t.cell_images
    up_bit = np.zeros(64, np.uint64)
    if t.gravity[0]:
        for column in t.columns:
            cells = [int(c) for c in column if c >= 0]
            for below, above in zip(cells, cells[1:]):
                up_bit[below] = np.uint64(1 << above)
    cells = [c for c in range(64) if image[c, 0]]
    compose = np.zeros((nsym, nsym), np.int64)
    for s in range(nsym):
        for g in range(nsym):
            after = [int(image[int(image[c, g]).bit_length() - 1, s]) for c in cells]
            compose[s, g] = next(h for h in range(nsym) if [int(image[c, h]) for c in cells] == after)
    inverse = np.array([next(h for h in range(nsym) if compose[h, g] == 0) for g in range(nsym)], np.int64)
    orbit_hash = np.zeros((2, 64), np.uint64)
    for c in cells:
        orbit = min(int(image[c, s]).bit_length() - 1 for s in range(nsym))  # its least cell names it
        for player in range(2):
            orbit_hash[player, c] = mixed(2 * orbit + player + 1)
    return StepTables(up_bit=up_bit, compose=compose, inverse=inverse, orbit_hash=orbit_hash)


def mixed(x):
    """A 64-bit value that looks random, from the small number x (splitmix64's finaliser)."""
    m = (1 << 64) - 1
    x = (x * 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    return np.uint64(x ^ (x >> 31))


@njit(cache=True)
def orbit_hash_of(a, b, orbit_hash):
    """The orbit hash of the position (a, b) (StepTables.orbit_hash), the same for its images."""
    h = ZERO
    for player in range(2):
        bits = a if player == 0 else b
        while bits != ZERO:
            h += orbit_hash[player, lowest_cell(bits)]
            bits &= bits - ONE
    return h
