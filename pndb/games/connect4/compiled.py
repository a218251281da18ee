"""Allis' rules (definitions.py) compiled: numba kernels that find the same instances, in the
same order, and run the same chosen-set search, on uint64 bitboards and bitsets, some fifty times
faster. tests/test_connect4_rules.py holds both to the same verdicts and certificates; every
certificate goes through certificate.check_certificate (the definitions) when pndb exports it,
and tools/verify.py checks books on its own. :func:`evaluate` is the entry: these kernels unless
told ``compiled=False``; :func:`nb_decides` is what the inner search calls per node.
"""

import numpy as np

from pndb.games.connect4.certificate import CERTIFICATE_KIND, COMBINATION_BYTE  # noqa: F401 (nb_decides' kind)
from pndb.games.connect4.definitions import (
    ALL_RULES, NO_VERDICT, Combination, Instance, Rule, _NO_THREAT, _dead, _find_python, _lines_np,
    _rule_mask, _setting, _verdict, board_of,
)  # fmt: skip
from pndb.games.placement.kernels import ONE, ZERO, popcount
from pndb.jit import njit


def evaluate(game, a, b, rules=ALL_RULES, rng=None, max_nodes=20000, compiled=True, combinations=True):
    """What Allis' rules prove about the position (a, b) of a Connect Four game, trying at most
    ``max_nodes`` search nodes per win condition. For tests: only the rules in ``rules`` and,
    unless ``combinations`` is False, threat combinations as win conditions; with
    a random.Random ``rng``, instances are tried in a random order (so that other chosen sets
    are found); with ``compiled=False``, the plain Python definitions above do all the work
    (the compiled kernels below find the same instances in the same order and run the same
    search, so both give the same verdict).

    The player not to move (the controller) first tries each of its threats usable as a win
    condition (an odd number of squares above it with an odd number of empty squares, as White's
    odd threat on 7 x 6 with Black to move; an even number with an even number, as Black's even
    threat with White to move): when compatible rule instances on the board without the threat
    column from below the threat up refute every group of the player to move that does not need
    the threat or a square above it, the controller wins (``first-wins`` / ``second-wins``).
    Then likewise each threat combination (:func:`combinations`), on the board without its two
    columns from below the crossing cell, respectively the low cell, up. Then, with an even
    number of empty squares, without a threat: when compatible instances
    refute every group of the player to move, that player does not win (``first-wont-win`` when
    the second player controls, ``second-wont-win`` when the first does). Else ``NO_VERDICT``."""
    a, b = int(a), int(b)
    bd = board_of(game, a, b)
    if compiled and rng is None:
        return _evaluate_compiled(bd, a, b, _rule_mask(rules, combinations), max_nodes)
    setting = _setting(bd, a, b)
    if setting is None:
        return NO_VERDICT
    find = _find_compiled if compiled else _find_python
    for threat in setting.threats:
        if isinstance(threat, Combination) and not combinations:
            continue
        bd = board_of(game, a, b, threat)
        dead = _dead(bd, threat)
        problems = [g for g in bd.lines if not g & setting.mine and not g & dead]
        opponent = (a | b) & ~setting.mine
        chosen = find(bd, problems, opponent, rules, rng, max_nodes)
        if chosen is not None:
            return _verdict(setting.controller, threat, chosen, problems)
    return NO_VERDICT


def _rows(ints, solved):
    """(instance, problems mask) of rows of the compiled instance table."""
    out = []
    for row, words in zip(ints.tolist(), solved.tolist()):
        cells = tuple(row[ROW_CELLS : ROW_CELLS + row[ROW_NCELLS]])
        mask = sum(int(word) << (64 * k) for k, word in enumerate(words))
        out.append((Instance(Rule(row[ROW_RULE]), cells), mask))
    return out


def _evaluate_compiled(bd, a, b, rule_mask, max_nodes):
    """:func:`evaluate` without ``rng``, by one call of the kernel :func:`_nb_evaluate`."""
    controller, threat, ints, solved, problems = _nb_evaluate(
        bd.width, bd.height, _lines_np(bd), np.uint64(a), np.uint64(b), rule_mask, max_nodes
    )
    if controller == 0:
        return NO_VERDICT
    return _verdict(int(controller), _win_condition(bd, int(threat)), _rows(ints, solved), problems.tolist())


