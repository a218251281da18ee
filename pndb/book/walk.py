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

from pndb.book.format import CODE_VALUES, INTERVAL_CODES, VALUE_CODES
from pndb.games.placement.game import Children, keys_from_arrays
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


def add_record(walker, key, move, interval, fact):
    """Record ``move`` at ``key`` in a walker's records (NO_MOVE keeps a move another strategy
    recorded there), with the value the database holds there (``interval``) narrowed by what
    every strategy that passes through it proves: a position where a stone wins at once has no
    stored record to say what it is worth."""
    lo, hi = intersect(interval, fact.interval)
    old = walker.records.get(key)
    if old is not None:
        move = old[0] if move == NO_MOVE else move
        before = CODE_VALUES[old[1]]
        lo, hi = intersect((lo, hi), (before.lo, before.hi))
    code = INTERVAL_CODES.get((lo, hi))
    walker.records[key] = (move, VALUE_CODES[Value.of(lo, hi)] if code is None else code)


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


@dataclass
class StrategyWalker:
    """Follows strategies through a read view of the DAG, its proof table and its certificates,
    collecting what a book holds: a record per position the strategies need (the owner's move,
    or none where a certificate decides the position) and the certificates used. Positions are
    taken a batch at a time: their nodes, proofs and certificates in one LMDB call each, their
    children in one kernel call (a book has hundreds of thousands of positions; a call per
    position cost most of the export's time)."""

    view: object  # a store.ReadView with the game
    records: dict = field(default_factory=dict)  # key -> (move or NO_MOVE, value code)
    certs: dict = field(default_factory=dict)  # key -> {Certificate}
    counter: object = None  # a progress.Counter of the positions walked, or None
    graph: object = None  # GraphSources for a graph-keyed store, None for a board-keyed one

    def interval(self, key):
        """What the database proved about a position: node, proof record and certificates."""
        view = self.view
        return self.interval_of(view.node(key), view.proof(key), view.certificates(key))

    def interval_of(self, node, proof, certs):
        lo, hi = 0, 2
        for rec in (node, proof):
            if rec is not None:
                lo, hi = intersect((lo, hi), (rec.lo, rec.hi))
        for cert in certs:
            v = self.view.game.certificate_value(cert)
            lo, hi = intersect((lo, hi), (v.lo, v.hi))
        return lo, hi

    def certificate_for(self, key, certs, fact):
        """One of ``certs`` (stored for ``key``) that proves what ``fact`` needs, or None;
        checked by the game's own definitions before it goes into a book."""
        game = self.view.game
        for cert in certs:
            v = game.certificate_value(cert)
            if good_for(v.lo, v.hi, fact):
                if not game.certificate_holds(game.position(key), cert):
                    raise ExportError(f"position {key.hex()}: its stored certificate does not hold")
                return cert
        return None

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
        needs. Each position goes with what its parent passes on to it: nothing with board
        keys, the Sources it inherits with GraphSources."""
        game = self.view.game if self.graph is None else self.graph.game
        if game.status(game.position(root)) != Status.ONGOING:
            return
        seen = {root}
        stack = [(root, ())]
        while stack:
            batch = stack[-BATCH:]
            del stack[-BATCH:]
            out = self.expand(batch, fact) if self.graph is None else self.graph.expand(self, batch, fact)
            for key, passed in out:
                if key not in seen:
                    seen.add(key)
                    stack.append((key, passed))
            if self.counter is not None:
                self.counter.add(len(batch))

    def expand(self, batch, fact):
        """Record what the ongoing positions of ``batch`` need; (key, ()) of their ongoing
        children the strategy goes on to (the owner's move's, every move's of the other)."""
        batch = [key for key, _ in batch]
        view, game = self.view, self.view.game
        nodes, proofs, stored = view.nodes_of(batch), view.proofs_of(batch), view.certificates_of(batch)
        decided = set()
        for key in batch:
            certs = stored.get(key, ())
            cert = self.certificate_for(key, certs, fact) if certs else None
            if cert is not None:
                self.certs.setdefault(key, set()).add(cert)
                add_record(self, key, NO_MOVE, self.interval_of(nodes.get(key), proofs.get(key), certs), fact)
                decided.add(key)
        owned, owned_moves, searched, owners = [], [], [], []
        for key in batch:
            if key in decided:
                continue
            owner = game.first_to_move(game.position(key)) == fact.proven
            proof = proofs.get(key)
            move = proof.strategy_move(fact) if owner and proof is not None else None
            if move is None:  # its children are needed: every one, or the owner's move's
                searched.append(key)
                owners.append(owner)
            else:
                owned.append(key)
                owned_moves.append(move)
        out = []
        if searched:
            # one kernel call, and numpy picks: every ongoing child of the other player's
            # positions, the first decisive move of the owner's (a stone that wins at once)
            counts, moves, ka, kb, st = game.children_of_many(searched)
            valid = np.arange(moves.shape[1]) < counts[:, None]
            owner_rows = np.array(owners)
            ongoing = valid & ~np.isin(st, GAME_OVER)
            pick = ongoing & ~owner_rows[:, None]
            out += keys_from_arrays(ka[pick], kb[pick])
            decisive = valid & np.isin(st, list(DECISIVE[fact])) & owner_rows[:, None]
            found = decisive.any(axis=1)
            first = decisive.argmax(axis=1)
            for i in np.flatnonzero(owner_rows).tolist():
                key = searched[i]
                if found[i]:
                    j = int(first[i])
                    move = int(moves[i, j])
                    if ongoing[i, j]:
                        out += keys_from_arrays(ka[i, j : j + 1], kb[i, j : j + 1])
                else:
                    n = int(counts[i])
                    kids = Children(keys_from_arrays(ka[i, :n], kb[i, :n]), moves[i, :n].tolist(),
                                    st[i, :n].tolist())  # fmt: skip
                    move = self.owner_move(key, fact, None, lambda kids=kids: kids)
                    if move is None:
                        raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                    j = kids.moves.index(move)
                    if kids.statuses[j] not in GAME_OVER:
                        out.append(kids.keys[j])
                self.record_move(key, move, nodes, proofs, stored, fact)
        for key, move in zip(owned, owned_moves):
            self.record_move(key, move, nodes, proofs, stored, fact)
        keys, statuses = game.after_moves(owned, owned_moves)
        out += [k for k, st in zip(keys, statuses) if st == Status.ONGOING]
        return [(k, ()) for k in out]

    def record_move(self, key, move, nodes, proofs, stored, fact):
        """Record the owner's ``move`` at ``key`` with what the batch's lookups proved there."""
        if move not in self.view.game.cells or key_stones(key) >> move & 1:
            raise ExportError(f"position {key.hex()}: its stored move {move} is not a move there")
        interval = self.interval_of(nodes.get(key), proofs.get(key), stored.get(key, ()))
        add_record(self, key, move, interval, fact)


def key_stones(key):
    """The cells occupied in the position of a 16-byte key."""
    return int.from_bytes(key[:8], "big") | int.from_bytes(key[8:], "big")


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
        from pndb.games.placement.graphkey import cell_map

        game = self.game
        key = game.key(pos)
        found = [Source(key, pos, {c: c for c in range(64)})]
        node_key = self.view.game.key(pos)
        node = self.view.node(node_key)
        if node is not None and node_key != key:  # the view reads a node key's proof and
            rep = self.view.game.position(node_key)  # certificates at its representative too
            found.append(Source(node_key, rep, cell_map(game, pos, rep)))
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
                add_record(walker, key, NO_MOVE, interval, fact)
                continue
            keys, moves, statuses = game.children(pos)
            if game.first_to_move(pos) == fact.proven:
                move, used = self.owner_move(pos, sources, fact, keys, moves, statuses)
                if move is None:
                    raise ExportError(f"position {key.hex()} has no stored move for its strategy")
                if move not in moves:
                    raise ExportError(f"position {key.hex()}: the mapped move {move} is not a move there")
                add_record(walker, key, move, interval, fact)
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
