"""Export: the book of a solved database's start position, written as one file."""

from pndb import __version__
from pndb.book.format import FORMAT_VERSION, RECORD, output_target, write_book
from pndb.book.walk import STRATEGIES, ExportError, GraphSources, StrategyWalker
from pndb.games import family_of, shown
from pndb.progress import Counter


def export_book(store, game, out_path, partial=False, progress=None):
    """Write the book of the store's start position; returns (the header written, the bytes
    written). ``progress`` gets a progress.Tick as the walk goes on and when writing starts."""
    output_target(out_path)
    with store.view(game) as view:
        start = view.meta("start")
        root_hex = view.meta("root")
        root_rec = view.node(bytes.fromhex(root_hex)) if root_hex else None
        if root_rec is None:
            raise ExportError("the database has no solve yet; run `pndb solve` first")
        value = root_rec.value
        if not value.exact and not partial:
            raise ExportError(
                f"not solved yet (known so far: {value.name}); solve on, or export with --partial"
            )
        counter = Counter(progress, "walking the strategies")
        if store.graph_keyed:
            walker = StrategyWalker(view, counter=counter, graph=GraphSources(view))
            root = view.game.game.key(family_of(game).codec.position(start))
        else:
            walker = StrategyWalker(view, counter=counter)
            root = bytes.fromhex(root_hex)
        for fact in STRATEGIES[value]:
            walker.strategy(root, fact)
        records = walker.book_records()
    header = {
        "format": "pndb-book",
        "format_version": FORMAT_VERSION,
        "pndb_version": __version__,
        "game": game.spec,
        "rules": game.rules_data(),
        "start": start,
        "value": value.name,
        "partial": bool(partial),
        "records": len(records),
        "record_size": RECORD.itemsize,
    }
    Counter(progress, f"writing {shown(out_path)}", len(records), "records")
    return header, write_book(out_path, header, records, walker.certs)
