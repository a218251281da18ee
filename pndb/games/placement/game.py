"""The placement family's game: a :class:`Game` holds the rules in plain Python (cells, win
patterns, symmetries, ...) and the same rules as numba :class:`~pndb.games.placement.kernels.Tables`,
and implements the game-family interface (docs/architecture.md) on :class:`Position` bitboards.
rules.py builds and checks a Game from rules data, builtins.py is the catalogue of built-in games.
"""

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pndb.games.errors import GameError
from pndb.games.interface import Canonical, Children, Summary, is_int, key_bytes, keys_from_arrays
from pndb.games.placement import kernels as K
from pndb.games.placement import notation
from pndb.games.placement.kernels import Tables
from pndb.values import NO_MOVE, PAIRING, Certificate, Status, Value


# Allis' rules are tried where at most this many squares are empty: on every position up to 7 x 6
# (compiled, they cost about 0.1-0.3 ms even early on 7 x 6, and whole solves of connect4:7x4 and
# 6x5 need fewer expansions with them everywhere; bench/connect4_rules.py --solve measures it)
C4_RULES_MAX_EMPTY = 42
C4_RULES_NODES = 2000  # chosen-set search nodes per win condition (more decided nothing more)
PAIRINGS_AT_ONCE = 512  # pairings checked by one numpy step (arrays of them x patterns x pairs)


