"""The solution book: its file format (format), the strategy walk that collects what a book
holds from a solved database (walk), writing it from a database (export), and looking
positions up in a book as read (lookup). The format is docs/book-format.md.

The names other modules use are re-exported here: ``from pndb.book import read_book``.
"""

from pndb.book.export import export_book
from pndb.book.format import Book, BookError, is_book, read_book, read_header
from pndb.book.lookup import known_interval, move_values
from pndb.book.walk import STRATEGIES, ExportError, StrategyWalker

__all__ = [
    "Book",
    "BookError",
    "ExportError",
    "STRATEGIES",
    "StrategyWalker",
    "export_book",
    "is_book",
    "known_interval",
    "move_values",
    "read_book",
    "read_header",
]
