"""The resource limits of a run, checked before anything is allocated.

`L2_SIZE_CAP`: the largest L2 a run may model (the model keeps 25 bytes of state per
512-byte line, so 50 MB at the cap). The kernel's arrays (inputs, their copies in the
model's global memory, outputs and their per-element write counts) must fit a memory
budget, by default half of the machine's physical memory.
"""

from __future__ import annotations

import os

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX

from pto.driver.errors import UsageError
from pto.interp.numerics import DTYPES
from pto.interp.run import Signature

L2_SIZE_CAP = 1 << 30  # bytes
FALLBACK_MEMORY_BUDGET = 8 << 30  # bytes, when the machine's memory cannot be read
WRITE_COUNT_BYTES = 4  # an int32 per output element


def default_memory_budget() -> int:
    """`PTO_RUN_MAX_MEMORY` if set, else half the machine's physical memory."""
    env = os.environ.get("PTO_RUN_MAX_MEMORY")
    if env:
        try:
            return int(env)
        except ValueError:
            raise UsageError(f"PTO_RUN_MAX_MEMORY must be a number of bytes, got '{env}'") from None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return FALLBACK_MEMORY_BUDGET


def array_bytes(sig: Signature, tokens: int) -> int:
    """A lower bound on the bytes a run allocates for the kernel's arrays: each input
    (and its copy in the model's global memory), each output and its write counts."""

    def nbytes(a, extra: int = 0) -> int:
        n = 1
        for d in a.shape:
            n *= tokens if d == DYNAMIC_INDEX else d
        return n * (np.dtype(DTYPES[a.elem]).itemsize + extra)

    return sum(2 * nbytes(a) for a in sig.inputs) + sum(nbytes(a, WRITE_COUNT_BYTES) for a in sig.outputs)


def over_budget(sig: Signature, tokens: int, budget: int | None = None) -> str | None:
    """Why the kernel's arrays at `tokens` do not fit `budget` (by default
    `default_memory_budget()`), or None: "would need at least ... bytes ..."."""
    budget = default_memory_budget() if budget is None else budget
    need = array_bytes(sig, tokens)
    if need <= budget:
        return None
    return f"would need at least {need} bytes for the kernel's arrays, over the memory budget of {budget} bytes"
