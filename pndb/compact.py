"""`pndb compact`: drop what a decided part of the DAG no longer needs, and shrink the file.

Once a node's value is exact, the search never enters it again, and what the book needs of its
subtree is only the strategy: the owner's move at each owner-to-move position. Compaction keeps
the open part of the DAG (every node reachable from the root through nodes whose value is not
exact) and its frontier (the exact nodes that open nodes lead to); writes the strategies the
frontier nodes' values need into the proof table, as the moves an export would write (but for
positions whose player to move completes a pattern with the next stone: `check` takes their
status as decided and `export` finds that stone, as for the inner search's proofs, which leave
them out too); turns the frontier nodes into decided leaves; deletes every other node and every
parent link that no longer joins two kept, expanded-to-child nodes; and rewrites the database
file without its free pages.

Afterwards `check` holds (each decided leaf has its proof, each proof record is one step of a
proof), export writes the same value's book, and a resumed solve goes on from the open part.

Readers (status, check, export, the API) may run beside a compact; the records are rewritten in
one ordinary write transaction, which they read around as around a solve's checkpoints. The
file is shrunk by a compacted copy renamed over data.mdb, and that is safe only while no other
process has the database open: LMDB keeps the last transaction id in lock.mdb, shared by every
process with the database open, and a process holding it across a swap reads the new file
through the old id, sees an empty meta page, and a writer then commits empty tables over the
real ones (a database lost). So the swap waits (Store.compact_file) until it has the database to
itself: every open Store holds a shared lock on the database directory, the swap takes it
exclusively (waiting a few seconds for readers to close; readers opened meanwhile wait for the
swap), and LMDB's own lock as well (against any other program); when it cannot, the compact
stops with one line (exit 2), its records compacted and the file not shrunk. The new file is
opened afresh and must hold the same root record and counts before the compact reports success.
A copy is an unnamed file until the moment it is renamed, so a kill leaves no compact.tmp (a
writer's next open removes one left at that moment); a full disk leaves the database as it was.
"""

from typing import NamedTuple

from pndb.book import STRATEGIES, StrategyWalker
from pndb.games.interface import keys_from_arrays
from pndb.integrity import decided_good
from pndb.progress import Counter
from pndb.values import EMPTY_PROOF, EXPANDED, NO_MOVE


class CompactReport(NamedTuple):
    nodes_before: int
    nodes_after: int
    links_before: int
    links_after: int
    proof_records_before: int
    proof_records_after: int
    bytes_before: int
    bytes_after: int


def open_part(view, root):
    """(kept keys, frontier keys): nodes reachable through non-exact nodes, and the exact ones."""
    keep, frontier = set(), set()
    stack = [root]
    while stack:
        key = stack.pop()
        if key in keep:
            continue
        keep.add(key)
        rec = view.node(key)
        if rec is None:
            continue
        if rec.value.exact:
            frontier.add(key)
        elif rec.expanded:
            stack.extend(view.children(key).keys)
    return keep, frontier


def compact(store, game, progress=None):
    """Compact the database of ``store`` (opened as the writer); returns a CompactReport.
    ``progress``: called with a progress.Tick as the compaction goes on."""
    bytes_before = store.file_bytes()
    with store.view(game) as view:
        counts = view.counts()
        root_hex = view.meta("root")
        if root_hex is None:
            return CompactReport(0, 0, 0, 0, 0, 0, bytes_before, bytes_before)
        keep, frontier = open_part(view, bytes.fromhex(root_hex))
        proofs = {}
        leaves = []
        counter = Counter(progress, "writing the strategies of decided nodes", len(frontier), "nodes")
        for key in frontier:
            counter.add()
            rec = view.node(key)
            if rec.terminal:
                continue
            for fact in STRATEGIES[rec.value]:
                walker = StrategyWalker(view)
                walker.strategy(key, fact)
                records = walker.book_records()
                for k, move in zip(keys_from_arrays(records["a"], records["b"]), records["move"].tolist()):
                    if move == NO_MOVE:  # a certificate decides it, and stays stored
                        continue
                    position = view.game.position(k)  # (the reply check accepts such a position)
                    if k != key and decided_good(view.game.status(position, early=True), fact):
                        continue
                    old = proofs.get(k) or view.proof(k) or EMPTY_PROOF
                    proofs[k] = old.with_fact(fact, move)
            if rec.expanded:
                leaves.append((key, rec._replace(flags=rec.flags & ~EXPANDED)))
        expanded = keep - frontier
        drop_nodes = [k for k, _ in view.nodes() if k not in keep]
        drop_links = [(c, p) for c, p in view.links() if c not in keep or p not in expanded]
    store.commit(nodes=leaves, proofs=proofs.items(), drop_nodes=drop_nodes, drop_links=drop_links)
    Counter(progress, "rewriting the file", None, "")
    store.compact_file()
    with store.view() as view:
        after = view.counts()
    return CompactReport(
        counts["nodes"], after["nodes"], counts["parent_links"], after["parent_links"],
        counts["proof_records"], after["proof_records"], bytes_before, store.file_bytes(),
    )  # fmt: skip
