"""`pndb check`: the stored DAG agrees with itself.

Every expanded node's record must equal what its children's records give (the search's own
``combine``), every child of an expanded node must exist and link back to it, and every parent
link must come from an expanded node that has that child. A terminal record must hold what the
rules give its position, and a leaf the inner solver decided must have its proof's first step in
the proof table (the owner's move, or a proof record at every reply).
"""

from dataclasses import dataclass, field

import numpy as np

from pndb.games import kernels as K
from pndb.search import (
    EXPANDED,
    PROOF_FACT,
    STATUS_INTERVAL,
    TERMINAL,
    DagSearch,
    combine,
    first_moves,
    good_for,
    proof_move,
    split_key,
)


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
    a, b = split_key(key)
    state = K.position_status(np.uint64(a), np.uint64(b), game.tables)
    if state == K.ONGOING or STATUS_INTERVAL[state] != tuple(rec[:2]):
        report.problem(f"terminal node {key.hex()}: record {rec[:2]} is not what the rules give")


def check_decided_leaf(report, dag, key, rec):
    """Each question a leaf answers must be backed by the first step of a stored proof."""
    for q, proven in PROOF_FACT:
        if not good_for(rec[0], rec[1], q, proven):
            continue
        if first_moves(key) == proven:
            backed = proof_move(dag.store.get_proof(dag.txn, key), q, proven) is not None
        else:
            keys, _, statuses = dag.children(key)
            backed = all(
                good_for(*STATUS_INTERVAL[st], q, proven)
                if st != K.ONGOING
                else proof_move(dag.store.get_proof(dag.txn, k), q, proven) is not None
                for k, st in zip(keys, statuses.tolist())
            )
        if not backed:
            report.problem(f"leaf {key.hex()}: its value {rec[:2]} has no proof in the proof table")
            return


def check_store(store, game):
    report = CheckReport()
    dag = DagSearch(store, game)
    dag.begin()
    try:
        txn = dag.txn
        linked = set()
        for child, parent in store.iter_parent_links(txn):
            report.links += 1
            linked.add((child, parent))
        for key, rec in store.iter_nodes(txn):
            report.nodes += 1
            if rec[2] & TERMINAL:
                check_terminal(report, game, key, rec)
            elif not rec[2] & EXPANDED:
                check_decided_leaf(report, dag, key, rec)
            if not rec[2] & EXPANDED:
                continue
            report.expanded += 1
            kids, _, _ = dag.children(key)
            recs = []
            for k in kids:
                r = store.get_node(txn, k)
                if r is None:
                    report.problem(f"node {key.hex()}: child {k.hex()} is missing")
                    continue
                recs.append(r)
                if (k, key) not in linked:
                    report.problem(f"node {key.hex()}: child {k.hex()} has no parent link back")
            if len(recs) == len(kids) and combine(first_moves(key), rec, recs) != rec:
                report.problem(f"node {key.hex()}: record {rec} disagrees with its children")
        for child, parent in linked:
            prec = store.get_node(txn, parent)
            if prec is None or not prec[2] & EXPANDED:
                report.problem(f"link {child.hex()} -> {parent.hex()}: the parent is not an expanded node")
            elif child not in dag.children(parent)[0]:
                report.problem(f"link {child.hex()} -> {parent.hex()}: not a child of that parent")
    finally:
        dag.end()
    return report
