"""Placement rules as data (docs/game-format.md): geometry, the checks a rules file must pass,
and :func:`build_game`, which validates the rules, finds their symmetries and compiles the
numba tables of a :class:`~pndb.games.placement.game.Game`.
"""

import json

import numpy as np

from pndb.games.errors import GameError, shown
from pndb.games.interface import is_int
from pndb.games.placement.game import C4_RULES_MAX_EMPTY, C4_RULES_NODES, Game
from pndb.games.placement.kernels import Tables

# Caps on rules data (docs/game-format.md): beyond them a file is refused before any work.
MAX_GAME_FILE = 16 << 20  # bytes of a game file
MAX_PATTERNS = 10_000  # win patterns listed
MAX_SYMMETRIES = 1024  # symmetries listed (each costs 16 KiB of tables and time in every key)


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
