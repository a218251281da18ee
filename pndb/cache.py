"""The write-back node cache between the search and the store.

The search reads and writes nodes, parent links and proof records here; nothing reaches the
database until :meth:`NodeCache.checkpoint`, which writes every change since the last checkpoint in
one LMDB transaction, so the database always holds a consistent DAG. Reads that miss the cache go
to a read view of the last checkpoint, renewed at each checkpoint (a read transaction pins pages:
it must not live long).

Eviction by use: every record read or written since the last checkpoint is "recent"; when more
than ``limit`` records are held after a checkpoint, only the recent ones stay (the top of the DAG
and the paths the search walks are read at every step, so they stay hot). With a memory budget,
the process's anonymous memory is sampled at each checkpoint, and the limit shrinks while it is
over the budget: the budget, not an estimate of record sizes, has the last word.
"""

from dataclasses import dataclass, field

RECORD_BYTES = 400  # a cached Node with its key and dict slot, measured at about 330 bytes


def anonymous_memory_bytes():
    """The process's anonymous resident memory (RssAnon): what it holds itself, without the pages
    of the database file that the kernel maps in and may drop at any time. 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) << 10
    except OSError:
        pass
    return 0


@dataclass
class NodeCache:
    store: object
    limit: int = 500_000  # node records kept in memory after a checkpoint
    budget_bytes: int = 0  # anonymous memory the process may use; 0: no budget
    records: dict = field(default_factory=dict)
    recent: set = field(default_factory=set)  # keys read or written since the last checkpoint
    memory_bytes: int = 0  # anonymous memory at the last checkpoint
    dirty: set = field(default_factory=set)
    new_links: dict = field(default_factory=dict)  # child -> [parents] not yet committed
    new_proofs: dict = field(default_factory=dict)  # key -> Proof not yet committed
    new_certs: dict = field(default_factory=dict)  # key -> [Certificate] not yet committed
    new_graphs: dict = field(default_factory=dict)  # node key -> GraphEntry not yet committed
    new_positions: dict = field(default_factory=dict)  # key -> position record not yet committed
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
        self.recent.add(key)
        return rec

    def put(self, key, node):
        self.records[key] = node
        self.dirty.add(key)
        self.recent.add(key)

    def link(self, child, parent):
        self.new_links.setdefault(child, []).append(parent)

    def parents(self, key):
        return self.view.parents(key) + self.new_links.get(key, [])

    def proofs_of(self, board_keys):
        """The Proofs known so far (committed or not) for those of ``board_keys`` that have one."""
        found = self.view.proofs_of(board_keys)
        new = self.new_proofs
        for key in board_keys:
            proof = new.get(key)
            if proof is not None:
                found[key] = proof
        return found

    def put_proof(self, key, proof):
        self.new_proofs[key] = proof

    def add_certificate(self, key, cert):
        self.new_certs.setdefault(key, []).append(cert)

    def certificates(self, key):
        """The Certificates of ``key`` known so far (committed or not)."""
        return self.view.certificates(key) + self.new_certs.get(key, [])

    def graph(self, key):
        """The GraphEntry of a node key (committed or not), or None: the table a
        graphkey.GraphKeyedGame reads and writes during a solve."""
        return self.new_graphs.get(key) or self.view.graph(key)

    def put_graph(self, key, entry):
        self.new_graphs[key] = entry

    def position_record(self, key):
        """The record of the position a key names (committed or not), or None: the table a
        games.stored.StoredPositions reads and writes during a solve."""
        return self.new_positions.get(key) or self.view.position_record(key)

    def put_position_record(self, key, record):
        self.new_positions[key] = record

    def stored_counts(self):
        """Node, link and proof-record counts as of the last checkpoint."""
        return self.view.counts()

    def checkpoint(self, meta=None, point=None):
        """Commit every change in one transaction (with ``meta`` and the time series' ``point``,
        Store.commit's), then read from a fresh view."""
        self.view.close()
        links = [(c, p) for c, ps in self.new_links.items() for p in ps]
        self.store.commit(
            nodes=[(k, self.records[k]) for k in self.dirty],
            links=links,
            proofs=self.new_proofs.items(),
            certs=[(k, c) for k, cs in self.new_certs.items() for c in cs],
            graphs=self.new_graphs.items(),
            positions=self.new_positions.items(),
            meta=meta,
            point=point,
        )
        self.dirty.clear()
        self.new_links.clear()
        self.new_proofs.clear()
        self.new_certs.clear()
        self.new_graphs.clear()
        self.new_positions.clear()
        self.evict()
        self.view = self.store.view()

    def evict(self):
        """Keep the records used since the last checkpoint when there are too many; shrink the
        limit while the process is over its memory budget."""
        self.memory_bytes = anonymous_memory_bytes()
        if self.budget_bytes and self.memory_bytes > self.budget_bytes:
            self.limit = max(1000, int(min(self.limit, len(self.records)) * 0.7))
        if len(self.records) > self.limit:
            keep = [k for k in self.recent if k in self.records][: self.limit]
            self.records = {k: self.records[k] for k in keep}
        self.recent = set()

    def close(self):
        """Drop the read view; changes since the last checkpoint are not written."""
        self.view.close()
