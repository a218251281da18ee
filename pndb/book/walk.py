"""Walking the strategies a book needs through a solved database.

``StrategyWalker`` follows each strategy the value needs from the start: the owner's move at
owner-to-move positions (from the proof table of the inner solver, else from a stored child
that is good enough), every move at the opponent's positions. A graph-keyed database
(`solve --graph-keys`) gives the same board-keyed book: the walker is given ``GraphSources``,
which map each board position's proof from stored positions whose games are isomorphic to it.
"""

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from pndb.book.format import INTERVAL_CODES, RECORD
from pndb.games.interface import Children, arrays_from_keys, key_bytes, keys_from_arrays
from pndb.values import (
    GAME_OVER,
    NO_MOVE,
    PROOF_FACT,
    Certificate,
    Fact,
    Status,
    Value,
    good_for,
    intersect,
    status_value,
    strategy_questions,
)

# value -> the strategies that prove it; the owner is the first player when proven
STRATEGIES = {
    Value.FIRST_WINS: [Fact(0, True)],
    Value.SECOND_WINS: [Fact(1, False)],
    Value.DRAW: [Fact(1, True), Fact(0, False)],
    Value.FIRST_WONT_WIN: [Fact(0, False)],
    Value.SECOND_WONT_WIN: [Fact(1, True)],
    Value.UNKNOWN: [],
}


class ExportError(RuntimeError):
    """The database does not hold what a complete book needs."""


def decisive_statuses(fact):
    """The statuses of a child that alone decide it as ``fact`` needs (a stone that wins at once)."""
    values = {st: status_value(st) for st in Status if st != Status.ONGOING}
    return frozenset(st for st, v in values.items() if good_for(v.lo, v.hi, fact))


DECISIVE = {fact: decisive_statuses(fact) for fact in PROOF_FACT}


def decisive_move(moves, statuses, fact):
    """The first move whose status alone decides its child as ``fact`` needs (a stone that
    wins at once, say), or None."""
    decisive = DECISIVE[fact]
    return next((m for m, st in zip(moves, statuses) if st in decisive), None)


BATCH = 4096  # positions a walker looks up and expands in one call into LMDB and the kernels
# the book's value code of each interval [lo, hi], at lo * 3 + hi (0 where lo > hi: none)
CODE_OF = np.array([INTERVAL_CODES.get((lo, hi), 0) for lo in range(3) for hi in range(3)], np.uint8)


