"""The write-back node cache between the search and the store.

The search reads and writes nodes, parent links and proof records here; nothing reaches the
database until :meth:`NodeCache.checkpoint`, which writes every change since the last checkpoint in
one LMDB transaction, so the database always holds a consistent DAG. Reads that miss the cache go
to a read view of the last checkpoint, renewed at each checkpoint (a read transaction pins pages:
it must not live long).

Eviction: when more than ``limit`` records are held after a checkpoint, the clean records are
dropped (dirty ones never exist right after a checkpoint).
"""

from dataclasses import dataclass, field

from pndb.values import EMPTY_PROOF


@dataclass
class NodeCache:
    store: object
    limit: int = 500_000  # node records kept in memory between checkpoints (~150 MB)
    records: dict = field(default_factory=dict)
    dirty: set = field(default_factory=set)
    new_links: dict = field(default_factory=dict)  # child -> [parents] not yet committed
    new_proofs: dict = field(default_factory=dict)  # key -> Proof not yet committed
    view: object = None

    def __post_init__(self):
        self.view = self.store.view()

    def get(self, key):
        """The Node of ``key``, or None when the DAG does not have it."""
        rec = self.records.get(key)
        if rec is None:
            rec = self.view.node(key)
            if rec is not None:
                self.records[key] = rec
        return rec

    def put(self, key, node):
        self.records[key] = node
        self.dirty.add(key)

    def link(self, child, parent):
        self.new_links.setdefault(child, []).append(parent)

    def parents(self, key):
        return self.view.parents(key) + self.new_links.get(key, [])

    def proof(self, key):
        """The Proof of ``key`` as known so far (committed or not), EMPTY_PROOF when none."""
        return self.new_proofs.get(key) or self.view.proof(key) or EMPTY_PROOF

    def put_proof(self, key, proof):
        self.new_proofs[key] = proof

    def stored_counts(self):
        """Node, link and proof-record counts as of the last checkpoint."""
        return self.view.counts()

    def checkpoint(self, meta=None):
        """Commit every change in one transaction, then read from a fresh view."""
        self.view.close()
        links = [(c, p) for c, ps in self.new_links.items() for p in ps]
        self.store.commit(
            nodes=[(k, self.records[k]) for k in self.dirty],
            links=links,
            proofs=self.new_proofs.items(),
            meta=meta,
        )
        self.dirty.clear()
        self.new_links.clear()
        self.new_proofs.clear()
        if len(self.records) > self.limit:
            self.records.clear()
        self.view = self.store.view()

    def close(self):
        """Drop the read view; changes since the last checkpoint are not written."""
        self.view.close()
