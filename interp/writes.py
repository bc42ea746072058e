"""How many times each element of an output was written, counted after the run.

A run writes its outputs tile by tile; `Machine.count_writes` only notes each tile, and
`count` counts them all at the end. Counting as each tile was written was a numpy
slice and an add per tile (up to 6 us each, a sixth of mla_wkv_rmsnorm's timing-only
run); counts add, so their order does not matter, and nothing reads them before the run
ends. Nor need anything read them at all: `RunResult.write_counts` counts when first
read. A count array is the output's size in int32 (16 MB for the int8 kernel's output
at t=512), and making it, its pages faulted in, was 7-20 ms of that kernel's 60 ms
timing-only run, which a tuner or a timing run never reads.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from typing import Any

import numpy as np

# A group of 2-D tiles of one extent is counted through a difference array (one scatter
# of its corners, two cumulative sums over the output) when that is cheaper than a slice
# per tile: about this many output elements cost what one tile's slice and add cost.
ELEMENTS_PER_TILE = 400


def count(outputs: dict[str, tuple[int, ...]], writes: list[tuple[Any, ...]]) -> dict[str, np.ndarray]:
    """Each output's per-element write counts (int32, `outputs` its shape by name) from
    the noted writes, (output name, window offset or None, shape, offsets, extent) each
    through the shape the write saw (the output's, a reshape's, or a window of its
    columns': then offset into the whole output)."""
    counts = {name: np.zeros(shape, np.int32) for name, shape in outputs.items()}
    tiles: dict[tuple[str, tuple[int, ...]], list] = defaultdict(list)
    for name, at, shape, offsets, extent in writes:
        if at is not None:  # a window (an output's columns): counted in the whole output
            offsets = tuple(map(operator.add, offsets, at))
        tiles[(name, tuple(shape))].append((tuple(offsets), tuple(extent)))
    for (name, shape), group in tiles.items():
        c = counts[name]
        add_tiles(c.reshape(shape) if c.shape != shape else c, group)
    return counts


def add_tiles(counts: np.ndarray, tiles: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> None:
    """Add 1 to `counts` over each (offsets, extent) tile, as `counts[slices] += 1` per
    tile would (a slice past the end is cut short)."""
    groups: dict[tuple[int, ...], list[tuple[int, ...]]] = defaultdict(list)
    for offsets, extent in tiles:
        if len(offsets) == 2 and counts.ndim == 2 and min(offsets) >= 0:
            groups[extent].append(offsets)
        else:  # (other ranks, and a negative offset, which a slice counts from the end)
            counts[tuple(slice(o, o + e) for o, e in zip(offsets, extent, strict=True))] += 1
    for shape, corners in groups.items():
        if len(corners) * ELEMENTS_PER_TILE < counts.size:
            e0, e1 = shape
            for o0, o1 in corners:
                counts[o0 : o0 + e0, o1 : o1 + e1] += 1
            continue
        _add_same(counts, np.array(corners, np.intp).reshape(-1, 2), shape)


def _add_same(counts: np.ndarray, offsets: np.ndarray, extent: tuple[int, ...]) -> None:
    """`add_tiles` of many tiles of one 2-D extent: +1 at each tile's first corner and
    its far corner, -1 at the other two, in an array one larger each way; its sums along
    both axes are then the count of tiles over each element."""
    rows, cols = counts.shape
    r0 = np.minimum(offsets[:, 0], rows)
    c0 = np.minimum(offsets[:, 1], cols)
    r1 = np.minimum(offsets[:, 0] + extent[0], rows)
    c1 = np.minimum(offsets[:, 1] + extent[1], cols)
    keep = (r0 < r1) & (c0 < c1)  # an empty tile counts nothing
    r0, c0, r1, c1 = r0[keep], c0[keep], r1[keep], c1[keep]
    diff = np.zeros((rows + 1, cols + 1), np.int64)
    np.add.at(diff, (r0, c0), 1)
    np.add.at(diff, (r0, c1), -1)
    np.add.at(diff, (r1, c0), -1)
    np.add.at(diff, (r1, c1), 1)
    np.cumsum(diff, axis=0, out=diff)
    np.cumsum(diff, axis=1, out=diff)
    counts += diff[:rows, :cols].astype(counts.dtype)
