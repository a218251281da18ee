"""Standalone programs beside pndb: verify.py checks a book with its own rules (imports no pndb)."""
