"""Numba kernels of Go on boards of at most 7x7 (docs/go.md): a board is two uint64 bitboards,
``black`` and ``white`` (bit i is point i, row-major), and every board-size difference is data
in a :class:`Tables` tuple, so one compiled set of kernels serves every board.

Adjacency is a shift of the bitboard (one column with the edge columns masked, one row by the
width); groups, liberties and regions are flood fills by repeated dilation. Superko needs the
history, a set the game (game.py) keeps in Python: the kernels give each stone move's board,
and the game drops the ones its history holds.
"""

from collections import namedtuple

import numpy as np

from pndb.games.placement.kernels import lowest_cell, popcount
from pndb.jit import njit

ZERO = np.uint64(0)
ONE = np.uint64(1)

Tables = namedtuple(
    "Tables",
    [
        "masks",  # uint64[3]: the board's points; the points not in the first column; not in the last
        "width",  # uint64[1]: the board's width (a shift by it is a row)
        "perms",  # int64[nsym, npoints]: perms[s, i] is the image of point i under symmetry s
    ],
)


def tables(width, height, symmetries):
    """The Tables of a width x height board with these symmetries (point permutations)."""
    board = not_first = not_last = 0
    for i in range(width * height):
        board |= 1 << i
        if i % width:
            not_first |= 1 << i
        if i % width != width - 1:
            not_last |= 1 << i
    return Tables(
        np.array([board, not_first, not_last], np.uint64),
        np.array([width], np.uint64),
        np.array(symmetries, np.int64).reshape(len(symmetries), width * height),
    )


@njit(cache=True)
def dilate(x, t):
    """The points adjacent to a point of ``x`` (and ``x`` itself), on the board."""
    m = t.masks
    w = t.width[0]
    return (x | ((x << ONE) & m[1]) | ((x >> ONE) & m[2]) | (x << w) | (x >> w)) & m[0]


@njit(cache=True)
def flood(seed, within, t):
    """The points of ``within`` connected to ``seed`` through adjacent points of ``within``."""
    g = seed & within
    while True:
        grown = dilate(g, t) & within
        if grown == g:
            return g
        g = grown


@njit(cache=True)
def place(own, opp, point, t):
    """A stone of the player with stones ``own`` on the empty ``point``: (own, opp, legal) after
    its captures; legal is False when the move is suicide (its group has no liberty after them)."""
    bit = ONE << np.uint64(point)
    own = own | bit
    empty = t.masks[0] & ~(own | opp)
    near = dilate(bit, t) & opp
    while near != ZERO:
        g = flood(ONE << np.uint64(lowest_cell(near)), opp, t)
        near &= ~g
        if dilate(g, t) & empty == ZERO:
            opp &= ~g
    empty = t.masks[0] & ~(own | opp)
    legal = dilate(flood(bit, own, t), t) & empty != ZERO
    return own, opp, legal


@njit(cache=True)
def stone_moves(black, white, black_to_move, t):
    """(n, points, blacks, whites): the n stone moves of the player to move that are not
    suicide, points ascending, and the board each leaves (superko is the game's to apply)."""
    npoints = t.perms.shape[1]
    points = np.empty(npoints, np.int64)
    blacks = np.empty(npoints, np.uint64)
    whites = np.empty(npoints, np.uint64)
    n = 0
    occupied = black | white
    for p in range(npoints):
        if occupied >> np.uint64(p) & ONE:
            continue
        if black_to_move:
            b, w, legal = place(black, white, p, t)
        else:
            w, b, legal = place(white, black, p, t)
        if legal:
            points[n] = p
            blacks[n] = b
            whites[n] = w
            n += 1
    return n, points, blacks, whites


@njit(cache=True)
def margin(black, white, t):
    """Black's area minus White's (Tromp-Taylor): stones, and each empty region that borders
    one colour only counts for that colour."""
    score = popcount(black) - popcount(white)
    empty = t.masks[0] & ~(black | white)
    while empty != ZERO:
        region = flood(ONE << np.uint64(lowest_cell(empty)), empty, t)
        empty &= ~region
        border = dilate(region, t)
        to_black = border & black != ZERO
        to_white = border & white != ZERO
        if to_black and not to_white:
            score += popcount(region)
        elif to_white and not to_black:
            score -= popcount(region)
    return score


@njit(cache=True)
def images(blacks, whites, t):
    """(ib, iw): ib[s, j], iw[s, j] the image of board j under symmetry s."""
    nsym, npoints = t.perms.shape
    n = blacks.shape[0]
    ib = np.zeros((nsym, n), np.uint64)
    iw = np.zeros((nsym, n), np.uint64)
    for s in range(nsym):
        for j in range(n):
            b = ZERO
            w = ZERO
            for p in range(npoints):
                bit = ONE << np.uint64(t.perms[s, p])
                if blacks[j] >> np.uint64(p) & ONE:
                    b |= bit
                if whites[j] >> np.uint64(p) & ONE:
                    w |= bit
            ib[s, j] = b
            iw[s, j] = w
    return ib, iw