class Position(NamedTuple):
    """A placement-game position: the first and the second player's stones as bitboards."""

    first: int
    second: int


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
    stored_positions = False  # a key is the position's bitboards (pndb.games.stored: keys that are not)

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

    def owner(self, pos, cell):
        """Who holds ``cell``: 1 the first player, 2 the second, 0 nobody."""
        return 1 if pos.first >> cell & 1 else 2 if pos.second >> cell & 1 else 0

    def completed(self, pos, player):
        """The win patterns ``player`` (1 first, 2 second) has completed, each a tuple of cells."""
        stones = pos.first if player == 1 else pos.second
        return tuple(p for p in self.patterns if all(stones >> c & 1 for c in p))

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

    def children_of_many(self, a, b):
        """The children of the ongoing positions of many canonical keys (arrays of key halves,
        ``arrays_from_keys``), in one kernel call, as arrays: (counts, moves, key_a, key_b,
        statuses), row i holding the counts[i] children of position i in move order (as
        :meth:`children` gives them), the rest of the row unused."""
        return K.children_of_many(a, b, self.tables)

    def after_moves(self, a, b, moves):
        """(key_a, key_b, statuses) of the positions of many canonical keys (arrays of key
        halves) after one move each (in the key's orientation), in one kernel call."""
        return K.after_moves(a, b, np.asarray(moves, np.int64), self.tables)

    def first_to_move_of_many(self, a, b):
        """first_to_move of many canonical keys (arrays of key halves), as a bool array."""
        stones = [np.unpackbits(np.ascontiguousarray(x, np.uint64).view(np.uint8)).reshape(-1, 64).sum(1)
                  for x in (a, b)]  # fmt: skip
        return stones[0] == stones[1]

    def illegal_of_many(self, a, b, moves):
        """Where each of ``moves`` is not a move at the position of its canonical key (arrays
        of key halves): not an empty playable cell (a damaged proof record's move), as a bool
        array. Only the cell is checked: a move the first-stone rule forbids, or one in a
        finished game, is not told."""
        on_board = moves < 64
        shift = np.where(on_board, moves, 0).astype(np.uint64)
        free = np.uint64(self.tables.cell_mask[0]) & ~(a | b)
        return ~on_board | ((free >> shift) & np.uint64(1) == 0)

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

    def position_text(self, pos):
        """The position in an error message (where the stones are)."""
        return notation.position_text(self, pos.first, pos.second)

    def board_name(self, move):
        """A move in an error message: its cell by column letter and row, also with gravity."""
        return notation.grid_name(self, move)

    # ------------------------------------------------------------ its books (docs/book-format.md)

    def book_rules_problem(self, rules):
        """What is wrong with the rules of a book's header beyond what makes the game, or None:
        a book lists its symmetries."""
        return None if isinstance(rules.get("symmetries"), list) else "do not list their symmetries"

    def record_problems(self, a, b, moves):
        """{reason: where it holds} of a book's records (arrays of key halves and moves): keys
        that are no position of the game, moves that are no empty playable cell (255: none)."""
        cells = np.uint64(self.tables.cell_mask[0])
        playable = np.zeros(256, dtype=bool)
        playable[list(self.cells)] = True
        lead = np.bitwise_count(a).astype(np.int64) - np.bitwise_count(b).astype(np.int64)
        stray = (a & b != 0) | ((a | b) & ~cells != 0) | ~np.isin(lead, (0, 1))
        stored = moves != NO_MOVE
        return {
            "it is not a position of the game": stray,
            "its move is not a playable cell": stored & ~playable[moves],
            "its move is an occupied cell": stored
            & ((a | b) >> np.minimum(moves, 63).astype(np.uint64) & np.uint64(1) != 0),
        }

    def certificate_problem(self, key, cert, value):
        """What is structurally wrong with a book's certificate at the canonical position of
        ``key`` whose record has the value ``value``, or None. Whether it proves anything is the
        verifier's business."""
        if cert.kind != PAIRING:
            from pndb.games.connect4 import certificate as C

            if cert.kind != C.CERTIFICATE_KIND:
                return f"kind {cert.kind} is unknown"
            try:
                C.decode_certificate(cert.payload)
            except C.CertificateError as e:
                return str(e)
            return None
        if self.gravity:
            return "a pairing certificate in a game with gravity"
        payload = cert.payload
        if len(payload) % 2 != 1 or payload[0] not in (1, 2):
            return "a pairing payload is a defender (1 or 2) and pairs of cells"
        occupied = int.from_bytes(key[:8], "big") | int.from_bytes(key[8:], "big")
        cells = payload[1:]
        if any(c not in self.cells or occupied >> c & 1 for c in cells):
            return "a paired cell is not an empty playable cell"
        if len(set(cells)) != len(cells):
            return "a cell occurs twice in its pairs"
        proven = self.certificate_value(cert)
        if value.lo < proven.lo or value.hi > proven.hi:
            return (
                f"its record's value {value.name} does not include what player {payload[0]}'s pairing proves"
            )
        return None

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
        pairs = np.array([(1 << x) | (1 << y) for x, y in zip(cells[::2], cells[1::2])], np.uint64)
        masks = self.pattern_masks[self.pattern_masks & np.uint64(defender) == 0]
        return bool((masks[:, None] & pairs[None, :] == pairs[None, :]).any(axis=1).all())

    def certificates_hold_of_many(self, a, b, certs):
        """Where each of ``certs`` holds at the position of its canonical key (arrays of key
        halves), as a bool array: certificate_holds of each, the pairings checked by numpy
        together (the same definition; a book's walk checks tens of thousands), those of
        equally many pairs at once, any other kind one by one."""
        holds = np.zeros(len(certs), bool)
        groups = {}
        for i, cert in enumerate(certs):
            if cert.kind == PAIRING and not self.gravity and len(cert.payload) % 2 == 1:
                groups.setdefault(len(cert.payload), []).append(i)
            elif cert.kind != PAIRING:
                holds[i] = self.certificate_holds(Position(int(a[i]), int(b[i])), cert)
        for size, rows in groups.items():
            for start in range(0, len(rows), PAIRINGS_AT_ONCE):
                at = np.array(rows[start : start + PAIRINGS_AT_ONCE])
                payloads = np.frombuffer(b"".join(certs[i].payload for i in at), np.uint8).reshape(-1, size)
                holds[at] = self.pairings_hold(a[at], b[at], payloads[:, 0], payloads[:, 1:])
        return holds

    def pairings_hold(self, a, b, defenders, cells):
        """certificate_holds of pairing payloads (``defenders``, the pairs' ``cells``: one row
        of 2k cells each) at the positions of key halves ``a``, ``b``."""
        playable = np.zeros(256, bool)
        playable[list(self.cells)] = True
        ok = (defenders == 1) | (defenders == 2)
        ok &= playable[cells].all(axis=1)
        shift = np.where(playable[cells], cells, 0).astype(np.uint64)
        ok &= ((((a | b)[:, None] >> shift) & np.uint64(1)) == 0).all(axis=1)
        ordered = np.sort(cells, axis=1)
        ok &= (ordered[:, 1:] != ordered[:, :-1]).all(axis=1)
        bits = np.uint64(1) << shift
        pairs = bits[:, 0::2] | bits[:, 1::2]
        defender = np.where(defenders == 1, a, b)
        masks = self.pattern_masks
        free = (masks[None, :] & defender[:, None]) == 0  # the patterns the defender must break
        paired = ((masks[None, :, None] & pairs[:, None, :]) == pairs[:, None, :]).any(axis=2)
        return ok & (paired | ~free).all(axis=1)

    @cached_property
    def pattern_masks(self):
        """The win patterns as bitboards (a uint64 array), in the order of ``patterns``."""
        return np.array([sum(1 << c for c in p) for p in self.patterns], np.uint64)

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
