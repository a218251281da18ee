"""Shared test set-up: a numba cache outside the source tree, kept between runs."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))
