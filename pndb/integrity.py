"""`pndb check`: the stored DAG agrees with itself.

Every expanded node's record must equal what its children's records give (``combine``), every
child of an expanded node must exist and link back to it, and every parent link must come from an
expanded node that has that child. A terminal record must hold what the rules give its position,
and a leaf the inner solver decided must have its proof's first step in the proof table (the
owner's move, or a proof record at every reply).
"""

from dataclasses import dataclass, field

from pndb.values import PROOF_FACT, Status, combine, good_for, status_value


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


def check_decided_leaf(report, view, key, rec):
    """Each question a leaf answers must be backed by the first step of a stored proof."""
    game = view.game
    for fact in PROOF_FACT:
        if not good_for(rec.lo, rec.hi, fact):
            continue
        if game.first_to_move(game.position(key)) == fact.proven:
            backed = proof_move(view, key, fact) is not None
        else:
            keys, _, statuses = view.children(key)
            backed = all(
                good_for(status_value(st).lo, status_value(st).hi, fact)
                if st != Status.ONGOING
                else proof_move(view, k, fact) is not None
                for k, st in zip(keys, statuses)
            )
        if not backed:
            report.problem(f"leaf {key.hex()}: its value {rec.lo, rec.hi} has no proof in the proof table")
            return


def check_store(store, game):
    report = CheckReport()
    with store.view(game) as view:
        linked = set()
        for child, parent in view.links():
            report.links += 1
            linked.add((child, parent))
        for key, rec in view.nodes():
            report.nodes += 1
            if rec.terminal:
                check_terminal(report, game, key, rec)
            elif not rec.expanded:
                check_decided_leaf(report, view, key, rec)
            if not rec.expanded:
                continue
            report.expanded += 1
            kids = view.children(key).keys
            recs = []
            for k in kids:
                r = view.node(k)
                if r is None:
                    report.problem(f"node {key.hex()}: child {k.hex()} is missing")
                    continue
                recs.append(r)
                if (k, key) not in linked:
                    report.problem(f"node {key.hex()}: child {k.hex()} has no parent link back")
            first = game.first_to_move(game.position(key))
            if len(recs) == len(kids) and combine(first, rec, recs) != rec:
                report.problem(f"node {key.hex()}: record {tuple(rec)} disagrees with its children")
        for child, parent in linked:
            prec = view.node(parent)
            if prec is None or not prec.expanded:
                report.problem(f"link {child.hex()} -> {parent.hex()}: the parent is not an expanded node")
            elif child not in view.children(parent).keys:
                report.problem(f"link {child.hex()} -> {parent.hex()}: not a child of that parent")
    return report
