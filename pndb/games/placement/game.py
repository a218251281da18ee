"""Game specs: the rules of every placement game as data (docs/game-format.md).

A :class:`Game` holds the rules in plain Python (cells, win patterns, symmetries, ...) and
the same rules as numba :class:`~pndb.games.placement.kernels.Tables`. ``load_game`` turns a spec
string such as ``qango6:castle`` or ``file:my.json`` into a Game.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pndb.games.placement import kernels as K
from pndb.games.placement import notation
from pndb.games.placement.kernels import Tables
from pndb.games.errors import GameError, shown
from pndb.values import PAIRING, Certificate, Status, Value

# Caps on rules data (docs/game-format.md): beyond them a file is refused before any work.
MAX_GAME_FILE = 16 << 20  # bytes of a game file
MAX_PATTERNS = 10_000  # win patterns listed
MAX_SYMMETRIES = 1024  # symmetries listed (each costs 16 KiB of tables and time in every key)


# Allis' rules are tried where at most this many squares are empty: on every position up to 7 x 6
# (compiled, they cost about 0.1-0.3 ms even early on 7 x 6, and whole solves of connect4:7x4 and
# 6x5 need fewer expansions with them everywhere; bench/connect4_rules.py --solve measures it)
C4_RULES_MAX_EMPTY = 42
C4_RULES_NODES = 2000  # chosen-set search nodes per win condition (more decided nothing more)


class Position(NamedTuple):
    """A placement-game position: the first and the second player's stones as bitboards."""

    first: int
    second: int


class Canonical(NamedTuple):
    """A position's canonical key and the index of a symmetry that maps the position onto it."""

    key: bytes
    symmetry: int


class Children(NamedTuple):
    """The children of an ongoing position, in move order, one per symmetry class: canonical
    keys, the moves (cells of the parent's orientation) and each child's status."""

    keys: list
    moves: list
    statuses: list


class Summary(NamedTuple):
    board: str
    cells: int
    symmetries: int
    patterns: int
    rules: list


def key_bytes(a, b):
    """The 16-byte key of a canonical pair of bitboards (big-endian: key order is numeric order)."""
    return int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big")


def keys_from_arrays(ka, kb):
    """16-byte keys from arrays of key halves."""
    raw = np.stack([ka, kb], axis=1).astype(">u8").tobytes()
    return [raw[16 * i : 16 * i + 16] for i in range(len(ka))]


def arrays_from_keys(keys):
    """The key halves of 16-byte keys, as two uint64 arrays: keys_from_arrays undone."""
    halves = np.frombuffer(b"".join(keys), ">u8").reshape(-1, 2).astype(np.uint64)
    return halves[:, 0].copy(), halves[:, 1].copy()


class PositionCodec:
    """How a placement position is written into a database's or a book's metadata (the start
    of a solve): its two bitboards, as the integers "first" and "second"."""

    def fields(self, pos):
        return {"first": pos.first, "second": pos.second}

    def position(self, fields):
        """The position of ``fields`` (a dict); GameError unless they hold two bitboards."""
        first, second = fields.get("first"), fields.get("second")
        if not (is_int(first) and is_int(second)):
            raise GameError("a position's stones are not two bitboards")
        return Position(first, second)


CODEC = PositionCodec()


