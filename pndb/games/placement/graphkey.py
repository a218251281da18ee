"""Graph keys: one exact key per isomorphism class of the game that remains after a position.

Board keys (``Game.key``) merge positions only through the board's symmetries. Two positions
of a placement game without gravity can be the same game in a much weaker sense: what is left
to play is decided by a few sets of empty cells, and a bijection of the empty cells that maps
those sets onto each other maps one game onto the other, move for move. ``graph_key`` gives such
positions one key, and positions that are not isomorphic in this sense different keys.

What the remaining game of an ongoing position (a, b) depends on, with E its empty cells:

- F1, the empty cells of every pattern the first player can still complete (no second stone),
  and F2 the same for the second player. The first player wins when his stones cover a set of F1
  before the second covers one of F2. Covering a set covers each of its subsets, so the first
  set of F1 to be covered is always a minimal one: only the minimal sets of F1 and of F2
  matter. A pattern's own stones and the other patterns through its cells do not.
- the player to move, and the stones left before the game is drawn (the disc cap, or the board
  being full; every cell of E stays playable without gravity).
- the cells of E in no minimal set of F1 or F2 ("dead" here) only through their number: any
  permutation of E that fixes every minimal set maps the game onto itself, and every
  permutation of those cells does. (prune_dead in pndb.games.placement.patterns shows more: a move there
  is never better than another; the number still matters for the full-board draw and the cap.)
- a rule on the first stone only on the empty board, which keeps its board key.

So the key is the canonical form of a vertex-coloured bipartite graph: the cells of E in some
minimal set (one colour), the minimal sets (coloured by whose they are: both players', the
first's only, the second's only), a set joined to its cells; plus the player to move, the stones
left and the number of dead cells. Equal keys mean isomorphic coloured graphs and equal numbers,
hence isomorphic games with the same value; different keys can still be the same game (a
position where the players' roles are swapped, for one). A game that is over has no key here.

The canonical labelling is nauty's (pynauty, the optional ``graph`` extra): a well-kept
implementation of individualisation-refinement, exact and much faster than anything we would
write; its certificate is canonical for an ordered colour partition, so the classes are always
listed in the fixed order above and their sizes are part of the key.

``GraphKeyedGame`` keys the outer search's DAG by graph keys (`pndb solve --graph-keys`): a
node key is a digest of the graph key, checked against the full key stored beside it, and a
node's position is its representative. ``cell_map`` zips two canonical labellings into an
isomorphism of two positions' games, which the book export uses to map a representative's moves
and certificates back to the board position it stands for.
"""

import hashlib
from typing import NamedTuple

from pndb.jit import njit
import numpy as np
import pynauty  # the optional `graph` extra

from pndb.games.placement.kernels import ZERO, popcount
from pndb.games.placement.patterns import lowest_cell
from pndb.games.errors import GameError
from pndb.games.interface import Children
from pndb.games.placement.game import Position
from pndb.values import GAME_OVER, Status

# the colour classes of the pattern vertices, in the order the partition lists them
BOTH = 0  # a minimal set of F1 and of F2: an open pattern, neither player has a stone in it
FIRST_ONLY = 1
SECOND_ONLY = 2
RESTRICTED_EMPTY_BOARD = b"\x02"  # leads the key of the empty board of a game with a first-move rule


@njit(cache=True)
def minimal_sets(sets, n):
    """Drop from the first ``n`` cell sets every set holding another one (and repeats).

    Sorts them by size in place and returns the number kept (at the front)."""
    for i in range(1, n):  # insertion sort by size
        s = sets[i]
        j = i
        while j > 0 and popcount(sets[j - 1]) > popcount(s):
            sets[j] = sets[j - 1]
            j -= 1
        sets[j] = s
    kept = 0
    for i in range(n):
        s = sets[i]
        held = False
        for j in range(kept):
            if sets[j] & ~s == ZERO:
                held = True
                break
        if not held:
            sets[kept] = s
            kept += 1
    return kept


