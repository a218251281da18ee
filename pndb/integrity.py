"""`pndb check`: the stored DAG agrees with itself.

Every record of every sub-database is read and must be well-formed: meta entries JSON, keys the
canonical keys of positions of the game, intervals and flags possible, proof moves legal. Every
expanded node's record must equal what its children's records give (``combine``) and claim no
more than they imply, unless a stored proof backs the rest (a record that is merely not
contradicted could be a false value); every child of an expanded node must exist and link back to
it, and every parent link must come from an expanded node that has that child. A terminal record
must hold what the rules give its position, and a leaf the inner solver decided must have its
proof's first step in the proof table (the owner's move, or a proof record at every reply).
"""

from dataclasses import dataclass, field

from pndb.progress import Counter
from pndb.store import StoreError
from pndb.values import (
    EVALUATED,
    EXPANDED,
    INF,
    NO_MOVE,
    PROOF_FACT,
    TERMINAL,
    Fact,
    Node,
    Status,
    combine,
    good_for,
    intersect,
    numbers_for,
    status_value,
)

KNOWN_FLAGS = EXPANDED | TERMINAL | EVALUATED[0] | EVALUATED[1]


@dataclass
class CheckReport:
    nodes: int = 0
    expanded: int = 0
    links: int = 0
    problems: list = field(default_factory=list)

    def problem(self, text):
        if len(self.problems) < 20:
            self.problems.append(text)
        else:
            self.problems[-1] = "... and more"


def check_terminal(report, game, key, rec):
    state = game.status(game.position(key), early=True)
    v = None if state == Status.ONGOING else status_value(state)
    if v is None or (v.lo, v.hi) != (rec.lo, rec.hi):
        report.problem(f"terminal node {key.hex()}: record {rec.lo, rec.hi} is not what the rules give")


def proof_move(view, key, fact):
    proof = view.proof(key)
    return None if proof is None else proof.strategy_move(fact)


def certified(view, key, fact):
    """True when a stored certificate of ``key`` holds and proves what ``fact`` needs."""
    game = view.game
    for cert in view.certificates(key):
        v = game.certificate_value(cert)
        if good_for(v.lo, v.hi, fact) and game.certificate_holds(game.position(key), cert):
            return True
    return False


def backed(view, key, fact):
    """A position's proof of ``fact`` starts in the store: a certificate, or a proof record's
    move for its owner."""
    return certified(view, key, fact) or proof_move(view, key, fact) is not None


def proof_starts(view, key, fact):
    """The first step of a proof of ``fact`` at ``key`` is stored: a certificate, the owner's
    move, or (the opponent to move) a proof or a decided status at every reply."""
    game = view.game
    if certified(view, key, fact):
        return True
    if game.first_to_move(game.position(key)) == fact.proven:
        return proof_move(view, key, fact) is not None
    # the inner search's proofs are keyed by board keys, also in a graph-keyed store
    board_game = getattr(game, "game", game)
    keys, _, statuses = board_game.children(game.position(key))
    return all(decided_good(st, fact) or backed(view, k, fact) for k, st in zip(keys, statuses))


def unsupported(view, key, rec, by_children=None):
    """The first question ``rec`` answers that neither its children's records (``by_children``,
    what they give an expanded node) nor a stored proof answer, or None. A record may know
    less than its support, never more: a value nothing implies is a false value."""
    for fact in PROOF_FACT:
        if not good_for(rec.lo, rec.hi, fact):
            continue
        if by_children is not None and good_for(by_children.lo, by_children.hi, fact):
            continue
        if not proof_starts(view, key, fact):
            return fact
    return None


def check_decided_leaf(report, view, key, rec):
    """Each question a leaf answers must be backed by the first step of a stored proof."""
    if unsupported(view, key, rec):
        report.problem(f"leaf {key.hex()}: its value {rec.lo, rec.hi} has no proof in the proof table")


def key_problem(game, key):
    """What is wrong with a key as the canonical key of a position of the game, or None."""
    if len(key) != 16:
        return f"key {bytes(key).hex()} is not 16 bytes"
    pos = game.position(key)
    if not game.is_position(pos):
        return f"key {key.hex()} is not a position of {game.spec}"
    if game.key(pos) != key:
        return f"key {key.hex()} is not the canonical key of a position of {game.spec}"
    return None


def node_problem(game, key, rec):
    """What is wrong with a node record on its own, or None."""
    if not (0 <= rec.lo <= rec.hi <= 2) or rec.flags & ~KNOWN_FLAGS:
        return f"node {key.hex()}: impossible record {tuple(rec)}"
    if game.status(game.position(key)) != Status.ONGOING and not rec.terminal:
        return f"node {key.hex()}: a finished game that is not marked terminal"
    for q in (0, 1):
        pn, dn = rec.pn(q), rec.dn(q)
        fixed = numbers_for(rec.lo, rec.hi, q, None, None)
        if fixed != (None, None) and (pn, dn) != fixed:
            return f"node {key.hex()}: numbers {pn}, {dn} contradict its value {rec.value.name}"
        if fixed == (None, None) and not (0 < pn < INF and 0 < dn < INF):
            return f"node {key.hex()}: numbers {pn}, {dn} for an open question"
    return None


