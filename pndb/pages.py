"""Reading every page of a database, in a process of its own (Store.read_every_page's child).

LMDB trusts its pages: a damaged one (a zeroed page, say) can make it abort the process at an
assertion instead of reporting an error, so a command that reads a whole database has a child
read it first. The child imports lmdb alone (not numpy, not the rest of pndb): it starts in a
fraction of the time, which a quick export notices.
"""

import lmdb


def read_pages(path, map_size, max_dbs):
    """Read every record of every table of the database at ``path``."""
    env = lmdb.open(path, map_size=map_size, max_dbs=max_dbs, readonly=True, create=False, lock=True)
    with env.begin() as txn:
        for name, _ in txn.cursor():
            for _ in txn.cursor(db=env.open_db(bytes(name), txn=txn, create=False)):
                pass
    env.close()
