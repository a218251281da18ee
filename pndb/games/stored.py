"""Games whose keys cannot be read back (``game.stored_positions``: Go, whose key is a digest of
a position and its history), seen through the table of a database that keeps, beside each
node, the record of the position its key names (the store's ``positions`` table).

The game knows the positions of the keys it has made in this process; :class:`StoredPositions`
writes the record of every key it hands out into a writable table (the search's node cache,
committed with the nodes in one checkpoint), and reads back from the table the positions of
keys made in an earlier process (``game.restore`` checks that the record's key is the key).
"""

from pndb.games.errors import GameError


class StoredPositions:
    """The game-family interface of ``game`` whose positions also come from ``table``
    (``position_record(key)`` -> bytes or None; a writable table also has
    ``put_position_record(key, record)``)."""

    def __init__(self, game, table):
        self.game = game
        self.table = table
        self.put = getattr(table, "put_position_record", None)
        self.kept = set()  # keys whose record the table holds

    def __getattr__(self, name):  # the rest of the interface: the game's own
        return getattr(self.game, name)

    def position(self, key):
        try:
            return self.game.position(key)
        except GameError:
            record = self.table.position_record(key)
            if record is None:
                raise
            self.kept.add(key)
            return self.game.restore(key, record)

    def keep(self, key):
        if self.put is not None and key not in self.kept:
            if self.table.position_record(key) is None:
                self.put(key, self.game.position_record(key))
            self.kept.add(key)
        return key

    def canonical(self, pos):
        found = self.game.canonical(pos)
        self.keep(found.key)
        return found

    def key(self, pos):
        return self.keep(self.game.key(pos))

    def children(self, pos):
        found = self.game.children(pos)
        for key in found.keys:
            self.keep(key)
        return found


def with_table(game, table):
    """``game`` as the layers above a store use it: through ``table`` when its keys are digests."""
    return StoredPositions(game, table) if game.stored_positions else game
