"""The Go family's game (docs/go.md): :class:`Game` implements the game-family interface
(docs/architecture.md) on :class:`Position`s that carry their history, and :func:`build` and
:func:`from_rules` make it from a spec or from stored rules.

A position is the board, the player to move, the passes just played and the set of boards of
the game so far: under positional superko nothing less decides what follows, so a node keyed by
all of it holds a value that no other path can make wrong (docs/go.md, "Repetitions"). Its key is
a 16-byte digest of the canonical encoding; the game keeps each keyed position (a digest cannot
be read back) and compares it at every lookup, so a collision is an error, never a merge.
"""

import hashlib
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from pndb.games.errors import GameError, MoveError, shown
from pndb.games.go import kernels as K
from pndb.games.go import notation
from pndb.games.go.notation import PASS
from pndb.games.interface import Canonical, Children, PerPosition, Summary, is_int
from pndb.games.placement.rules import grid_symmetries
from pndb.values import NO_MOVE, Certificate, Status, Value

MAX_SIDE = 7  # boards up to 7x7 (49 points in a uint64)
HALF = 64  # a board code is black | white << HALF
LOW = (1 << HALF) - 1
MARGIN_BOUND = 3  # a certificate kind: the komi alone decides (Game.certificates)
RULES = "area scoring (Tromp-Taylor), positional superko, no suicide, two passes end"
SPEC = re.compile(r"([0-9]+)x([0-9]+)(?::komi=(.*))?", re.IGNORECASE)


class Position(NamedTuple):
    """A Go position: the board as two bitboards, the player to move, the passes just played
    (0 or 1; 2 once the game is over) and the codes (:func:`code`) of every board of the game
    so far, this one included."""

    black: int
    white: int
    black_to_move: bool
    passes: int
    history: frozenset

    @property
    def board(self):
        return code(self.black, self.white)


def code(black, white):
    """A board as one integer: the history's element."""
    return black | white << HALF


class PositionCodec:
    """How a Go position is written into a database's or a book's metadata: its bitboards,
    player to move, passes and history (each board as [black, white])."""

    def fields(self, pos):
        return {
            "black": pos.black, "white": pos.white, "black_to_move": pos.black_to_move,
            "passes": pos.passes, "history": sorted([c & LOW, c >> HALF] for c in pos.history),
        }  # fmt: skip

    def position(self, fields):
        """The position of ``fields``; GameError unless they hold one."""
        history = fields.get("history")
        ints = [fields.get("black"), fields.get("white"), fields.get("passes")]
        if not (
            all(is_int(x) and x >= 0 for x in ints)
            and isinstance(fields.get("black_to_move"), bool)
            and isinstance(history, list)
            and all(
                isinstance(h, list) and len(h) == 2 and all(is_int(x) and x >= 0 for x in h) for h in history
            )
        ):
            raise GameError("a Go position's fields are not bitboards, a side to move, passes and a history")
        black, white, passes = ints
        return Position(
            black, white, fields["black_to_move"], passes, frozenset(code(b, w) for b, w in history)
        )


CODEC = PositionCodec()