def _win_condition(bd, code):
    """The win condition of a kernel's code: -1 NO_THREAT, a cell, or n + x * n + low for
    Combination(x, low) (n the number of cells)."""
    n = bd.width * bd.height
    return Combination((code - n) // n, (code - n) % n) if code >= n else code


def _find_compiled(bd, problems, opponent, rules, rng, max_nodes):
    """:func:`_find_python` by the numba kernels below."""
    w, h = bd.width, bd.height
    lines = _lines_np(bd)
    cap = _nb_cap(w, h, len(bd.lines))
    rule_mask = _rule_mask(rules, False)
    ints, masks, solved, m = _nb_instances(
        w, h, np.uint64(bd.region), np.uint64(bd.occupied), np.uint64(opponent), np.array(bd.top, np.int64),
        lines, np.array(problems, np.uint64), rule_mask, cap,
    )  # fmt: skip
    ints, masks, solved = ints[:m], masks[:m], solved[:m]
    if rng is not None:
        order = list(range(m))
        rng.shuffle(order)
        order = np.array(order, np.int64)
        ints, masks, solved = ints[order], masks[order], solved[order]
    status, chosen = _nb_chosen_set(ints, masks, solved, m, len(problems), max_nodes)
    return _rows(ints[chosen], solved[chosen]) if status == 1 else None


# The instance table, one row per instance that solves at least one problem. ``ints[i]``,
# int64, ROW_INTS columns:
ROW_RULE = 0  # the rule code (Rule)
ROW_NCELLS = 1  # the number of cells that follow
ROW_CELLS = 2  # the cells, in the certificate's order (at most 12)
ROW_NPARTS = 14  # the number of Claimeven/Vertical parts (Aftereven, Before, Specialbefore)
ROW_PART_COLUMN = 15  # each part's column (at most five)
ROW_PART_RULE = 20  # each part's rule code, 9 for a Specialbefore's special part (at most five)
ROW_INTS = 25  # five parts at most: a Specialbefore's two special parts and three others
# ``masks[i]``, uint64 square sets, ROW_MASKS columns:
MASK_SQUARES = 0  # the squares it uses
MASK_INVERSE_BELOW = 1  # an inverse: the squares below its lowest square in each of its two columns
MASK_CLAIMEVEN_LOWER = 2  # the lower squares of its Claimevens
MASK_INVERSE_COLUMNS = 3  # an inverse's columns, as bits
MASK_PARTS = 4  # each part's squares (at most five)
ROW_MASKS = 9
# ``solved[i]``: the problems it solves, a bitset over problem indices. The compatibility
# bit-matrix is filled a row at a time, when the search first tries an instance (most searches
# stop at once, on a problem nothing solves, and never need it: the improvement of the VICTOR
# evaluator over Allis' full node graph).


@njit(cache=True)
def _lowest(x):
    """Index of the lowest set bit of a nonzero uint64."""
    return popcount((x & (~x + ONE)) - ONE)


@njit(cache=True)
def _b(s):
    return ONE << np.uint64(s)


@njit(cache=True)
def _nb_empty(region, s):
    return s >= 0 and (region >> np.uint64(s)) & ONE != ZERO


@njit(cache=True, inline="always")
def _nb_group_cells(line, occupied, region, cells, emp):
    """The group's cells into ``cells`` and its vacant cells into ``emp``: (number of cells,
    number of vacant cells), the latter -1 when a vacant cell lies outside the region (the
    group cannot be a Before or Specialbefore group then)."""
    nc = 0
    k = 0
    own = True
    x = line
    while x != ZERO:
        s = _lowest(x)
        x &= x - ONE
        cells[nc] = s
        nc += 1
        if (occupied >> np.uint64(s)) & ONE == ZERO:
            if _nb_empty(region, s):
                emp[k] = s
                k += 1
            else:
                own = False
    return nc, k if own else -1


@njit(cache=True)
def _nb_below(w, h, s):
    return s + w if s // w < h - 1 else -1


@njit(cache=True)
def _nb_above(w, s):
    return s - w if s // w > 0 else -1


@njit(cache=True, inline="always")
def _nb_even(w, top, s):
    return (s // w - top[s % w]) % 2 == 0


@njit(cache=True, inline="always")
def _nb_playable(w, h, region, occupied, s):
    if not _nb_empty(region, s):
        return False
    b = _nb_below(w, h, s)
    return b < 0 or (occupied >> np.uint64(b)) & ONE != ZERO


@njit(cache=True, inline="always")
def _nb_claimeven(w, h, region, top, lower, upper):
    """:func:`claimeven`'s requirements."""
    return (
        _nb_empty(region, upper)
        and _nb_even(w, top, upper)
        and _nb_below(w, h, upper) == lower
        and _nb_empty(region, lower)
    )


@njit(cache=True, inline="always")
def _nb_vertical(w, h, region, top, lower, upper):
    """:func:`vertical`'s requirements."""
    return (
        _nb_empty(region, upper)
        and not _nb_even(w, top, upper)
        and _nb_below(w, h, upper) == lower
        and _nb_empty(region, lower)
    )


@njit(cache=True, inline="always")
def _nb_solves(solved, count, claims, nclaims, above, nabove, through):
    """Write into solved[count] the problems an instance solves (as :meth:`Applied.solved`,
    with ``through[s]`` the problems that contain square s): those that contain every square
    of one claim mask, and (Aftereven) those that meet every mask of ``above``; whether there
    are any. Only then is the instance's row written: most candidates solve nothing."""
    hit_any = False
    for wd in range(solved.shape[1]):
        out = ZERO
        for k in range(nclaims):
            sel = ~ZERO
            x = claims[k]
            while x != ZERO:
                sel &= through[_lowest(x), wd]
                x &= x - ONE
            out |= sel
        if nabove > 0:
            sel = ~ZERO
            for k in range(nabove):
                hits = ZERO
                x = above[k]
                while x != ZERO:
                    hits |= through[_lowest(x), wd]
                    x &= x - ONE
                sel &= hits
            out |= sel
        solved[count, wd] = out
        hit_any = hit_any or out != ZERO
    return hit_any


@njit(cache=True, inline="always")
def _nb_new(ints, masks, count, rule, cells):
    """Write row ``count`` of the instance table afresh: the rule and its cells (a tuple)."""
    for t in range(ROW_INTS):
        ints[count, t] = 0
    for t in range(ROW_MASKS):
        masks[count, t] = ZERO
    ints[count, ROW_RULE] = rule
    ints[count, ROW_NCELLS] = len(cells)
    for t in range(len(cells)):
        ints[count, ROW_CELLS + t] = cells[t]


@njit(cache=True)
def _nb_cols_below(w, h, low):
    """The squares below ``low`` in its column."""
    m = ZERO
    s = low + w
    while s < w * h:
        m |= _b(s)
        s += w
    return m


@njit(cache=True, inline="always")
def _nb_part_columns(w, region, emp, k):
    """The columns of a group's k empty squares as a bit set, or -1 unless they lie in
    different columns, each with an empty square above it (a Before's or Specialbefore's)."""
    colset = 0
    for t in range(k):
        s = emp[t]
        if colset >> (s % w) & 1 or not _nb_empty(region, _nb_above(w, s)):
            return -1
        colset |= 1 << (s % w)
    return colset


@njit(cache=True, inline="always")
def _nb_part_options(w, h, region, top, s, opt, i):
    """The parts a Before or Specialbefore may take for its empty square s (the square above
    it empty): the Vertical (s, above s) and, when s is even with an empty square below, the
    Claimeven (below s, s), written into opt[i] as (lower, upper); their number."""
    opt[i, 0, 0], opt[i, 0, 1] = s, _nb_above(w, s)
    lo = _nb_below(w, h, s)
    if _nb_even(w, top, s) and lo >= 0 and _nb_empty(region, lo):
        opt[i, 1, 0], opt[i, 1, 1] = lo, s
        return 2
    return 1


@njit(cache=True, inline="always")
def _nb_digits(code, nopt, n, digits):
    """Write ``code`` in the mixed radix nopt[:n] into digits[:n], the first digit varying
    slowest (the first empty square's part changes last)."""
    for t in range(n - 1, -1, -1):
        digits[t] = code % nopt[t]
        code //= nopt[t]


@njit(cache=True)
def _nb_instances(w, h, region, occupied, opponent, top, lines, problems, rule_mask, cap):
    """The instances of :func:`instances`, in its order, that solve a problem and whose rule
    is in ``rule_mask`` (bit r for rule code r): (ints, masks, solved, count)."""
    n = w * h
    pw = max(1, (problems.shape[0] + 63) // 64)
    ints = np.empty((cap, ROW_INTS), np.int64)
    masks = np.empty((cap, ROW_MASKS), np.uint64)
    solved = np.empty((cap, pw), np.uint64)
    through = np.zeros((n, pw), np.uint64)  # square -> the problems that contain it
    for p in range(problems.shape[0]):
        x = problems[p]
        while x != ZERO:
            through[_lowest(x), p >> 6] |= _b(p & 63)
            x &= x - ONE
    claims = np.zeros(8, np.uint64)
    above = np.zeros(4, np.uint64)
    count = np.int64(0)  # not the literal 0: numba would compile _nb_specialbefores for both types
    empty = np.empty(n, np.int64)
    ne = 0
    for s in range(n):
        if _nb_empty(region, s):
            empty[ne] = s
            ne += 1
    playable = np.empty(n, np.int64)
    npl = 0
    for k in range(ne):
        if _nb_playable(w, h, region, occupied, empty[k]):
            playable[npl] = empty[k]
            npl += 1

    # Claimeven (rule 1)
    if rule_mask >> 1 & 1:
        for k in range(ne):
            s = empty[k]
            lo = _nb_below(w, h, s)
            if lo >= 0 and _nb_claimeven(w, h, region, top, lo, s):
                claims[0] = _b(s)
                if _nb_solves(solved, count, claims, np.int64(1), above, np.int64(0), through):
                    _nb_new(ints, masks, count, np.int64(1), (lo, s))
                    masks[count, MASK_SQUARES] = _b(lo) | _b(s)
                    masks[count, MASK_CLAIMEVEN_LOWER] = _b(lo)
                    count += 1
    # Baseinverse (rule 2)
    if rule_mask >> 2 & 1:
        for i in range(npl):
            for j in range(npl):
                x, y = playable[i], playable[j]
                if x < y:
                    claims[0] = _b(x) | _b(y)
                    if _nb_solves(solved, count, claims, np.int64(1), above, np.int64(0), through):
                        _nb_new(ints, masks, count, np.int64(2), (x, y))
                        masks[count, MASK_SQUARES] = _b(x) | _b(y)
                        count += 1
    # Vertical (rule 3)
    if rule_mask >> 3 & 1:
        for k in range(ne):
            s = empty[k]
            lo = _nb_below(w, h, s)
            if lo >= 0 and _nb_vertical(w, h, region, top, lo, s):
                claims[0] = _b(lo) | _b(s)
                if _nb_solves(solved, count, claims, np.int64(1), above, np.int64(0), through):
                    _nb_new(ints, masks, count, np.int64(3), (lo, s))
                    masks[count, MASK_SQUARES] = _b(lo) | _b(s)
                    count += 1
    # Lowinverse (5) and Highinverse (6): column parts, lowest-index (highest) square first
    lows = np.empty((w, h, 2), np.int64)
    nlows = np.zeros(w, np.int64)
    highs = np.empty((w, h, 3), np.int64)
    nhighs = np.zeros(w, np.int64)
    for k in range(ne):
        s = empty[k]
        b = _nb_below(w, h, s)
        if b >= 0 and _nb_empty(region, b):
            c = s % w
            lows[c, nlows[c], 0], lows[c, nlows[c], 1] = b, s
            nlows[c] += 1
            bb = _nb_below(w, h, b)
            if bb >= 0 and _nb_empty(region, bb):
                highs[c, nhighs[c], 0], highs[c, nhighs[c], 1], highs[c, nhighs[c], 2] = bb, b, s
                nhighs[c] += 1
    for c1 in range(w):
        for c2 in range(c1 + 1, w):
            if rule_mask >> 5 & 1:
                for i in range(nlows[c1]):
                    for j in range(nlows[c2]):
                        l1, u1, l2, u2 = lows[c1, i, 0], lows[c1, i, 1], lows[c2, j, 0], lows[c2, j, 1]
                        ok1 = _nb_vertical(w, h, region, top, l1, u1)
                        if not (ok1 and _nb_vertical(w, h, region, top, l2, u2)):
                            continue
                        claims[0] = _b(u1) | _b(u2)
                        claims[1] = _b(l1) | _b(u1)
                        claims[2] = _b(l2) | _b(u2)
                        if _nb_solves(solved, count, claims, np.int64(3), above, np.int64(0), through):
                            _nb_new(ints, masks, count, np.int64(5), (l1, u1, l2, u2))
                            masks[count, MASK_SQUARES] = _b(l1) | _b(u1) | _b(l2) | _b(u2)
                            below = _nb_cols_below(w, h, l1) | _nb_cols_below(w, h, l2)
                            masks[count, MASK_INVERSE_BELOW] = below
                            masks[count, MASK_INVERSE_COLUMNS] = _b(c1) | _b(c2)
                            count += 1
            if rule_mask >> 6 & 1:
                for i in range(nhighs[c1]):
                    for j in range(nhighs[c2]):
                        a1, b1, e1 = highs[c1, i, 0], highs[c1, i, 1], highs[c1, i, 2]
                        a2, b2, e2 = highs[c2, j, 0], highs[c2, j, 1], highs[c2, j, 2]
                        if not (_nb_even(w, top, e1) and _nb_even(w, top, e2)):
                            continue
                        claims[0] = _b(e1) | _b(e2)
                        claims[1] = _b(b1) | _b(b2)
                        claims[2] = _b(b1) | _b(e1)
                        claims[3] = _b(b2) | _b(e2)
                        nc = 4
                        if _nb_playable(w, h, region, occupied, a1):
                            claims[nc] = _b(a1) | _b(e2)
                            nc += 1
                        if _nb_playable(w, h, region, occupied, a2):
                            claims[nc] = _b(a2) | _b(e1)
                            nc += 1
                        if _nb_solves(solved, count, claims, nc, above, np.int64(0), through):
                            _nb_new(ints, masks, count, np.int64(6), (a1, b1, e1, a2, b2, e2))
                            masks[count, MASK_SQUARES] = _b(a1) | _b(b1) | _b(e1) | _b(a2) | _b(b2) | _b(e2)
                            below = _nb_cols_below(w, h, a1) | _nb_cols_below(w, h, a2)
                            masks[count, MASK_INVERSE_BELOW] = below
                            masks[count, MASK_INVERSE_COLUMNS] = _b(c1) | _b(c2)
                            count += 1
    # Baseclaim (rule 7)
    if rule_mask >> 7 & 1:
        for j in range(npl):
            p2 = playable[j]
            q = _nb_above(w, p2)
            if not (_nb_empty(region, q) and _nb_even(w, top, q)):
                continue
            for i in range(npl):
                for k in range(npl):
                    p1, p3 = playable[i], playable[k]
                    if p1 == p2 or p1 == p3 or p2 == p3:
                        continue
                    claims[0] = _b(p1) | _b(q)
                    claims[1] = _b(p2) | _b(p3)
                    if _nb_solves(solved, count, claims, np.int64(2), above, np.int64(0), through):
                        _nb_new(ints, masks, count, np.int64(7), (p1, p2, p3, q))
                        masks[count, MASK_SQUARES] = _b(p1) | _b(p2) | _b(p3) | _b(q)
                        masks[count, MASK_CLAIMEVEN_LOWER] = _b(p2)
                        count += 1
    # Aftereven (rule 4) and Before (rule 8), per group of the controller
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    nopt = np.empty(4, np.int64)
    opt = np.empty((4, 2, 2), np.int64)  # per empty square: options (lower, upper)
    digits = np.empty(4, np.int64)
    for li in range(lines.shape[0]):
        line = lines[li]
        if line & opponent != ZERO:
            continue
        nc, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        if rule_mask >> 4 & 1:
            ok = True
            for t in range(k):
                lo = _nb_below(w, h, emp[t])
                if lo < 0 or not _nb_claimeven(w, h, region, top, lo, emp[t]):
                    ok = False
            if ok:
                _nb_new(ints, masks, count, np.int64(4), (cells[0], cells[1], cells[2], cells[3]))
                sq = ZERO
                celow = ZERO
                for t in range(k):
                    s = emp[t]
                    lo = _nb_below(w, h, s)
                    sq |= _b(lo) | _b(s)
                    celow |= _b(lo)
                    claims[t] = _b(s)
                    col = ZERO
                    u = _nb_above(w, s)
                    while u >= 0:
                        col |= _b(u)
                        u = _nb_above(w, u)
                    above[t] = col
                    ints[count, ROW_PART_COLUMN + t] = s % w
                    ints[count, ROW_PART_RULE + t] = 1
                    masks[count, MASK_PARTS + t] = _b(lo) | _b(s)
                ints[count, ROW_NPARTS] = k
                masks[count, MASK_SQUARES] = sq
                masks[count, MASK_CLAIMEVEN_LOWER] = celow
                count += _nb_solves(solved, count, claims, k, above, k, through)
        if not rule_mask >> 8 & 1:
            continue
        if _nb_part_columns(w, region, emp, k) < 0:
            continue
        total = 1
        for t in range(k):
            nopt[t] = _nb_part_options(w, h, region, top, emp[t], opt, t)
            total *= nopt[t]
        for code in range(total):
            _nb_digits(code, nopt, k, digits)
            _nb_new(ints, masks, count, np.int64(8), (cells[0], cells[1], cells[2], cells[3]))
            ints[count, ROW_NCELLS] = 4 + 2 * k
            sq = ZERO
            celow = ZERO
            succ = ZERO
            vertical = False
            for t in range(k):
                s = emp[t]
                lo, up = opt[t, digits[t], 0], opt[t, digits[t], 1]
                ints[count, ROW_CELLS + 4 + 2 * t], ints[count, ROW_CELLS + 5 + 2 * t] = lo, up
                ints[count, ROW_PART_COLUMN + t] = s % w
                if up == s:  # a Claimeven (lower, s)
                    ints[count, ROW_PART_RULE + t] = 1
                    celow |= _b(lo)
                    claims[t] = _b(up)
                else:  # a Vertical (s, above s)
                    ints[count, ROW_PART_RULE + t] = 3
                    vertical = True
                    claims[t] = _b(lo) | _b(up)
                masks[count, MASK_PARTS + t] = _b(lo) | _b(up)
                sq |= _b(lo) | _b(up)
                succ |= _b(_nb_above(w, s))
            if not vertical:
                continue
            claims[k] = succ
            ints[count, ROW_NPARTS] = k
            masks[count, MASK_SQUARES] = sq
            masks[count, MASK_CLAIMEVEN_LOWER] = celow
            count += _nb_solves(solved, count, claims, k + 1, above, np.int64(0), through)
    if rule_mask >> 9 & 1:
        count = _nb_specialbefores(
            w, h, region, occupied, opponent, top, lines, playable[:npl], ints, masks, solved, count, through
        )
    return ints, masks, solved, count


@njit(cache=True)
def _nb_specialbefores(
    w, h, region, occupied, opponent, top, lines, playable, ints, masks, solved, count, through
):
    """Append the Specialbefores of :func:`instances` (rule 9, after every other instance, in
    its order) that solve a problem; the new row count."""
    claims = np.zeros(8, np.uint64)
    above = np.zeros(4, np.uint64)
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    oth = np.empty(3, np.int64)
    nopt = np.empty(3, np.int64)
    opt = np.empty((3, 2, 2), np.int64)
    digits = np.empty(3, np.int64)
    for li in range(lines.shape[0]):
        line = lines[li]
        if line & opponent != ZERO:
            continue
        nc, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        colset = _nb_part_columns(w, region, emp, k)
        if colset < 0:
            continue
        succ = ZERO
        for t in range(k):
            succ |= _b(_nb_above(w, emp[t]))
        for i0 in range(k):
            s0 = emp[i0]
            if not _nb_playable(w, h, region, occupied, s0):
                continue
            no = np.int64(0)  # (not the literal 0: the calls below would compile twice, jit)
            total = 1
            for t in range(k):
                s = emp[t]
                if s == s0:
                    continue
                oth[no] = s
                nopt[no] = _nb_part_options(w, h, region, top, s, opt, no)
                total *= nopt[no]
                no += 1
            for j in range(playable.shape[0]):
                xs = playable[j]
                if colset >> (xs % w) & 1:
                    continue
                useful = False  # as _useful: its own claim (x, successors) solves a problem
                for wd in range(through.shape[1]):
                    sel = ~ZERO
                    y = _b(xs) | succ
                    while y != ZERO:
                        sel &= through[_lowest(y), wd]
                        y &= y - ONE
                    useful = useful or sel != ZERO
                if not useful:
                    continue
                for code in range(total):
                    _nb_digits(code, nopt, no, digits)
                    _nb_new(ints, masks, count, np.int64(9), (cells[0], cells[1], cells[2], cells[3], s0, xs))
                    ints[count, ROW_NCELLS] = 6 + 2 * no
                    sq = _b(s0) | _b(xs)
                    celow = ZERO
                    claims[0] = _b(xs) | succ
                    claims[1] = _b(s0) | _b(xs)
                    ints[count, ROW_PART_COLUMN], ints[count, ROW_PART_COLUMN + 1] = s0 % w, xs % w
                    ints[count, ROW_PART_RULE], ints[count, ROW_PART_RULE + 1] = 9, 9
                    masks[count, MASK_PARTS], masks[count, MASK_PARTS + 1] = _b(s0), _b(xs)
                    for t in range(no):
                        s = oth[t]
                        lo, up = opt[t, digits[t], 0], opt[t, digits[t], 1]
                        ints[count, ROW_CELLS + 6 + 2 * t], ints[count, ROW_CELLS + 7 + 2 * t] = lo, up
                        ints[count, ROW_PART_COLUMN + 2 + t] = s % w
                        if up == s:  # a Claimeven (lower, s)
                            ints[count, ROW_PART_RULE + 2 + t] = 1
                            celow |= _b(lo)
                            claims[2 + t] = _b(up)
                        else:  # a Vertical part (s, above s)
                            ints[count, ROW_PART_RULE + 2 + t] = 3
                            claims[2 + t] = _b(lo) | _b(up)
                        masks[count, MASK_PARTS + 2 + t] = _b(lo) | _b(up)
                        sq |= _b(lo) | _b(up)
                    ints[count, ROW_NPARTS] = 2 + no
                    masks[count, MASK_SQUARES] = sq
                    masks[count, MASK_CLAIMEVEN_LOWER] = celow
                    count += _nb_solves(solved, count, claims, 2 + no, above, np.int64(0), through)
    return count


@njit(cache=True)
def _nb_unsolved(w, h, region, occupied, opponent, top, lines, problems, unsolved):
    """How many problems no instance of any rule solves, found without enumerating the
    instances (most evaluations in a search fail so: no chosen set exists then); unsolved[p]
    tells which (all False when the count is 0). A problem is solved only by an instance one
    of whose claims it contains, or, for an Aftereven, whose columns above it meets
    (:meth:`Applied.solved`), and the claims are made of few kinds of squares: an empty even
    square over an empty one (Claimeven; Aftereven's, Highinverse's and Baseclaim's even
    squares), two playable squares (Baseinverse, Baseclaim, Specialbefore), a vertical pair of
    empty squares (Vertical, the parts of Lowinverse, Before and Specialbefore), two empty odd
    squares over empty ones (Lowinverse; Highinverse's middle squares), or every successor of
    a Before's or Specialbefore's group."""
    even_upper = ZERO
    odd_upper = ZERO
    playable = ZERO
    y = region
    while y != ZERO:
        s = _lowest(y)
        y &= y - ONE
        lo = _nb_below(w, h, s)
        if lo < 0 or (occupied >> np.uint64(lo)) & ONE != ZERO:
            playable |= _b(s)
        elif _nb_empty(region, lo):
            if _nb_even(w, top, s):
                even_upper |= _b(s)
            else:
                odd_upper |= _b(s)
    shift = np.uint64(w)
    count = 0
    for p in range(problems.shape[0]):
        g = problems[p]
        unsolved[p] = (
            g & even_upper == ZERO
            and popcount(g & playable) < 2
            and g & odd_upper & (g >> shift) == ZERO
            and popcount(g & odd_upper) < 2
        )
        count += unsolved[p]
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    cols = np.empty(4, np.uint64)
    li = 0
    while count > 0 and li < lines.shape[0]:  # the controller's groups: Befores, Afterevens
        line = lines[li]
        li += 1
        if line & opponent != ZERO:
            continue
        _, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        succ = ZERO
        if _nb_part_columns(w, region, emp, k) >= 0:
            for t in range(k):
                succ |= _b(_nb_above(w, emp[t]))
        aftereven = True
        for t in range(k):
            lo = _nb_below(w, h, emp[t])
            aftereven = aftereven and lo >= 0 and _nb_claimeven(w, h, region, top, lo, emp[t])
            u = _nb_above(w, emp[t])  # the column above the empty cell
            cols[t] = ZERO
            while u >= 0:
                cols[t] |= _b(u)
                u = _nb_above(w, u)
        for p in range(problems.shape[0]):
            if not unsolved[p]:
                continue
            g = problems[p]
            meets = aftereven
            for t in range(k):
                meets = meets and g & cols[t] != ZERO
            if meets or (succ != ZERO and g & succ == succ):
                unsolved[p] = False
                count -= 1
    return count


@njit(cache=True)
def _nb_compatible(ints, masks, x, y):
    """:func:`compatible` on rows x and y of the instance table."""
    rx, ry = ints[x, ROW_RULE], ints[y, ROW_RULE]
    if (rx == 4 or rx == 8 or rx == 9) and (ry == 4 or ry == 8 or ry == 9):
        for k in range(ints[y, ROW_NPARTS]):
            for j in range(ints[x, ROW_NPARTS]):
                if ints[x, ROW_PART_COLUMN + j] == ints[y, ROW_PART_COLUMN + k]:
                    mx, my = masks[x, MASK_PARTS + j], masks[y, MASK_PARTS + k]
                    kx, ky = ints[x, ROW_PART_RULE + j], ints[y, ROW_PART_RULE + k]
                    if mx & my != ZERO and (mx != my or kx != ky or kx == 9):
                        return False
        return True
    if masks[x, MASK_SQUARES] & masks[y, MASK_SQUARES] != ZERO:
        return False
    xi, yi = rx == 5 or rx == 6, ry == 5 or ry == 6
    if xi and yi:
        return masks[x, MASK_INVERSE_COLUMNS] & masks[y, MASK_INVERSE_COLUMNS] == ZERO
    if xi:
        return masks[y, MASK_CLAIMEVEN_LOWER] & masks[x, MASK_INVERSE_BELOW] == ZERO
    if yi:
        return masks[x, MASK_CLAIMEVEN_LOWER] & masks[y, MASK_INVERSE_BELOW] == ZERO
    return True


@njit(cache=True)
def _nb_chosen_set(ints, masks, solved, m, nproblems, max_nodes):
    """:func:`_chosen_set` without recursion: (status, chosen rows), status 1 found, 0 no set,
    -1 out of nodes. Sets of problems and of instances are bitsets; row i of the conflict
    matrix is filled the first time instance i is tried."""
    pw = solved.shape[1]
    nw = max(1, (m + 63) // 64)
    solvers = np.zeros((max(nproblems, 1), nw), np.uint64)
    for i in range(m):
        for wd in range(pw):
            x = solved[i, wd]
            while x != ZERO:
                p = wd * 64 + _lowest(x)
                x &= x - ONE
                solvers[p, i >> 6] |= _b(i & 63)
    conflicts = np.empty((max(m, 1), nw), np.uint64)
    known = np.zeros(max(m, 1), np.bool_)
    depth = nproblems + 2
    open_ = np.zeros((depth, pw), np.uint64)
    banned = np.zeros((depth, nw), np.uint64)
    problem = np.zeros(depth, np.int64)
    nxt = np.zeros(depth, np.int64)
    chosen = np.zeros(depth, np.int64)
    for p in range(nproblems):
        open_[0, p >> 6] |= _b(p & 63)
    d = 0
    nodes = 0
    enter = True
    while True:
        if enter:
            done = True
            for wd in range(pw):
                if open_[d, wd] != ZERO:
                    done = False
            if done:
                return 1, chosen[:d].copy()
            nodes += 1
            if nodes > max_nodes:
                return -1, chosen[:0].copy()
            best, fewest = -1, 1 << 62
            for wd in range(pw):
                x = open_[d, wd]
                while x != ZERO and fewest > 0:
                    p = wd * 64 + _lowest(x)
                    x &= x - ONE
                    c = 0
                    for v in range(nw):
                        c += popcount(solvers[p, v] & ~banned[d, v])
                    if c < fewest:
                        best, fewest = p, c
            if fewest == 0:
                d -= 1
                if d < 0:
                    return 0, chosen[:0].copy()
            else:
                problem[d] = best
                nxt[d] = 0
        # the next usable solver of the problem at depth d, from index nxt[d] on
        p = problem[d]
        i = -1
        v = nxt[d] >> 6
        while v < nw:
            x = solvers[p, v] & ~banned[d, v]
            if v == nxt[d] >> 6:
                x &= ~(_b(nxt[d] & 63) - ONE)
            if x != ZERO:
                i = v * 64 + _lowest(x)
                break
            v += 1
        if i < 0:
            d -= 1
            if d < 0:
                return 0, chosen[:0].copy()
            enter = False
            continue
        nxt[d] = i + 1
        chosen[d] = i
        if not known[i]:
            for v in range(nw):
                conflicts[i, v] = ZERO
            for j in range(m):
                if j != i and not _nb_compatible(ints, masks, i, j):
                    conflicts[i, j >> 6] |= _b(j & 63)
            known[i] = True
        for wd in range(pw):
            open_[d + 1, wd] = open_[d, wd] & ~solved[i, wd]
        for v in range(nw):
            banned[d + 1, v] = banned[d, v] | conflicts[i, v]
        banned[d + 1, i >> 6] |= _b(i & 63)
        d += 1
        enter = True


@njit(cache=True)
def _nb_evaluate(w, h, lines, a, b, rule_mask, max_nodes):
    """:func:`evaluate` in one compiled call (numba-callable, for the inner search too):
    (controller, threat, instance rows, their solved problems, the problems) of the first
    chosen set found, controller 0 when there is none. The threat is coded as in
    :func:`_win_condition`."""
    n = w * h
    occupied = a | b
    full = ~ZERO if n == 64 else (ONE << np.uint64(n)) - ONE
    empties = full & ~occupied
    if empties == ZERO:
        return _nb_no_verdict()
    if popcount(a) == popcount(b):
        controller, mine = 2, b
    else:
        controller, mine = 1, a
    opponent = occupied & ~mine
    parity = popcount(empties) % 2
    # the win conditions to try (see threats, combinations): the controller's threats, its threat
    # combinations (code n + x * n + low), then NO_THREAT; one pass over the groups without
    # branches (those on the groups' contents cost more than the rest of the pass)
    threats = ZERO
    won = False
    twos = np.empty(lines.shape[0], np.uint64)  # groups of the controller but two empty cells
    ntwos = 0
    for g in lines:
        rest = g & ~mine
        won |= (rest == ZERO) | (g & opponent == g)
        rest2 = rest & (rest - ONE)
        unblocked = rest & opponent == ZERO
        threats |= rest if unblocked & (rest2 == ZERO) else ZERO
        twos[ntwos] = rest
        ntwos += unblocked & (rest2 != ZERO) & (rest2 & (rest2 - ONE) == ZERO)
    if won:
        return _nb_no_verdict()
    rows = _nb_every_second_row(w, h, parity)  # of the parity of the number of empty squares
    over_empty = empties >> np.uint64(w)  # squares above an empty square
    tries = np.empty(n + 2 * ntwos + 1, np.int64)
    ntries = 0
    seen = threats & rows & over_empty
    while seen != ZERO:
        tries[ntries] = _lowest(seen)
        seen &= seen - ONE
        ntries += 1
    if rule_mask >> 10 & 1:
        lows = empties & ~over_empty & _nb_every_second_row(w, h, np.int64(1))  # directly playable, odd row
        crossings = rows & over_empty
        start = ntries
        for i in range(ntwos):
            p = _lowest(twos[i])
            q = _lowest(twos[i] & (twos[i] - ONE))
            for x, low in ((p, q), (q, p)):
                if crossings >> np.uint64(x) & ONE == ZERO or lows >> np.uint64(low) & ONE == ZERO:
                    continue
                if x % w == low % w:
                    continue
                up = _b(x) | _b(low - w)
                for j in range(ntwos):
                    if twos[j] == up:
                        tries[ntries] = n + x * n + low
                        ntries += 1
                        break
        tries[start:ntries].sort()  # in the order of (x, low), each once
        kept = start
        for i in range(start, ntries):
            if i == start or tries[i] != tries[kept - 1]:
                tries[kept] = tries[i]
                kept += 1
        ntries = kept
    if parity == 0 and rule_mask >> 11 & 1:
        tries[ntries] = -1
        ntries += 1
    if ntries == 0:
        return _nb_no_verdict()
    nlines = lines.shape[0]
    cap = _nb_cap(w, h, nlines)
    top = np.zeros(w, np.int64)
    problems = np.empty(nlines, np.uint64)
    unsolved = np.empty(nlines, np.bool_)
    for k in range(ntries):
        threat = tries[k]
        region = empties
        dead = ZERO
        top[:] = 0
        if threat >= n:  # a combination: the low cell's column, then the crossing cell as a threat
            low = (threat - n) % n
            top[low % w] = low // w + 1
            for r in range(low // w + 1):
                region &= ~_b(r * w + low % w)
            for r in range(0, low // w, 2):  # above(low) and every second cell above it
                dead |= _b(r * w + low % w)
            x = (threat - n) // n
            col, under = x % w, x // w + 1
            top[col] = under + 1
            for r in range(under + 1):
                region &= ~_b(r * w + col)
            dead |= _b(x)
            for r in range(x // w - 1):
                dead |= _b(r * w + col)
        elif threat >= 0:
            col, under = threat % w, threat // w + 1
            top[col] = under + 1
            for r in range(under + 1):
                region &= ~_b(r * w + col)
            for r in range(threat // w + 1):
                dead |= _b(r * w + col)
        np_ = np.int64(0)  # (as count in _nb_instances: _nb_chosen_set compiled once)
        for g in lines:
            if g & mine == ZERO and g & dead == ZERO:
                problems[np_] = g
                np_ += 1
        if _nb_unsolved(w, h, region, occupied, opponent, top, lines, problems[:np_], unsolved) > 0:
            continue
        ints, masks, solved, m = _nb_instances(
            w, h, region, occupied, opponent, top, lines, problems[:np_], rule_mask, cap
        )
        status, chosen = _nb_chosen_set(ints, masks, solved, m, np_, max_nodes)
        if status == 1:
            return controller, threat, ints[chosen], solved[chosen], problems[:np_].copy()
    return _nb_no_verdict()


@njit(cache=True)
def _nb_every_second_row(w, h, first):
    """The cells of rows first, first + 2, ... (counted from the top)."""
    rows = ZERO
    for r in range(first, h, 2):
        rows |= ((ONE << np.uint64(w)) - ONE) << np.uint64(r * w)
    return rows


@njit(cache=True)
def _nb_no_verdict():
    """:func:`_nb_evaluate`'s result when it finds no chosen set."""
    return 0, -1, np.zeros((0, ROW_INTS), np.int64), np.zeros((0, 1), np.uint64), np.zeros(0, np.uint64)


@njit(cache=True)
def _nb_cap(w, h, nlines):
    """A bound on the number of instances: Claimevens and Verticals, Baseinverses,
    inverses, Baseclaims, Afterevens and Befores (17 a group), Specialbefores (per group with
    e empty cells: e choices of s0, fewer than w - e + 1 of x, 2 ** (e - 1) parts)."""
    sb = 0
    for e in range(1, 5):
        sb = max(sb, e * max(w - e, 0) * 2 ** (e - 1))
    return 2 * w * h + w * w + w * w * h * h + w * w * w + (17 + sb) * nlines + 1


ALL_RULES_MASK = _rule_mask(ALL_RULES)


@njit(cache=True)
def nb_decides(w, h, lines, a, b, max_nodes, q, out):
    """What :func:`evaluate` (all rules, ``max_nodes``) decides about question q at (a, b), for
    the inner search: (1 proven, -1 disproven or 0 open, size); when decided, out[:size] holds
    the certificate's kind 2 payload, the bytes :func:`encode_certificate` gives for evaluate's
    verdict (``out`` has room for :func:`payload_bound` bytes).

    The win condition NO_THREAT, tried last, is left out where its verdict cannot answer q:
    with the second player controlling it shows first-wont-win, which answers q0 only; with
    the first, second-wont-win, which answers q1 only (see :func:`_value`). A threat's verdict
    (first-wins, second-wins) answers both."""
    controller = 2 if popcount(a) == popcount(b) else 1
    mask = ALL_RULES_MASK if (controller == 2) == (q == 0) else ALL_RULES_MASK & ~_NO_THREAT
    controller, threat, ints, _, _ = _nb_evaluate(w, h, lines, a, b, mask, max_nodes)
    if controller == 0:
        return 0, 0
    size = _nb_payload(w * h, controller, threat, ints, out)
    if threat == -1:
        return (-1 if controller == 2 else 1), size  # first-wont-win (q0), second-wont-win (q1)
    return (1 if controller == 1 else -1), size  # first-wins, second-wins


def payload_bound(nlines):
    """The most bytes of a kind 2 payload on a board with ``nlines`` groups: each instance of a
    chosen set solves a problem of its own (the search adds none that solves nothing new)."""
    return 5 + nlines * (2 + ROW_INTS)


@njit(cache=True, inline="always")
def _nb_row_before(x, y):
    """Whether instance row x sorts before row y: by rule, then cells, as tuples compare."""
    if x[ROW_RULE] != y[ROW_RULE]:
        return x[ROW_RULE] < y[ROW_RULE]
    for i in range(min(x[ROW_NCELLS], y[ROW_NCELLS])):
        if x[ROW_CELLS + i] != y[ROW_CELLS + i]:
            return x[ROW_CELLS + i] < y[ROW_CELLS + i]
    return x[ROW_NCELLS] < y[ROW_NCELLS]


@njit(cache=True)
def _nb_payload(n, controller, threat, rows, out):
    """Write the kind 2 payload of a chosen set (instance rows, win condition coded as in
    :func:`_win_condition` for n cells) into out, instances sorted as :func:`_verdict` sorts
    them; its length."""
    out[0] = controller
    if threat >= n:
        out[1] = COMBINATION_BYTE
        out[2] = (threat - n) // n
        out[3] = (threat - n) % n
        k = 4
    else:
        out[1] = 255 if threat == -1 else threat
        k = 2
    m = rows.shape[0]
    out[k] = m
    k += 1
    order = np.arange(m)
    for i in range(1, m):  # insertion sort: a chosen set has a few dozen instances at most
        j = i
        while j > 0 and _nb_row_before(rows[order[j]], rows[order[j - 1]]):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    for i in order:
        row = rows[i]
        if k + 2 + row[ROW_NCELLS] > out.shape[0]:
            raise ValueError("a chosen set larger than payload_bound")
        out[k] = row[ROW_RULE]
        out[k + 1] = row[ROW_NCELLS]
        k += 2
        for c in range(row[ROW_NCELLS]):
            out[k] = row[ROW_CELLS + c]
            k += 1
    return k
