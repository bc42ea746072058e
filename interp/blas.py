"""One BLAS thread while the `npu` level runs.

The model multiplies tiles (a few hundred rows and columns at most) thousands of times.
Such a product is far too small to gain from BLAS threads, but a threaded OpenBLAS still
wakes and joins its threads for each one, and when another process holds a CPU those
threads wait for it: measured on a busy two-CPU machine, a 128x256 @ 256x64 product took
7.6 ms threaded against 0.07 ms on one thread, 90% of a run's time. The golden (one large
product) keeps every thread.

OpenBLAS, which numpy's wheels bundle, is found among the loaded libraries and asked
through its own API (what `threadpoolctl` does); with another BLAS, or where the loaded
libraries cannot be listed, nothing changes. Results do not depend on the thread count:
OpenBLAS splits a product over rows and columns, never over the summed dimension.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

MAPS = Path("/proc/self/maps")
# (get, set) entry points of OpenBLAS builds: numpy's scipy-openblas (64-bit ints), plain.
_API = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)
_lock = threading.Lock()
_depth = 0
_saved = 0


@cache
def _openblas() -> tuple | None:
    """(get, set) of the loaded OpenBLAS, or None."""
    import numpy  # noqa: F401  (loads its BLAS)

    try:
        paths = {line.split()[-1] for line in MAPS.read_text().splitlines() if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, set_ in _API:
            if hasattr(lib, get) and hasattr(lib, set_):
                return getattr(lib, get), getattr(lib, set_)
    return None


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread inside; nested and concurrent uses restore the outer count once."""
    global _depth, _saved
    api = _openblas()
    if api is None:
        yield
        return
    get, set_ = api
    with _lock:
        if _depth == 0:
            _saved = get()
            set_(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                set_(_saved)