@dataclass
class StrategyWalker:
    """Follows strategies through a read view of the DAG, its proof table and its certificates,
    collecting what a book holds: a record per position the strategies need (the owner's move,
    or none where a certificate decides the position) and the certificates used.

    The walk goes depth by depth (a position met again at a later depth is walked again: its
    records merge) and a depth's positions a batch at a time, as arrays of key halves: their
    nodes, proofs and certificates in one LMDB call each, their children in one kernel call,
    the certificates checked by the game's own definitions together (certificates_hold_of_many)
    and the strategy's choices by numpy (a book has hundreds of thousands of positions; a call
    per position cost most of the export's time)."""

    view: object  # a store.ReadView with the game
    certs: dict = field(default_factory=dict)  # key -> {Certificate}
    counter: object = None  # a progress.Counter of the positions walked, or None
    graph: object = None  # GraphSources for a graph-keyed store, None for a board-keyed one
    recorded: list = field(default_factory=list)  # (key_a, key_b, move, lo, hi) arrays, in order

    def record(self, a, b, moves, lo, hi, fact):
        """Record ``moves`` (NO_MOVE: none, keeping a move another strategy recorded) at the
        positions of key halves ``a``, ``b`` with the value the database holds there
        ([lo, hi]) narrowed by what every strategy that passes through it proves: a position
        where a stone wins at once has no stored record to say what it is worth."""
        flo, fhi = fact.interval
        self.recorded.append((np.asarray(a, np.uint64), np.asarray(b, np.uint64), np.asarray(moves, np.uint8),
                              np.maximum(lo, flo).astype(np.int8), np.minimum(hi, fhi).astype(np.int8)))  # fmt: skip

    def book_records(self):
        """The records, as a book holds them (format.RECORD rows sorted by key): one per
        position, the last move recorded there, the intersection of its values."""
        if not self.recorded:
            return np.empty(0, RECORD)
        a, b, moves, lo, hi = (np.concatenate(parts) for parts in zip(*self.recorded))
        order = np.lexsort((b, a))  # stable: a position's records stay in the order recorded
        a, b, moves, lo, hi = a[order], b[order], moves[order], lo[order], hi[order]
        first = np.flatnonzero(first_of_each(a, b))
        lo, hi = np.maximum.reduceat(lo, first), np.minimum.reduceat(hi, first)
        last = np.maximum.reduceat(np.where(moves != NO_MOVE, np.arange(len(a)), -1), first)
        if (lo > hi).any():
            i = first[np.argmax(lo > hi)]
            raise ExportError(f"position {key_bytes(a[i], b[i]).hex()}: its stored values contradict each other")
        out = np.empty(len(first), RECORD)
        out["a"], out["b"] = a[first], b[first]
        out["move"] = np.where(last >= 0, moves[last], NO_MOVE)
        out["value"] = CODE_OF[lo.astype(np.int64) * 3 + hi]
        return out

    def interval(self, key):
        """What the database proved about a position: node, proof record and certificates."""
        view = self.view
        lo, hi = 0, 2
        for rec in (view.node(key), view.proof(key)):
            if rec is not None:
                lo, hi = intersect((lo, hi), (rec.lo, rec.hi))
        for cert in view.certificates(key):
            v = view.game.certificate_value(cert)
            lo, hi = intersect((lo, hi), (v.lo, v.hi))
        return lo, hi

    def owner_move(self, key, fact, proof, children):
        """The strategy owner's move at ``key``: from its proof record, else one that ends the
        game as ``fact`` needs (proofs store no record where a stone wins at once), else a good
        stored child; None when there is none. ``children()`` gives the position's Children."""
        move = proof.strategy_move(fact) if proof is not None else None
        if move is not None:
            return move
        keys, moves, statuses = children()
        move = decisive_move(moves, statuses, fact)
        if move is not None:
            return move
        for k, m, st in zip(keys, moves, statuses):
            if st == Status.ONGOING and good_for(*self.interval(k), fact):
                return m
        return None

    def strategy(self, root, fact):
        """Walk the strategy that proves ``fact`` from the board key ``root``, adding what it
        needs."""
        if self.graph is not None:
            return self.graph.strategy(self, root, fact)
        game = self.view.game
        if game.status(game.position(root)) != Status.ONGOING:
            return
        a, b = arrays_from_keys([root])
        while len(a):
            found = []
            for i in range(0, len(a), BATCH):
                found.append(self.expand(a[i : i + BATCH], b[i : i + BATCH], fact))
                if self.counter is not None:
                    self.counter.add(len(a[i : i + BATCH]))
            a, b = distinct(np.concatenate([x for x, _ in found]), np.concatenate([y for _, y in found]))

    def expand(self, a, b, fact):
        """Record what the ongoing positions of key halves ``a``, ``b`` need; the key halves of
        their ongoing children the strategy goes on to (the owner's move's, every move's of the
        other player)."""
        view, game = self.view, self.view.game
        keys = keys_from_arrays(a, b)
        nodes, proofs, stored = view.node_rows(keys), view.proof_rows(keys), view.certificates_of(keys)
        lo = np.maximum(nodes["lo"], proofs["lo"]).astype(np.int64)
        hi = np.minimum(nodes["hi"], proofs["hi"]).astype(np.int64)
        decided = np.zeros(len(keys), bool)
        chosen = {}  # row -> the first certificate stored there that proves what fact needs
        for i in np.flatnonzero([k in stored for k in keys]).tolist() if stored else ():
            for cert in stored[keys[i]]:
                v = game.certificate_value(cert)
                lo[i], hi[i] = intersect((lo[i], hi[i]), (v.lo, v.hi))
                if i not in chosen and good_for(v.lo, v.hi, fact):
                    chosen[i] = cert
        if chosen:
            rows = np.fromiter(chosen, np.int64, len(chosen))
            holds = game.certificates_hold_of_many(a[rows], b[rows], list(chosen.values()))
            if not holds.all():
                key = keys[rows[np.argmin(holds)]]
                raise ExportError(f"position {key.hex()}: its stored certificate does not hold")
            for i, cert in chosen.items():
                self.certs.setdefault(keys[i], set()).add(cert)
            decided[rows] = True
        self.record(a[decided], b[decided], np.full(decided.sum(), NO_MOVE), lo[decided], hi[decided], fact)
        owner = ~decided & (game.first_to_move_of_many(a, b) == fact.proven)
        moves = np.full(len(keys), NO_MOVE, np.int64)
        for q in reversed(strategy_questions(fact)):  # the proof record's move, as strategy_move
            moves = np.where(proofs[f"move{q}"] != NO_MOVE, proofs[f"move{q}"], moves)
        moves[~owner] = NO_MOVE
        owned = owner & (moves != NO_MOVE)
        searched = np.flatnonzero(~decided & ~owned)  # their children are needed: every one, or the owner's move's
        out_a, out_b = [], []
        if len(searched):
            # one kernel call, and numpy picks: every ongoing child of the other player's
            # positions, the first decisive move of the owner's (a stone that wins at once)
            counts, kid_moves, ka, kb, st = game.children_of_many(a[searched], b[searched])
            width = int(counts.max())  # the rest of each row is unused
            kid_moves, ka, kb, st = kid_moves[:, :width], ka[:, :width], kb[:, :width], st[:, :width]
            valid = np.arange(kid_moves.shape[1]) < counts[:, None]
            owner_rows = owner[searched]
            ongoing = valid & ~any_of(st, GAME_OVER)
            pick = ongoing & ~owner_rows[:, None]
            out_a.append(ka[pick])
            out_b.append(kb[pick])
            decisive = valid & any_of(st, DECISIVE[fact]) & owner_rows[:, None]
            found = decisive.any(axis=1)
            first = decisive.argmax(axis=1)
            rows = np.flatnonzero(owner_rows & found)
            moves[searched[rows]] = kid_moves[rows, first[rows]]
            keep = ongoing[rows, first[rows]]
            out_a.append(ka[rows, first[rows]][keep])
            out_b.append(kb[rows, first[rows]][keep])
            for row in np.flatnonzero(owner_rows & ~found).tolist():  # a stored child decides
                key, n = keys[searched[row]], int(counts[row])
                kids = Children(keys_from_arrays(ka[row, :n], kb[row, :n]), kid_moves[row, :n].tolist(),
                                st[row, :n].tolist())  # fmt: skip
                move = self.owner_move(key, fact, None, lambda kids=kids: kids)
                if move is None:
                    raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                moves[searched[row]] = move
                j = kids.moves.index(move)
                if ongoing[row, j]:
                    out_a.append(ka[row, j : j + 1])
                    out_b.append(kb[row, j : j + 1])
        self.check_moves(a[owner], b[owner], moves[owner], keys, owner)
        self.record(a[owner], b[owner], moves[owner], lo[owner], hi[owner], fact)
        ka, kb, st = game.after_moves(a[owned], b[owned], moves[owned])
        out_a.append(ka[st == Status.ONGOING])
        out_b.append(kb[st == Status.ONGOING])
        return np.concatenate(out_a), np.concatenate(out_b)

    def check_moves(self, a, b, moves, keys, rows):
        """ExportError unless each of ``moves`` is a move at its position: a damaged proof
        record's move is not one."""
        bad = self.view.game.illegal_of_many(a, b, moves)
        if bad.any():
            i = int(np.argmax(bad))
            key = keys[np.flatnonzero(rows)[i]]
            raise ExportError(f"position {key.hex()}: its stored move {int(moves[i])} is not a move there")