@njit(cache=True)
def incidence(a, b, cells, win_masks, owners, members):
    """The bipartite graph of an ongoing position without gravity, for graph_key (``cells``:
    the playable cells, ``win_masks``: the patterns; the game's Tables cost more to pass).

    Writes each minimal set's colour class into ``owners`` and its cells, as indices among the
    cells in some minimal set (padded with its first one), into ``members``; sets come sorted by
    class. Returns (sets, cells in some minimal set, dead cells), or sets = -1 when a pattern is
    already complete (the game is over).
    """
    empty = cells & ~(a | b)
    n = win_masks.shape[0]
    f1 = np.empty(n, np.uint64)
    f2 = np.empty(n, np.uint64)
    n1 = 0
    n2 = 0
    for p in range(win_masks.shape[0]):
        m = win_masks[p]
        if m & b == ZERO:
            f1[n1] = m & empty
            n1 += 1
        if m & a == ZERO:
            f2[n2] = m & empty
            n2 += 1
    n1 = minimal_sets(f1, n1)
    n2 = minimal_sets(f2, n2)
    if (n1 > 0 and f1[0] == ZERO) or (n2 > 0 and f2[0] == ZERO):
        return -1, 0, 0, ZERO
    match = np.full(n1, -1, np.int64)  # the same set in F2 (sets within F1 or F2 are distinct)
    in_f1 = np.zeros(n2, np.bool_)
    for i in range(n1):
        for j in range(n2):
            if f1[i] == f2[j]:
                match[i] = j
                in_f1[j] = True
    sets = np.empty(n1 + n2, np.uint64)
    k = 0
    for i in range(n1):
        if match[i] >= 0:
            sets[k] = f1[i]
            owners[k] = BOTH
            k += 1
    for i in range(n1):
        if match[i] < 0:
            sets[k] = f1[i]
            owners[k] = FIRST_ONLY
            k += 1
    for j in range(n2):
        if not in_f1[j]:
            sets[k] = f2[j]
            owners[k] = SECOND_ONLY
            k += 1
    live = ZERO
    for i in range(k):
        live |= sets[i]
    index = np.full(64, -1, np.int64)
    ncells = 0
    rest = live
    while rest != ZERO:
        c = lowest_cell(rest)
        rest &= rest - np.uint64(1)
        index[c] = ncells
        ncells += 1
    for i in range(k):
        rest = sets[i]
        j = 0
        while rest != ZERO:
            members[i, j] = index[lowest_cell(rest)]
            rest &= rest - np.uint64(1)
            j += 1
        while j < members.shape[1]:
            members[i, j] = members[i, 0]
            j += 1
    return k, ncells, popcount(empty & ~live), live


@njit(cache=True)
def canonical_rows(lab, members, ncells, n):
    """Each set's cells as a mask of canonical cell positions, the sets in canonical order.

    ``lab[i]`` is the vertex nauty puts at position i; it keeps every colour class on the
    positions the partition gave it, so cells stay at 0..ncells-1 and sets after them."""
    pos = np.empty(lab.shape[0], np.int64)
    for i in range(lab.shape[0]):
        pos[lab[i]] = i
    rows = np.zeros(n, np.uint64)
    for i in range(n):
        m = ZERO
        for c in members[i]:
            m |= np.uint64(1) << np.uint64(pos[c])
        rows[pos[ncells + i] - ncells] = m
    return rows


_widths = {}  # spec -> the most cells of one win pattern


class PrebuiltGraph(pynauty.Graph):
    """A pynauty Graph as nauty reads it (these four attributes), built valid by construction:
    the base class's checks and copies would take half the time of a key."""

    adjacency_dict = None  # {vertex: list of neighbours}; an edge need only be listed once
    vertex_coloring = None  # list of the colour classes, each an iterable of vertices

    def __init__(self, number_of_vertices, adjacency_dict, vertex_coloring):
        self.number_of_vertices = number_of_vertices
        self.directed = False
        self.adjacency_dict = adjacency_dict
        self.vertex_coloring = vertex_coloring


class ColouredGraph(NamedTuple):
    """The graph graph_key labels canonically, and what it keeps beside the graph."""

    scalars: bytes  # the player to move (1: first), the stones left, the dead cells
    ncells: int  # cell vertices 0..ncells-1; the sets follow, class after class
    live: int  # the mask of the cells in some minimal set: cell vertex i is its i-th lowest cell
    sizes: list  # sets of each class (BOTH, FIRST_ONLY, SECOND_ONLY)
    members: np.ndarray  # int64[sets, width]: each set's cell vertices (padded with its first)
    graph: PrebuiltGraph