@dataclass(frozen=True)
class Game(PerPosition):
    spec: str  # canonical: go:WxH, or go:WxH:komi=K when K is not 0
    width: int
    height: int
    komi: int
    symmetries: tuple  # point permutations (perm[i] = image of point i); [0] is the identity
    order: tuple  # the points, nearest the centre first (stone moves are tried in this order)
    title: str = ""
    tables: K.Tables = field(default=None, compare=False, repr=False)
    # key -> the canonical position it stands for (see the module's docstring)
    positions: dict = field(default_factory=dict, compare=False, repr=False)

    family = "go"
    gravity = False  # (what the layers above ask of every game)
    areas = ()

    @property
    def cells(self):
        return tuple(range(self.width * self.height))

    @property
    def ncells(self):
        return self.width * self.height

    def komi_range(self):
        """The komi values a margin can equal: the board's points either way."""
        return -self.ncells, self.ncells

    def with_komi(self, komi):
        """This board at another komi."""
        return make_game(self.width, self.height, komi, f"go:{self.width}x{self.height}:komi={komi}")

    def rules_data(self):
        return {"name": self.spec, "family": "go", "width": self.width, "height": self.height,
                "komi": self.komi, "rules": RULES}  # fmt: skip

    def db_name(self):
        """``go:3x3:komi=-2`` -> ``go-3x3-komi-2``."""
        return self.spec.replace(":", "-").replace("=", "")

    # ------------------------------------------------------------ the rules

    def start(self):
        return Position(0, 0, True, 0, frozenset([0]))

    def over(self, pos):
        return pos.passes >= 2

    def margin(self, pos):
        """Black's area minus White's (docs/go.md, the score)."""
        return int(K.margin(np.uint64(pos.black), np.uint64(pos.white), self.tables))

    def stone_moves(self, pos):
        """{point: (black, white) after it} for every legal stone move (no suicide, no superko)."""
        n, points, blacks, whites = K.stone_moves(
            np.uint64(pos.black), np.uint64(pos.white), pos.black_to_move, self.tables
        )
        out = {}
        for p, b, w in zip(points[:n].tolist(), blacks[:n].tolist(), whites[:n].tolist()):
            if code(b, w) not in pos.history:
                out[p] = (b, w)
        return out

    def illegal_reason(self, pos, point):
        """Why a stone on the empty ``point`` is illegal ('' when it is legal)."""
        mine, theirs = (pos.black, pos.white) if pos.black_to_move else (pos.white, pos.black)
        own, opp, legal = K.place(np.uint64(mine), np.uint64(theirs), point, self.tables)
        if not legal:
            return "suicide (the stone's group would have no liberty)"
        board = code(int(own), int(opp)) if pos.black_to_move else code(int(opp), int(own))
        if board in pos.history:
            return "it repeats an earlier board (positional superko)"
        return ""

    # ------------------------------------------------------------ the game-family interface

    def position(self, key):
        """The canonical position of a key this game has made (by key() or children())."""
        try:
            return self.positions[key]
        except KeyError:
            raise GameError(f"no Go position is known for key {key.hex()}") from None

    def canonical(self, pos):
        """The digest of the least encoding over the symmetries (the board, then the sorted
        history, each mapped by the same symmetry), and that symmetry. The canonical position is
        kept under its key."""
        boards = [pos.board] + sorted(pos.history)
        ib, iw = K.images(
            np.array([c & LOW for c in boards], np.uint64), np.array([c >> HALF for c in boards], np.uint64),
            self.tables,
        )  # fmt: skip
        best = best_s = None
        for s in range(len(self.symmetries)):
            b, w = ib[s].tolist(), iw[s].tolist()
            form = ((b[0], w[0]), sorted(zip(b[1:], w[1:])))
            if best is None or form < best:
                best, best_s = form, s
        (black, white), history = best
        canon = Position(
            black, white, pos.black_to_move, pos.passes, frozenset(code(b, w) for b, w in history)
        )
        key = hashlib.blake2b(self.encoding(canon), digest_size=16).digest()
        known = self.positions.setdefault(key, canon)
        if known != canon:
            raise GameError(f"two Go positions share the key {key.hex()}; refusing to merge them")
        return Canonical(key, best_s)

    def key(self, pos):
        return self.canonical(pos).key

    def encoding(self, pos):
        """The bytes a canonical position's key digests: board size, player to move, passes,
        the board and the history's boards in order, each board as its two bitboards."""
        boards = sorted((c & LOW, c >> HALF) for c in pos.history)
        return b"".join(
            [bytes([self.width, self.height, pos.black_to_move, pos.passes])]
            + [b.to_bytes(8, "big") + w.to_bytes(8, "big") for b, w in [(pos.black, pos.white), *boards]]
        )

    # A key is a digest and cannot be read back: a database keeps, beside each node, the record
    # of the position its key names (pndb.games.stored), and the game takes it back here.
    stored_positions = True

    def position_record(self, key):
        """The record of the position of a key this game has made: its encoding."""
        return self.encoding(self.position(key))

    def restore(self, key, record):
        """The position of a stored record, known from now on under ``key``; GameError when the
        record is not a position of this board or its key is not ``key``."""
        raw, n = bytes(record), self.ncells
        ok = len(raw) >= 36 and (len(raw) - 20) % 16 == 0 and raw[:2] == bytes([self.width, self.height])
        ok = ok and raw[2] in (0, 1) and raw[3] in (0, 1, 2)
        if ok:
            halves = [int.from_bytes(raw[i : i + 8], "big") for i in range(4, len(raw), 8)]
            boards = list(zip(halves[::2], halves[1::2]))
            (black, white), history = boards[0], boards[1:]
            pos = Position(black, white, bool(raw[2]), raw[3], frozenset(code(b, w) for b, w in history))
            ok = self.is_position(pos) and len(history) == len(pos.history) and all(
                (b | w) >> n == 0 for b, w in boards)  # fmt: skip
        if not ok or self.key(pos) != key or self.positions[key] != pos:
            raise GameError(f"the stored position of key {key.hex()} is not the Go position that key names")
        return pos

    def evaluator_key(self, key):
        return key

    def is_position(self, pos):
        """True when ``pos`` could be a position of this board: stones on distinct points, passes
        0 to 2, its board in its history, every board of the history on the board."""
        board = (1 << self.ncells) - 1
        boards = [(c & LOW, c >> HALF) for c in pos.history]
        return (
            0 <= pos.passes <= 2 and pos.board in pos.history
            and all(b & w == 0 and (b | w) & ~board == 0 for b, w in boards)
        )  # fmt: skip

    def owner(self, pos, cell):
        """Who holds ``cell``: 1 Black, 2 White, 0 nobody."""
        return 1 if pos.black >> cell & 1 else 2 if pos.white >> cell & 1 else 0

    def completed(self, pos, player):
        return ()  # (no win patterns in Go)

    def first_to_move(self, pos):
        return pos.black_to_move

    def rank(self, pos):
        """Grows along every move: a stone adds a board to the history, a pass adds a pass."""
        return 2 * len(pos.history) + pos.passes

    def status(self, pos, early=False):
        if not self.over(pos):
            return Status.ONGOING
        m = self.margin(pos)
        return Status.FIRST_WON if m > self.komi else Status.DRAW if m == self.komi else Status.SECOND_WON

    def legal_moves(self, pos):
        """Stone moves in move order, then pass; none once the game is over."""
        if self.over(pos):
            return []
        stones = self.stone_moves(pos)
        return [p for p in self.order if p in stones] + [PASS]

    def play(self, pos, move):
        if move == PASS:
            return pos._replace(black_to_move=not pos.black_to_move, passes=pos.passes + 1)
        mine, theirs = (pos.black, pos.white) if pos.black_to_move else (pos.white, pos.black)
        own, opp, _ = K.place(np.uint64(mine), np.uint64(theirs), move, self.tables)
        black, white = (int(own), int(opp)) if pos.black_to_move else (int(opp), int(own))
        return Position(black, white, not pos.black_to_move, 0, pos.history | {code(black, white)})

    def children(self, pos):
        """The children of an ongoing position, in move order, one per key."""
        keys, moves, statuses, seen = [], [], [], set()
        for move in self.legal_moves(pos):
            child = self.play(pos, move)
            key = self.key(child)
            if key not in seen:
                seen.add(key)
                keys.append(key)
                moves.append(move)
                statuses.append(self.status(child))
        return Children(keys, moves, statuses)

    def move_to_board(self, symmetry, move):
        return PASS if move == PASS else self.symmetries[symmetry].index(move)

    def parse_moves(self, text):
        """(position, moves) after the moves of ``text`` from the start; MoveError else."""
        pos, moves = self.start(), []
        for number, token in enumerate(notation.tokens(text), 1):
            move = notation.token_move(self, pos, token, number)
            pos = self.play(pos, move)
            moves.append(move)
        return pos, moves

    def parse_move(self, pos, text):
        found = notation.tokens(text)
        if len(found) != 1:
            raise MoveError(f"expected one move, got '{shown(text)}'")
        return notation.token_move(self, pos, found[0], 1)

    def move_name(self, move):
        return notation.move_name(self, move)

    def format_moves(self, moves):
        return notation.format_moves(self, moves)

    def render(self, pos):
        return notation.render(self, pos)

    def outcome_text(self, status):
        return notation.outcome_text(status)

    def position_text(self, pos):
        return notation.position_text(self, pos)

    def board_name(self, move):
        return notation.move_name(self, move)

    # ------------------------------------------------------------ its books (docs/go-book-format.md)
    # (the batched methods of the book's walk are PerPosition's: a Go book is small)

    def book_rules_problem(self, rules):
        return None  # (from_rules takes only the rules this game writes)

    def record_problems(self, a, b, moves):
        """{reason: where it holds} of a book's records: a key is a digest (nothing to check),
        a move a point, a pass or 255 (none)."""
        moves = np.asarray(moves)
        stray = (moves >= self.ncells) & (moves != PASS) & (moves != NO_MOVE)
        return {"its move is not a point or a pass": stray}

    def certificate_problem(self, key, cert, value):
        """What is structurally wrong with a book's certificate whose record has ``value``, or
        None: the margin bound's kind and empty payload, a value that includes what it proves."""
        if cert.kind != MARGIN_BOUND:
            return f"kind {cert.kind} is unknown"
        if cert.payload:
            return "a margin bound has no payload"
        proven = self.bound_value()
        if proven is None:
            return f"the margin bound proves nothing at komi {self.komi}"
        if value.lo < proven.lo or value.hi > proven.hi:
            return f"its record's value {value.name} does not include what the margin bound proves"
        return None

    def certificates(self, pos):
        """The margin bound (kind 3, no payload) where the komi alone decides a question: no
        margin exceeds the board's points either way, so at komi K >= W*H Black does not win
        (and at K > W*H White wins), at K <= -W*H White does not win (and below, Black wins)."""
        return [Certificate(MARGIN_BOUND, b"")] if self.bound_value() is not None else []

    def bound_value(self):
        """What the margin bound proves at this komi, or None."""
        n, k = self.ncells, self.komi
        if k > n:
            return Value.SECOND_WINS
        if k == n:
            return Value.FIRST_WONT_WIN
        if k == -n:
            return Value.SECOND_WONT_WIN
        return Value.FIRST_WINS if k < -n else None

    def certificate_value(self, cert):
        if cert.kind != MARGIN_BOUND:
            raise GameError(f"Go has no certificates of kind {cert.kind}")
        return self.bound_value() or Value.UNKNOWN

    def certificate_holds(self, pos, cert):
        return cert == Certificate(MARGIN_BOUND, b"") and self.bound_value() is not None

    def summary(self):
        rules = [f"komi {self.komi}", "area scoring", "positional superko"]
        return Summary(f"{self.width}x{self.height}", self.ncells, len(self.symmetries), 0, rules)