def decided_good(status, fact):
    """True when a status the rules give decides ``fact``'s question the way it needs."""
    if status == Status.ONGOING:
        return False
    v = status_value(status)
    return good_for(v.lo, v.hi, fact)


def proof_problem(view, key, proof):
    """What is wrong with a proof record, or None. A record holds the strategy owner's move for
    each question it proves (the owner is the player to move); its interval must be exactly what
    those proofs establish, and each move must be one step of a proof: after it, the game is won
    as needed, or every reply leads to a position that is decided so by the rules or has a
    proof record with a move for the same question. By induction over the finite game, a proof
    table that passes this everywhere proves every record in it."""
    game = view.game
    pos = game.position(key)
    if game.status(pos) != Status.ONGOING:
        return f"proof record {key.hex()}: the game is over there"
    facts = [Fact(q, game.first_to_move(pos)) for q in (0, 1) if proof.move(q) != NO_MOVE]
    lo, hi = 0, 2
    for fact in facts:
        lo, hi = intersect((lo, hi), fact.interval)
    if not facts or (proof.lo, proof.hi) != (lo, hi):
        return f"proof record {key.hex()}: interval {proof.lo, proof.hi} is not what its moves prove"
    legal = game.legal_moves(pos)
    for fact in facts:
        move = proof.move(fact.q)
        if move not in legal:
            return f"proof record {key.hex()}: move {move} is not legal there"
        child = game.play(pos, move)
        if decided_good(game.status(child, early=True), fact) or certified(view, game.key(child), fact):
            continue
        if game.status(child) != Status.ONGOING:
            return f"proof record {key.hex()}: move {move} ends the game the wrong way"
        replies = view.children(game.key(child))
        for k, st in zip(replies.keys, replies.statuses):
            if not decided_good(st, fact) and not backed(view, k, fact):
                return f"proof record {key.hex()}: after move {move}, reply {k.hex()} has no proof"
    return None


def check_node(report, view, key, rec, linked):
    """Every check of one stored node against itself, the rules, its children and its proofs."""
    game = view.game
    problem = key_problem(game, key) or node_problem(game, key, rec)
    if problem:
        report.problem(problem)
        return
    if rec.terminal:
        check_terminal(report, game, key, rec)
    elif not rec.expanded:
        check_decided_leaf(report, view, key, rec)
    if not rec.expanded:
        return
    report.expanded += 1
    kids = view.children(key).keys
    recs = []
    for k in kids:
        r = view.node(k)
        if r is None:
            report.problem(f"node {key.hex()}: child {k.hex()} is missing")
            continue
        recs.append(r)
        if linked is not None and (k, key) not in linked:
            report.problem(f"node {key.hex()}: child {k.hex()} has no parent link back")
    if len(recs) < len(kids):
        return
    first = game.first_to_move(game.position(key))
    if combine(first, rec, recs) != rec:
        report.problem(f"node {key.hex()}: record {tuple(rec)} disagrees with its children")
        return
    implied = combine(first, Node.leaf(), recs)
    if unsupported(view, key, rec, implied):
        report.problem(
            f"node {key.hex()}: its value {rec.value.name} is not what its children give "
            f"({implied.value.name}) and has no proof in the proof table"
        )


def check_root(store, game, key):
    """Refuse to answer from a root record that its children (or proofs) do not back: a cheap
    check before a solve reports a stored result."""
    report = CheckReport()
    with store.view(game) as view:
        rec = view.node(key)
        if rec is not None:
            check_node(report, view, key, rec, None)
    if report.problems:
        raise StoreError(f"the database is damaged ({report.problems[0]}); `pndb check` tells more")


def check_store(store, game, progress=None):
    """``progress``: called with a progress.Tick as the records are checked."""
    report = CheckReport()
    with store.view(game) as view:
        game = view.game  # (a game whose positions are stored reads them through the view)
        view.all_meta()  # every entry must be JSON
        c = view.counts()
        total = 2 * c["parent_links"] + c["proof_records"] + c["certificates"] + c["nodes"]
        counter = Counter(progress, "checking records", total, "records")
        linked = set()
        for child, parent in view.links():
            counter.add()
            report.links += 1
            problem = key_problem(game, bytes(child)) or key_problem(game, bytes(parent))
            if problem:
                report.problem(f"parent link: {problem}")
            linked.add((bytes(child), bytes(parent)))
        for key, proof in view.proofs():
            counter.add()
            problem = key_problem(game, key) or proof_problem(view, key, proof)
            if problem:
                report.problem(problem)
        for key, cert in view.all_certificates():
            counter.add()
            problem = key_problem(game, key)
            if problem or not game.certificate_holds(game.position(key), cert):
                report.problem(problem or f"certificate {key.hex()}: it does not hold")
        for key, rec in view.nodes():
            counter.add()
            report.nodes += 1
            check_node(report, view, key, rec, linked)
        for child, parent in linked:
            counter.add()
            prec = view.node(parent)
            if prec is None or not prec.expanded:
                report.problem(f"link {child.hex()} -> {parent.hex()}: the parent is not an expanded node")
            elif child not in view.children(parent).keys:
                report.problem(f"link {child.hex()} -> {parent.hex()}: not a child of that parent")
    return report
