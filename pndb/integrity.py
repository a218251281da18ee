"""`pndb check`: the stored DAG agrees with itself.

Every expanded node's record must equal what its children's records give (the search's own
``combine``), every child of an expanded node must exist and link back to it, and every parent
link must come from an expanded node that has that child.
"""

from dataclasses import dataclass, field

from pndb.search import EXPANDED, DagSearch, combine, first_moves


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