def coloured_graph(game, a, b):
    """The ColouredGraph of the ongoing position (a, b) of ``game`` (see the module docstring).

    ValueError for a game with gravity or a position whose game is over."""
    t = game.tables
    if t.gravity[0]:
        raise ValueError("graph keys need a game without gravity")
    a, b = int(a), int(b)
    width = _widths.get(game.spec)
    if width is None:
        width = _widths[game.spec] = max(len(p) for p in game.patterns)
    npat = t.win_masks.shape[0]
    owners = np.empty(2 * npat, np.int64)
    members = np.empty((2 * npat, width), np.int64)
    n, ncells, dead, live = incidence(
        np.uint64(a), np.uint64(b), t.cell_mask[0], t.win_masks, owners, members
    )
    stones_left = int(t.disc_cap[0]) - (a | b).bit_count()
    if n < 0 or stones_left <= 0:
        raise ValueError("the game is over")
    sizes = np.bincount(owners[:n], minlength=3).tolist()
    coloring = [range(ncells)]
    start = ncells
    for size in sizes:
        if size:  # nauty drops an empty class: the sizes are in the key instead
            coloring.append(range(start, start + size))
        start += size
    adjacency = dict(enumerate(members[:n].tolist(), start=ncells))
    graph = PrebuiltGraph(ncells + n, adjacency, coloring)
    scalars = bytes([a.bit_count() == b.bit_count(), stones_left, dead])
    return ColouredGraph(scalars, ncells, int(live), sizes, members[:n], graph)


def graph_key(game, a, b):
    """The graph key (bytes) of the ongoing position (a, b) of ``game`` (no gravity).

    Layout: the player to move (1: first), the stones left before the draw, the dead cells,
    the cells in some minimal set, the sizes of the three classes of sets (2 bytes each), then
    per set in canonical order its cells as a mask of canonical positions (ceil(cells / 8)
    bytes, big-endian): the canonical graph's edges, nothing else. The empty board of a game
    with a first-move rule: its board key after a tag byte. ValueError for a game with gravity
    or a position whose game is over.
    """
    return canonical_form(game, a, b)[0]


def canonical_form(game, a, b):
    """(graph key, the empty cells in canonical order) of the ongoing position (a, b).

    The order lists the cells in some minimal set by their canonical position (nauty's
    labelling), then the dead cells ascending. Two positions with the same graph key have
    isomorphic coloured graphs, and zipping their orders gives an isomorphism of their
    remaining games (see ``cell_map``). The restricted empty board: every cell, ascending."""
    if a | b == 0 and game.tables.first_forbidden[0]:
        return RESTRICTED_EMPTY_BOARD + game.key(Position(0, 0)), list(game.cells)
    g = coloured_graph(game, a, b)
    n = g.members.shape[0]
    lab = np.array(pynauty.canon_label(g.graph), np.int64)
    rows = canonical_rows(lab, g.members, g.ncells, n)
    row_bytes = (g.ncells + 7) // 8
    header = g.scalars + bytes([g.ncells]) + b"".join(size.to_bytes(2, "big") for size in g.sizes)
    key = header + rows.astype(">u8").view(np.uint8).reshape(n, 8)[:, 8 - row_bytes :].tobytes()
    live = [c for c in range(64) if g.live >> c & 1]
    empty = int(game.tables.cell_mask[0]) & ~(int(a) | int(b))
    dead = [c for c in range(64) if (empty & ~g.live) >> c & 1]
    return key, [live[v] for v in lab[: g.ncells].tolist()] + dead


def cell_map(game, pos, other):
    """An isomorphism of the remaining games of two positions with the same graph key: a dict
    from each empty cell of ``pos`` to an empty cell of ``other``. A move on cell c at ``pos``
    leads to a position whose game is the same as the one after a move on map[c] at ``other``,
    and the map stays an isomorphism of the games below (a move only shrinks or drops sets).
    ValueError when the graph keys differ."""
    key, order = canonical_form(game, pos.first, pos.second)
    other_key, other_order = canonical_form(game, other.first, other.second)
    if key != other_key:
        raise ValueError("the two positions have different graph keys")
    return dict(zip(order, other_order))


# ---------------------------------------------------------------- the outer DAG keyed by graph keys


class GraphKeyCollision(GameError):
    """Two different graph keys with the same node key (digest): refused, never merged (a
    one-line error, like a game that cannot be used)."""