def any_of(statuses, wanted):
    """Where ``statuses`` (an array) is one of ``wanted`` (statuses of finished or decided
    positions, not ONGOING), one look-up per entry: a value that is no status (the unused end
    of a row of children) counts as none of them, ONGOING's entry below and the last above."""
    table = np.zeros(len(Status) + 1, bool)
    table[list(wanted)] = True
    return table.take(statuses, mode="clip")


def distinct(a, b):
    """The distinct keys of key halves ``a``, ``b``, sorted."""
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = first_of_each(a, b)
    return a[keep], b[keep]


def first_of_each(a, b):
    """Where each run of equal keys starts in sorted key halves ``a``, ``b`` (a bool array)."""
    first = np.ones(len(a), bool)
    first[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return first


class Source(NamedTuple):
    """A stored position that stands for a book position: its canonical key and position in
    the store, and the isomorphism of their remaining games (book cell -> stored cell)."""

    key: bytes  # its key in the store: a canonical board key, or the node key of a representative
    pos: object  # the game's position, canonical
    cells: dict


@dataclass
class GraphSources:
    """What a StrategyWalker is given for a graph-keyed database: the book stays keyed by
    board keys.

    The walk goes through board positions from the start. A book position is known through
    its Sources: itself; the representative of its graph key's node, mapped by the two
    canonical labellings (graphkey.cell_map); and the positions of the store its parent's
    sources lead to by the mapped move, which carry the inner search's proof records below a
    representative the book does not pass through. Owner moves are the sources' proof moves
    mapped back, else a move whose child is known good (that child's own sources decide).
    Certificates are mapped back and must hold at the book position (the game's own check)."""

    view: object  # a store.ReadView of a graph-keyed store (its game a GraphKeyedGame)

    @property
    def game(self):
        return self.view.game.game

    def sources(self, pos, inherited):
        """The Sources of the canonical book position ``pos``, and its node (or None)."""
        game = self.game
        key = game.key(pos)
        found = [Source(key, pos, {c: c for c in range(64)})]
        node_key = self.view.game.key(pos)
        node = self.view.node(node_key)
        if node is not None and node_key != key:  # the view reads a node key's proof and
            rep = self.view.game.position(node_key)  # certificates at its representative too
            found.append(Source(node_key, rep, self.view.game.cell_map(pos, rep)))
        found += [s for s in inherited if s.key not in {f.key for f in found}]
        return found, node

    def interval(self, sources, node):
        lo, hi = (node.lo, node.hi) if node is not None else (0, 2)
        for s in sources:
            certs = [self.game.certificate_value(c) for c in self.view.certificates(s.key)]
            for rec in [self.view.proof(s.key), *certs]:
                if rec is not None:
                    lo, hi = intersect((lo, hi), (rec.lo, rec.hi))
        return lo, hi

    def certificate_for(self, pos, sources, fact):
        """A certificate of the book position ``pos`` that proves what ``fact`` needs, mapped
        from a source's, or None."""
        game = self.game
        for s in sources:
            for cert in self.view.certificates(s.key):
                v = game.certificate_value(cert)
                if not good_for(v.lo, v.hi, fact):
                    continue
                back = {t: c for c, t in s.cells.items()}
                mapped = Certificate(cert.kind, cert.payload[:1] + bytes(back[c] for c in cert.payload[1:]))
                if not game.certificate_holds(pos, mapped):
                    raise ExportError(f"a certificate mapped to {game.key(pos).hex()} does not hold there")
                return mapped
        return None

    def strategy(self, walker, root, fact):
        """Walk the strategy that proves ``fact`` from the board key ``root`` into ``walker``:
        each position goes with the Sources it inherits from the parent it was first met from."""
        if self.game.status(self.game.position(root)) != Status.ONGOING:
            return
        seen = {root}
        stack = [(root, ())]
        while stack:
            batch = stack[-BATCH:]
            del stack[-BATCH:]
            for key, passed in self.expand(walker, batch, fact):
                if key not in seen:
                    seen.add(key)
                    stack.append((key, passed))
            if walker.counter is not None:
                walker.counter.add(len(batch))

    def expand(self, walker, batch, fact):
        """Record what the positions of ``batch`` ((board key, inherited Sources) each) need
        into ``walker``; (key, inherited Sources) of the children the strategy goes on to."""
        game = self.game
        out = []
        for key, inherited in batch:
            pos = game.position(key)
            if game.status(pos) != Status.ONGOING:
                continue
            sources, node = self.sources(pos, inherited)
            interval = self.interval(sources, node)
            cert = self.certificate_for(pos, sources, fact)
            if cert is not None:
                walker.certs.setdefault(key, set()).add(cert)
                walker.record(*arrays_from_keys([key]), [NO_MOVE], [interval[0]], [interval[1]], fact)
                continue
            keys, moves, statuses = game.children(pos)
            if game.first_to_move(pos) == fact.proven:
                move, used = self.owner_move(pos, sources, fact, keys, moves, statuses)
                if move is None:
                    raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                if move not in moves:
                    raise ExportError(f"position {key.hex()}: the mapped move {move} is not a move there")
                walker.record(*arrays_from_keys([key]), [move], [interval[0]], [interval[1]], fact)
                i = moves.index(move)
                if statuses[i] not in GAME_OVER:
                    out.append(self.child(pos, move, used))
            else:
                live = [m for m, st in zip(moves, statuses) if st not in GAME_OVER]
                out.extend(self.child(pos, m, sources[1:]) for m in live)
        return out

    def child(self, pos, move, sources):
        """(canonical key, inherited sources) of the child of the book position after ``move``."""
        game = self.game
        key, sym = game.canonical(game.play(pos, move))
        perm = game.symmetries[sym]
        out = []
        for s in sources:
            stored = game.play(s.pos, s.cells[move])
            skey, ssym = game.canonical(stored)
            sperm = game.symmetries[ssym]
            # book child cell c (canonical) -> book cell -> stored cell -> stored canonical cell
            back = {perm[c]: c for c in range(len(perm))}
            cells = {c: sperm[s.cells[b]] for c, b in back.items() if b in s.cells and b != move}
            out.append(Source(skey, game.position(skey), cells))
        return key, tuple(out)

    def owner_move(self, pos, sources, fact, keys, moves, statuses):
        """(the owner's move at ``pos``, the sources its child inherits), or (None, ())."""
        for s in sources:
            proof = self.view.proof(s.key)
            move = proof.strategy_move(fact) if proof is not None else None
            if move is not None:
                back = {t: c for c, t in s.cells.items()}
                return back[move], (s,)
        move = decisive_move(moves, statuses, fact)
        if move is not None:
            return move, ()
        for m, st in zip(moves, statuses):
            if st != Status.ONGOING:
                continue
            key, inherited = self.child(pos, m, sources[1:])
            child_sources, node = self.sources(self.game.position(key), inherited)
            if good_for(*self.interval(child_sources, node), fact):
                return m, sources[1:]
        return None, ()