@dataclass(frozen=True)
class Game:
    spec: str  # canonical spec string, e.g. "mnk:3,3,3" or "qango6:castle"
    width: int
    height: int
    cells: tuple  # playable cells (grid indices), ascending
    patterns: tuple  # minimal win patterns, each a sorted tuple of cells
    symmetries: tuple  # cell permutations of the grid (perm[i] = image of cell i); [0] is identity
    first_move_forbidden: tuple = ()  # cells the first stone of the game may not take
    disc_cap: int = 0  # the game is drawn once this many stones are down (0: board full)
    gravity: bool = False
    allis: bool = False  # Connect Four: Allis' rules decide positions (kind 2 certificates)
    order: tuple = ()  # playable cells, best first
    title: str = ""
    raw_pattern_count: int = 0  # win patterns as listed by the rules, before dropping redundant ones
    # cells drawn in one colour on the board (Qango's areas): for display only, no rule reads them
    areas: tuple = field(default=(), compare=False)
    tables: Tables = field(default=None, compare=False, repr=False)

    @property
    def ncells(self):
        return len(self.cells)

    @property
    def cap(self):
        """Stones after which the game is a draw."""
        return self.disc_cap or self.ncells

    def rules_data(self):
        """The rules as JSON-ready data (the game-file format, symmetries listed)."""
        data = {
            "name": self.spec,
            "width": self.width,
            "height": self.height,
            "cells": list(self.cells),
            "win_patterns": [list(p) for p in self.patterns],
            "symmetries": [list(s) for s in self.symmetries],
            "first_move_forbidden": list(self.first_move_forbidden),
            "disc_cap": self.disc_cap or None,
            "gravity": self.gravity,
            "move_order": list(self.order),
        }
        return data

    def db_name(self):
        """The spec as a file name: ``qango6:castle`` -> ``qango6-castle``."""
        if self.spec.startswith("file:"):
            return "file-" + Path(self.spec[5:]).stem
        return self.spec.replace(":", "-").replace(",", "-")

    # ------------------------------------------------------------ the game-family interface
    # What the search, the inner solver, the book, the integrity check and the CLI use of a game
    # (docs/architecture.md); a new family implements the same methods.

    family = "placement"

    def position(self, key):
        """The (canonical) position a key stands for."""
        return Position(int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big"))

    def canonical(self, pos):
        ka, kb, s = K.canonical(np.uint64(pos.first), np.uint64(pos.second), self.tables.sym_bytes)
        return Canonical(key_bytes(ka, kb), int(s))

    def key(self, pos):
        return self.canonical(pos).key

    def evaluator_key(self, key):
        """The key a leaf's evaluator (the inner solver) gets for a node key: its canonical board
        key, the key itself."""
        return key

    def is_position(self, pos):
        """True when ``pos`` could arise in a game: stones on distinct playable cells, the first
        player one stone ahead or level (whether the moves were legal is not asked)."""
        cells = int(self.tables.cell_mask[0])
        a, b = pos.first, pos.second
        return a & b == 0 and (a | b) & ~cells == 0 and 0 <= a.bit_count() - b.bit_count() <= 1

    def first_to_move(self, pos):
        return pos.first.bit_count() == pos.second.bit_count()

    def rank(self, pos):
        """A topological order of the DAG: every move adds a stone."""
        return (pos.first | pos.second).bit_count()

    def status(self, pos, early=False):
        """The position's Status; with ``early``, an ongoing position whose player to move
        completes a pattern with the next stone is FIRST/SECOND_WINS_NEXT, as children() says."""
        a, b = np.uint64(pos.first), np.uint64(pos.second)
        return Status(int(K.position_status(a, b, self.tables) if early else K.status(a, b, self.tables)))

    def children(self, pos):
        """The children of an ongoing position (see :class:`Children`)."""
        n, moves, ka, kb, st = K.children(np.uint64(pos.first), np.uint64(pos.second), self.tables, True)
        return Children(keys_from_arrays(ka[:n], kb[:n]), moves[:n].tolist(), st[:n].tolist())

    def children_of_many(self, keys):
        """The children of the ongoing positions of many canonical keys, in one kernel call, as
        arrays: (counts, moves, key_a, key_b, statuses), row i holding the counts[i] children of
        position i in move order (as :meth:`children` gives them), the rest of the row unused."""
        a, b = arrays_from_keys(keys)
        return K.children_of_many(a, b, self.tables)

    def after_moves(self, keys, moves):
        """(canonical keys, statuses) of the positions of many canonical keys after one move each
        (in the key's orientation), in one kernel call."""
        a, b = arrays_from_keys(keys)
        ka, kb, st = K.after_moves(a, b, np.array(moves, np.int64), self.tables)
        return keys_from_arrays(ka, kb), [Status(s) for s in st.tolist()]

    def legal_moves(self, pos):
        """The legal moves in move order (whether or not the game is over)."""
        legal = int(K.legal_mask(np.uint64(pos.first), np.uint64(pos.second), self.tables))
        return [cell for cell in self.order if legal >> cell & 1]

    def play(self, pos, move):
        bit = 1 << move
        if self.first_to_move(pos):
            return Position(pos.first | bit, pos.second)
        return Position(pos.first, pos.second | bit)

    def move_to_board(self, symmetry, move):
        """The cell on the board as it stands whose image under ``symmetry`` is ``move`` (a move
        stored against a canonical key)."""
        return self.symmetries[symmetry].index(move)

    def parse_moves(self, text):
        """(position, moves) after the moves of ``text`` from the empty board; MoveError else."""
        a, b, cells = notation.play_moves(self, text)
        return Position(a, b), cells

    def parse_move(self, pos, text):
        return notation.parse_move(self, pos.first, pos.second, text)

    def move_name(self, move):
        return notation.cell_name(self, move)

    def format_moves(self, moves):
        return notation.format_moves(self, moves)

    def render(self, pos):
        return notation.render(self, pos.first, pos.second)

    def outcome_text(self, status):
        return notation.outcome_text(status)

    # ------------------------------------------------------------ knowledge with certificates

    def certificates(self, pos):
        """Certificates that decide more of an ongoing position than nothing: without gravity,
        pairing strategies (docs/book-format.md, kind 1) for the second player (the first does
        not win) and for the first player (the second does not win); in Connect Four, a set of
        Allis' rules (kind 2) once few enough squares are empty for the rules to pay."""
        if self.allis:
            return self.connect4_certificates(pos)
        if self.gravity:
            return []
        from pndb.games.placement import patterns

        out = []
        for defender in (patterns.DEFENDER_SECOND, patterns.DEFENDER_FIRST):
            found = patterns.pairing(self, pos.first, pos.second, defender)
            if found.found:
                payload = bytes([defender, *(c for pair in found.pairs for c in pair)])
                out.append(Certificate(PAIRING, payload))
        return out

    def connect4_certificates(self, pos):
        from pndb.games.connect4 import certificate, compiled

        empty = self.ncells - self.rank(pos)
        if empty > C4_RULES_MAX_EMPTY:
            return []
        verdict = compiled.evaluate(self, pos.first, pos.second, max_nodes=C4_RULES_NODES)
        if verdict.value is None:
            return []
        # the compiled search's set, stored as found: the export checks each certificate it
        # writes against the Python definitions (certificate_holds), `pndb check` every one
        return [Certificate(certificate.CERTIFICATE_KIND, certificate.encode_certificate(verdict))]

    def certificate_value(self, cert):
        """What a certificate proves, as a Value."""
        if cert.kind == PAIRING:
            return Value.FIRST_WONT_WIN if cert.payload[0] == 2 else Value.SECOND_WONT_WIN
        from pndb.games.connect4 import certificate as C

        return Value.named(C.proves(C.decode_certificate(cert.payload)))

    def certificate_holds(self, pos, cert):
        """Whether a certificate holds at ``pos``. Pairings: the definition of
        docs/book-format.md, checked plainly: no gravity; pairs of distinct, empty, playable
        cells, no cell twice; every pattern without a defender stone holds a pair. Connect Four
        rule sets: the rules module's own check of every instance, compatibility and group."""
        payload = cert.payload
        if cert.kind != PAIRING:
            from pndb.games.connect4 import certificate as C

            try:
                C.check_certificate(self, pos.first, pos.second, C.decode_certificate(payload))
            except (C.CertificateError, ValueError):
                return False
            return True
        if self.gravity or len(payload) % 2 != 1 or payload[0] not in (1, 2):
            return False
        cells = list(payload[1:])
        occupied = pos.first | pos.second
        if len(set(cells)) != len(cells) or any(c not in self.cells or occupied >> c & 1 for c in cells):
            return False
        defender = pos.first if payload[0] == 1 else pos.second
        pairs = [(1 << x) | (1 << y) for x, y in zip(cells[::2], cells[1::2])]
        masks = [sum(1 << c for c in p) for p in self.patterns]
        return all(any(m & p == p for p in pairs) for m in masks if not m & defender)

    def summary(self):
        """One row of `pndb games`: board, cells, symmetries, win patterns, special rules."""
        rules = []
        if self.gravity:
            rules.append("gravity")
        if self.first_move_forbidden:
            rules.append(f"first move not on {len(self.first_move_forbidden)} cells")
        if self.disc_cap:
            rules.append(f"draw after {self.disc_cap} stones")
        board = f"{self.width}x{self.height}"
        return Summary(board, self.ncells, len(self.symmetries), len(self.patterns), rules)


# ---------------------------------------------------------------- geometry helpers


def lines(width, height, k):
    """Every k consecutive cells in a row, column or diagonal of a width x height grid."""
    out = []
    for r in range(height):
        for c in range(width):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                rr, cc = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= rr < height and 0 <= cc < width:
                    out.append(tuple((r + dr * i) * width + c + dc * i for i in range(k)))
    return out


def squares(width, height):
    """Every 2x2 square."""
    return [
        (r * width + c, r * width + c + 1, (r + 1) * width + c, (r + 1) * width + c + 1)
        for r in range(height - 1)
        for c in range(width - 1)
    ]


def grid_symmetries(width, height):
    """The symmetries of the grid's rectangle (4) or square (8) as cell permutations."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, width - 1 - c),
        lambda r, c: (height - 1 - r, c),
        lambda r, c: (height - 1 - r, width - 1 - c),
    ]
    if width == height:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (width - 1 - c, height - 1 - r),
            lambda r, c: (c, height - 1 - r),
            lambda r, c: (width - 1 - c, r),
        ]
    perms = []
    for f in maps:
        perm = []
        for i in range(width * height):
            r, c = f(i // width, i % width)
            perm.append(r * width + c)
        perms.append(tuple(perm))
    return perms


def minimal_patterns(patterns):
    """Drop duplicates and every pattern that contains another one (it can never win first).

    Patterns of one size cannot contain each other, so each size bucket is tested at once, as
    bitmasks, against the kept patterns of smaller sizes: thousands of patterns take
    milliseconds where a pairwise pass over sets takes minutes."""
    unique = sorted({tuple(sorted(set(p))) for p in patterns}, key=lambda p: (len(p), p))
    masks = np.array([bits(p) for p in unique], dtype=np.uint64)
    sizes = np.array([len(p) for p in unique], dtype=np.int64)
    keep = np.ones(len(unique), dtype=bool)
    for size in sorted(set(sizes.tolist())):  # (np.unique imports numpy.ma: 45 ms of a start-up)
        bucket = np.flatnonzero(sizes == size)
        smaller = masks[: bucket[0]][keep[: bucket[0]]]
        if not len(smaller):
            continue
        step = max(1, (1 << 20) // len(smaller))  # bounds the block below to 8 MB
        for i in range(0, len(bucket), step):
            rows = bucket[i : i + step]
            block = masks[rows, None] & smaller[None, :]
            keep[rows] = ~(block == smaller[None, :]).any(axis=1)
    return sorted(p for p, k in zip(unique, keep) if k)


def centre_order(width, height, cells):
    """Cells sorted centre first (squared distance to the centre), ties by index."""
    cr, cc = (height - 1) / 2, (width - 1) / 2
    return tuple(sorted(cells, key=lambda i: ((i // width - cr) ** 2 + (i % width - cc) ** 2, i)))


def gravity_columns(width, height, cells):
    """Each column's playable cells from the bottom (last row) up."""
    cellset = set(cells)
    return [
        [r * width + c for r in range(height - 1, -1, -1) if r * width + c in cellset] for c in range(width)
    ]


def preserves(perm, cells, patterns, forbidden, gravity, width, height):
    """True when ``perm`` maps every rule of the game onto itself."""
    cellset = set(cells)
    if {perm[i] for i in cells} != cellset:
        return False
    if {perm[i] for i in forbidden} != set(forbidden):
        return False
    patset = {frozenset(p) for p in patterns}
    if {frozenset(perm[i] for i in p) for p in patterns} != patset:
        return False
    if gravity:
        cols = [tuple(col) for col in gravity_columns(width, height, cells)]
        if {tuple(perm[i] for i in col) for col in cols} != set(cols):
            return False
    return True


def check_group(perms, ngrid):
    """Raise GameError unless perms are distinct permutations of the grid that form a group;
    return generators of it (at most log2 of its order).

    Why not every product (quadratic: minutes for 5040 permutations): a finite set S holding
    the identity is a group when S is closed under right multiplication by a set G of its
    elements that generates it, since every element of <G> is a product of generators. So the
    closure of the identity under the generators is built, each element times each generator
    once, and must stay inside S; every element of S not reached yet becomes a generator."""
    identity = tuple(range(ngrid))
    for p in perms:
        if len(p) != ngrid or sorted(p) != list(identity):
            raise GameError(f"a symmetry is not a permutation of the {ngrid} grid cells")
    group = set(perms)
    if len(group) != len(perms):
        raise GameError("symmetries lists a permutation twice")
    if identity not in group:
        raise GameError("symmetries must include the identity permutation")
    reached = {identity}
    elements = [identity]
    gens = []
    for p in perms:
        if p in reached:
            continue
        gens.append(p)
        todo = [(h, (p,)) for h in elements]  # the elements so far are closed under the older generators
        while todo:
            h, by = todo.pop()
            for g in by:
                hg = tuple(map(h.__getitem__, g))
                if hg not in group:
                    raise GameError("symmetries are not closed under composition (not a group)")
                if hg not in reached:
                    reached.add(hg)
                    elements.append(hg)
                    todo.append((hg, tuple(gens)))
    return gens


# ---------------------------------------------------------------- building a Game


def build_game(
    spec,
    width,
    height,
    patterns,
    cells=None,
    symmetries="auto",
    first_move_forbidden=(),
    disc_cap=None,
    gravity=False,
    order=None,
    title="",
    areas=(),
    allis=False,
):
    """Validate the rules, find symmetries if asked, and compile the numba tables."""
    ngrid = width * height
    if width < 1 or height < 1 or ngrid > 64:
        raise GameError(f"board {shown(width, 20)}x{shown(height, 20)} must have between 1 and 64 cells")
    if width > 26 and not gravity:
        raise GameError(f"board {width}x{height}: at most 26 columns (cells are named a..z)")
    cells = tuple(sorted(set(range(ngrid) if cells is None else cells)))
    if not cells or any(not 0 <= c < ngrid for c in cells):
        raise GameError(f"cells must be grid indices 0..{ngrid - 1}")
    cellset = set(cells)
    raw = [tuple(p) for p in patterns]
    if not raw:
        raise GameError("a game needs at least one win pattern")
    for p in raw:
        if not p or any(c not in cellset for c in p):
            raise GameError(f"win pattern {shown(list(p))} uses a cell that is not on the board")
    pats = minimal_patterns(raw)
    forbidden = tuple(sorted(set(first_move_forbidden)))
    if any(c not in cellset for c in forbidden):
        raise GameError("first_move_forbidden names a cell that is not on the board")
    if set(forbidden) >= cellset:
        raise GameError("first_move_forbidden leaves no legal first move")
    if disc_cap is not None and not 1 <= disc_cap <= len(cells):
        raise GameError(f"disc_cap must be between 1 and {len(cells)} (or null: none), not {shown(disc_cap)}")
    if disc_cap in (None, len(cells)):
        disc_cap = 0  # the Game's word for no cap: the game goes on until the board is full
    if symmetries == "auto":
        syms = [
            p
            for p in grid_symmetries(width, height)
            if preserves(p, cells, pats, forbidden, gravity, width, height)
        ]
    else:
        syms = [tuple(p) for p in symmetries]
        for p in check_group(syms, ngrid):  # generators preserve the rules, so the group does
            if not preserves(p, cells, pats, forbidden, gravity, width, height):
                raise GameError("a listed symmetry does not map the rules onto themselves")
    identity = tuple(range(ngrid))
    syms = [identity] + sorted(set(syms) - {identity})
    if order is None:
        order = centre_order(width, height, cells)
    else:
        order = tuple(order)
        if sorted(order) != list(cells):
            raise GameError("move_order must list every playable cell once")
    game = Game(
        spec=spec,
        width=width,
        height=height,
        cells=cells,
        patterns=tuple(pats),
        symmetries=tuple(syms),
        first_move_forbidden=forbidden,
        disc_cap=disc_cap,
        gravity=bool(gravity),
        allis=allis,
        order=tuple(order),
        title=title,
        raw_pattern_count=len(raw),
        areas=tuple(tuple(a) for a in areas),
    )
    object.__setattr__(game, "tables", make_tables(game))
    return game


def bits(cells):
    m = 0
    for c in cells:
        m |= 1 << c
    return m


def byte_tables(images):
    """Byte lookup tables of bit permutations (kernels.permute): ``images`` uint64[n, 64], the
    image bit of each cell under each of n maps, to uint64[n, 8, 256], the image of byte value
    v at byte j. Each v is v without its lowest bit plus that bit's image, so 255 array steps
    build the tables of every map at once."""
    by_byte = images.reshape(len(images), 8, 8)
    out = np.zeros((len(images), 8, 256), dtype=np.uint64)
    for v in range(1, 256):
        out[:, :, v] = out[:, :, v & (v - 1)] | by_byte[:, :, (v & -v).bit_length() - 1]
    return out


def make_tables(game):
    """The numba Tables of a game."""
    u64 = np.uint64
    win_masks = np.array([bits(p) for p in game.patterns], dtype=u64)
    by_cell = [win_masks[(win_masks >> u64(c)) & u64(1) == u64(1)] for c in range(64)]
    k = max(1, max(len(x) for x in by_cell))
    masks_by_cell = np.zeros((64, k), dtype=u64)
    for c, ms in enumerate(by_cell):
        masks_by_cell[c, : len(ms)] = ms
    mask_counts = np.array([len(x) for x in by_cell], dtype=np.int64)
    perms = np.array(game.symmetries, dtype=np.uint64)
    images = np.zeros((len(perms), 64), dtype=u64)
    images[:, : perms.shape[1]] = u64(1) << perms
    cell_images = np.ascontiguousarray(images.T)
    ranks = np.zeros((1, 64), dtype=u64)  # a cell's image in rank_bytes: the bit of its rank
    ranks[0, game.order] = u64(1) << np.arange(len(game.order), dtype=u64)
    cols = gravity_columns(game.width, game.height, game.cells) if game.gravity else [[]]
    columns = -np.ones((len(cols), max(1, game.height)), dtype=np.int64)
    for c, col in enumerate(cols):
        columns[c, : len(col)] = col
    return Tables(
        cell_mask=np.array([bits(game.cells)], dtype=u64),
        win_masks=win_masks,
        masks_by_cell=masks_by_cell,
        mask_counts=mask_counts,
        sym_bytes=byte_tables(images),
        cell_images=cell_images,
        first_forbidden=np.array([bits(game.first_move_forbidden)], dtype=u64),
        disc_cap=np.array([game.cap], dtype=np.int64),
        gravity=np.array([1 if game.gravity else 0], dtype=np.int64),
        columns=columns,
        order=np.array(game.order, dtype=np.int64),
        rank_bytes=byte_tables(ranks),
        **connect4_rules_tables(game),
    )


def connect4_rules_tables(game):
    """The Tables fields of Allis' rules: what Game.connect4_certificates uses, so that the
    inner search decides by the rules exactly where the outer search finds a certificate. They
    are Connect Four's: a game whose kind switches them on (``allis``: the registry's connect4
    kind, also for rules read from a book or a database whose spec names it) must have Connect
    Four's rules, else a GameError."""
    if not game.allis:
        return {"rules_lines": np.zeros(0, np.uint64), "rules_limits": np.zeros(2, np.int64)}
    differences = [
        what
        for what, differs in (
            ("a disc cap", game.disc_cap),
            ("a first-move rule", game.first_move_forbidden),
            ("no gravity", not game.gravity),
            ("holes in the board", game.ncells != game.width * game.height),
            ("other win patterns", set(game.patterns) != set(lines(game.width, game.height, 4))),
        )
        if differs
    ]
    if differences:
        raise GameError(
            f"rules named {shown(game.spec)} are not Connect Four's: they have {' and '.join(differences)} "
            "(Allis' rules, which pndb applies to Connect Four, need its own rules)"
        )
    from pndb.games.connect4 import definitions as C

    return {
        "rules_lines": C.lines_of(game),
        "rules_limits": np.array([C4_RULES_NODES, C4_RULES_MAX_EMPTY], np.int64),
    }


# ---------------------------------------------------------------- the built-in games

QANGO6_AREAS = [
    (0, 1, 6), (4, 5, 11), (24, 30, 31), (29, 34, 35),
    (2, 7, 12), (3, 10, 17), (18, 25, 32), (23, 28, 33),
    (8, 13, 14), (9, 15, 16), (19, 20, 26), (21, 22, 27),
]  # fmt: skip
QANGO7_AREAS = [
    (0, 1, 7), (5, 6, 13), (35, 42, 43), (41, 47, 48),
    (2, 8, 14), (4, 12, 20), (28, 36, 44), (34, 40, 46),
    (3, 9, 10), (11, 18, 19), (15, 21, 22), (16, 17, 23),
    (25, 31, 32), (26, 27, 33), (29, 30, 37), (38, 39, 45),
]  # fmt: skip
QANGO6_CASTLE = (7, 10, 14, 15, 20, 21, 25, 28)
QANGO6_INNER = (7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22, 25, 26, 27, 28)
QANGO7PLUS_REMOVED = (0, 1, 7, 5, 6, 13, 35, 42, 43, 41, 47, 48)
QANGO7PLUS_TOURNAMENT = (11, 19, 29, 37)  # e2, f3, b5, c6


def qango_patterns(n, areas):
    return lines(n, n, 5) + squares(n, n) + list(areas)


def parse_ints(text, count, spec):
    try:
        vals = [int(x) for x in text.replace("x", ",").split(",")]
    except ValueError:
        vals = []
    if len(vals) != count or min(vals) < 1:
        raise GameError(f"malformed game spec '{shown(spec)}'")
    return vals


def mnk(m, n, k, spec):
    if k > max(m, n):
        raise GameError(f"{shown(spec)}: K does not fit on the board")
    if m * n > 64:
        raise GameError(f"{shown(spec)}: M*N must be at most 64")
    if m > 26:
        raise GameError(f"{shown(spec)}: at most 26 columns (a..z)")
    return build_game(spec, m, n, lines(m, n, k), title=f"{m},{n},{k}-game")


def qango6(variant, spec):
    forbidden = {"": (), "castle": QANGO6_CASTLE, "tournament": QANGO6_INNER}
    if variant not in forbidden:
        raise GameError(f"unknown Qango 6 variant '{shown(variant)}' (castle, tournament)")
    name = "qango6" + (":" + variant if variant else "")
    return build_game(
        name, 6, 6, qango_patterns(6, QANGO6_AREAS), first_move_forbidden=forbidden[variant], title="Qango 6",
        areas=QANGO6_AREAS,
    )  # fmt: skip


def qango7(variant, spec):
    if variant not in ("", "nocap"):
        raise GameError(f"unknown Qango 7 variant '{shown(variant)}' (nocap)")
    return build_game(
        spec, 7, 7, qango_patterns(7, QANGO7_AREAS), disc_cap=None if variant else 40, title="Qango 7",
        areas=QANGO7_AREAS,
    )  # fmt: skip


def qango7plus(variant, spec):
    cells = [c for c in range(49) if c not in QANGO7PLUS_REMOVED]
    cellset = set(cells)
    pats = [p for p in qango_patterns(7, QANGO7_AREAS) if set(p) <= cellset]
    if variant == "":
        forbidden = ()
    elif variant == "edges":
        inner = [c for c in cells if all(n in cellset for n in side_neighbours(c, 7, 7))]
        forbidden = tuple(inner)
    elif variant == "tournament":
        forbidden = tuple(c for c in cells if c not in QANGO7PLUS_TOURNAMENT)
    else:
        raise GameError(f"unknown Qango 7 Plus variant '{shown(variant)}' (edges, tournament)")
    areas = [a for a in QANGO7_AREAS if set(a) <= cellset]
    return build_game(
        spec, 7, 7, pats, cells=cells, first_move_forbidden=forbidden, title="Qango 7 Plus", areas=areas
    )


def side_neighbours(cell, width, height):
    """The 4 grid positions sharing a side with cell (off-grid ones as -1): a cell is on the
    edge of a board when one of them is not a playable cell."""
    r, c = divmod(cell, width)
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        out.append(rr * width + cc if 0 <= rr < height and 0 <= cc < width else -1)
    return out


def connect4(args, spec):
    w, h = parse_ints(args or "7x6", 2, spec)
    if w * h > 64:
        raise GameError(f"{shown(spec)}: W*H must be at most 64")
    if max(w, h) < 4:
        raise GameError(f"{shown(spec)}: a 4 in a row does not fit")
    name = f"connect4:{w}x{h}"
    return build_game(name, w, h, lines(w, h, 4), gravity=True, title=f"Connect Four {w}x{h}", allis=True)


def load_file(path, spec):
    """A placement game described by a JSON file (docs/game-format.md)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_GAME_FILE + 1)
    except OSError as e:
        raise GameError(f"cannot read game file {shown(path)}: {e.strerror}") from None
    if len(raw) > MAX_GAME_FILE:
        raise GameError(f"game file {shown(path)} is too large (at most {MAX_GAME_FILE >> 20} MiB)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GameError(f"game file {shown(path)} is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise GameError(f"game file {shown(path)} is not valid JSON: {e.msg} at line {e.lineno}") from None
    except ValueError as e:  # an integer of thousands of digits
        raise GameError(f"game file {shown(path)} is not usable JSON: {shown(e)}") from None
    except RecursionError:
        raise GameError(f"game file {shown(path)} is nested too deeply to be a game") from None
    return game_from_rules(data, spec)


RULE_KEYS = ("name", "width", "height", "cells", "win_patterns", "symmetries", "first_move_forbidden",
             "disc_cap", "gravity", "move_order")  # fmt: skip


def kind_of(value):
    """The JSON type of a value, as an error message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    for kind, name in ((int, "an integer"), (float, "a decimal number"), (str, "a string"), (list, "a list")):
        if isinstance(value, kind):
            return name
    return "an object"


def is_int(value):
    """A JSON integer: true/false and 3.0 are not (Python's bool is an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_field(value, key):
    if not is_int(value):
        raise GameError(f"rules: {key} must be an integer, not {kind_of(value)}")
    return value


def cell_list(value, key):
    """A JSON list of integers (cell indices), or a GameError naming the key."""
    if not isinstance(value, list):
        raise GameError(f"rules: {key} must be a list of cell indices, not {kind_of(value)}")
    for x in value:
        if not is_int(x):
            raise GameError(f"rules: {key} must be a list of cell indices, not hold {kind_of(x)}")
    return value


def cell_lists(value, key, cap, what):
    """A JSON list of at most ``cap`` lists of cell indices."""
    if not isinstance(value, list):
        raise GameError(f"rules: {key} must be a list of lists of cell indices, not {kind_of(value)}")
    if len(value) > cap:
        raise GameError(f"rules: {key} lists {len(value)} {what}; at most {cap} are allowed")
    return [tuple(cell_list(p, f"{key}[{i}]")) for i, p in enumerate(value)]


def game_from_rules(data, spec, allis=False):
    """A Game from rules data (the game-file format), every field checked for its JSON type
    (a missing optional field, or null, takes its default); ``allis``: with Allis' rules (the
    registry says which games have them)."""
    if not isinstance(data, dict):
        raise GameError("rules data must be a JSON object")
    extra = set(data) - set(RULE_KEYS)
    if extra:
        raise GameError(f"unknown key(s) in rules data: {shown(', '.join(sorted(extra)))}")
    for key in ("width", "height", "win_patterns"):
        if key not in data:
            raise GameError(f"rules data lacks the key '{key}'")
    get = data.get
    symmetries = "auto" if get("symmetries") is None else get("symmetries")
    if symmetries != "auto":
        symmetries = cell_lists(symmetries, "symmetries", MAX_SYMMETRIES, "symmetries")
    gravity = False if get("gravity") is None else get("gravity")
    if not isinstance(gravity, bool):
        raise GameError(f"rules: gravity must be true or false, not {kind_of(gravity)}")
    name = get("name")
    if name is not None and not isinstance(name, str):
        raise GameError(f"rules: name must be a string, not {kind_of(name)}")
    optional = {key: None if get(key) is None else cell_list(get(key), key)
                for key in ("cells", "first_move_forbidden", "move_order")}  # fmt: skip
    if optional["cells"] is not None and len(set(optional["cells"])) != len(optional["cells"]):
        raise GameError("rules: cells lists a cell twice")
    return build_game(
        spec,
        int_field(data["width"], "width"),
        int_field(data["height"], "height"),
        cell_lists(data["win_patterns"], "win_patterns", MAX_PATTERNS, "win patterns"),
        cells=optional["cells"],
        symmetries=symmetries,
        first_move_forbidden=optional["first_move_forbidden"] or (),
        disc_cap=None if get("disc_cap") is None else int_field(get("disc_cap"), "disc_cap"),
        gravity=gravity,
        order=optional["move_order"],
        title=shown(spec if name is None else name, 80),
        allis=allis,
    )