def make_game(width, height, komi, spec):
    """The game of a board and a komi (checked: GameError with one line)."""
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise GameError(f"{shown(spec)}: a Go board is 1x1 to {MAX_SIDE}x{MAX_SIDE}")
    if abs(komi) > width * height + 1:
        raise GameError(
            f"{shown(spec)}: the komi must be at most {width * height + 1} either way "
            "(the board's points and one)"
        )
    symmetries = tuple(grid_symmetries(width, height))
    centre = ((width - 1) / 2, (height - 1) / 2)
    order = tuple(sorted(range(width * height), key=lambda p: (
        abs(p % width - centre[0]) + abs(p // width - centre[1]), p)))  # fmt: skip
    canonical = f"go:{width}x{height}" + (f":komi={komi}" if komi else "")
    return Game(
        canonical, width, height, komi, symmetries, order, f"Go {width}x{height}, komi {komi}",
        K.tables(width, height, symmetries),
    )  # fmt: skip


def build(arg, spec):
    """The game of a spec's argument, ``WxH`` or ``WxH:komi=K``."""
    m = SPEC.fullmatch(arg.strip())
    if not m:
        raise GameError(
            f"malformed Go spec '{shown(spec)}' (write go:WxH or go:WxH:komi=K, e.g. go:3x3:komi=9)"
        )
    komi = m.group(3)
    if komi is not None and not re.fullmatch(r"[+-]?[0-9]{1,4}", komi.strip()):
        raise GameError(f"{shown(spec)}: the komi must be an integer, not '{shown(komi)}'")
    return make_game(int(m.group(1)), int(m.group(2)), int(komi or 0), spec)


def from_rules(data, spec):
    """The game of stored rules (rules_data()); GameError when they are not a Go game's."""
    if not isinstance(data, dict) or data.get("family") != "go":
        raise GameError("the stored rules are not a Go game's")
    w, h, komi = data.get("width"), data.get("height"), data.get("komi")
    if not all(is_int(x) for x in (w, h, komi)):
        raise GameError("the stored Go rules lack a board size or a komi")
    game = make_game(w, h, komi, spec)
    if game.rules_data() != data:
        raise GameError(f"the stored rules are not those of {game.spec}")
    return game