class GraphEntry(NamedTuple):
    """What a node key of a graph-keyed DAG stands for: its first position and its graph key."""

    board: bytes  # the canonical board key of the representative position
    graph: bytes  # the full graph key


def node_key(graph):
    """The 16-byte node key of a graph key: a 112-bit blake2b digest, with 0xff in bytes 0 and 8
    so that no board key (two disjoint bitboards) equals one."""
    d = hashlib.blake2b(graph, digest_size=14).digest()
    return b"\xff" + d[:7] + b"\xff" + d[7:]


def is_node_key(key):
    """True for a node key, False for a board key (a position's own bitboards)."""
    return key[0] == 0xFF and key[8] == 0xFF


class Recent(dict):
    """A dict that forgets everything once it holds ``limit`` entries: a memo of what the
    search asks again and again (the nodes near the root), with its memory bounded."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def remember(self, key, value):
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class GraphKeyedGame:
    """A game seen through graph keys: the game-family interface with node keys.

    An ongoing position's key is the node key of its graph key; a position whose game is over
    keeps its board key (its value is the rules'; nothing to merge). ``position(node key)`` is
    the node's representative: the first position met with that graph key, whose board key and
    graph key ``table`` stores (``table.graph(key)`` -> GraphEntry or None; a writable table
    also has ``put_graph(key, entry)``). Every lookup of a stored node key compares the full
    graph key, so a digest collision raises GraphKeyCollision instead of merging two games.
    The other methods are the game's own, on representatives; the inner search, the proof
    records and the certificates found by it stay keyed by board keys.
    """

    def __init__(self, game, table, memo=100_000):
        if game.gravity:
            raise GameError(f"graph keys need a game without gravity; {game.spec} has gravity")
        self.game = game
        self.table = table
        self.nodes = Recent(memo)  # canonical board key -> its key here
        self.representatives = Recent(memo)  # node key -> Position
        self.kids = Recent(memo // 10)  # representative -> Children

    def __getattr__(self, name):  # the rest of the interface: the game's own
        return getattr(self.game, name)

    def entry(self, key):
        """The GraphEntry of a node key; KeyError when the table lacks it."""
        entry = self.table.graph(key)
        if entry is None:
            raise KeyError(f"node {key.hex()} is not in the graph-key table")
        return entry

    def position(self, key):
        if not is_node_key(key):
            return self.game.position(key)
        pos = self.representatives.get(key)
        if pos is None:
            pos = self.representatives.remember(key, self.game.position(self.entry(key).board))
        return pos

    def key(self, pos):
        return self.key_of(self.game.key(pos))

    def evaluator_key(self, key):
        """The board key of a node's representative: the inner solver searches board positions."""
        return self.entry(key).board if is_node_key(key) else key

    def canonical(self, pos):
        raise TypeError("a graph key has no board symmetry: use key(), or the game's own canonical()")

    def key_of(self, board):
        """The key here of the position with canonical board key ``board``."""
        found = self.nodes.get(board)
        if found is not None:
            return found
        pos = self.game.position(board)
        if self.game.status(pos) != Status.ONGOING:
            return self.nodes.remember(board, board)
        graph = graph_key(self.game, pos.first, pos.second)
        key = node_key(graph)
        entry = self.table.graph(key)
        if entry is None:
            put = getattr(self.table, "put_graph", None)
            if put is not None:
                put(key, GraphEntry(board, graph))
        elif entry.graph != graph:
            raise GraphKeyCollision(
                f"graph keys of {board.hex()} and {entry.board.hex()} differ but share node key "
                f"{key.hex()}; refusing to merge them"
            )
        return self.nodes.remember(board, key)

    def cell_map(self, pos, other):
        """The isomorphism of the remaining games of two board positions with one graph key
        (:func:`cell_map`): what the book's walk maps moves and certificates through."""
        return cell_map(self.game, pos, other)

    def children(self, pos):
        """The position's children (see spec.Children) with keys here: node keys for the
        ongoing ones, board keys for finished games."""
        found = self.kids.get(pos)
        if found is None:
            keys, moves, statuses = self.game.children(pos)
            keys = [k if st in GAME_OVER else self.key_of(k) for k, st in zip(keys, statuses)]
            found = self.kids.remember(pos, Children(keys, moves, statuses))
        return found
