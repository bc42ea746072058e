"""Which L2 lines a GM tile touches (`pto.interp.l2`'s input): a tile's lines as a
`Pattern` relative to the line it starts in, which depends only on the tensor's inner
shape, the tile's extent and where in its line the tile starts (kept per such key)."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

# Lines of one access below which a Python loop beats the fixed cost of a vector round
# (a few microseconds of numpy calls; an access of one or two lines is common: one
# token's row of a tile).
SMALL = 8


def region_lines(
    base: int, shape: tuple[int, ...], offsets: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> np.ndarray:
    """The unique line addresses a tile `[offsets, +extent)` of a row-major tensor touches,
    in address order."""
    first, pattern = tile_lines(base, shape, offsets, extent, elem_bytes, line)
    return pattern.rel + first


@dataclass(frozen=True)
class Pattern:
    """The lines of a tile relative to the line it starts in: `rel`, ascending; `few`,
    the same as Python ints if there are at most `SMALL`; `span`, last minus first;
    `runs`, the contiguous byte runs (DMA bursts) of the tile;
    `rounds`, `L2Cache._rounds_of`'s, per (sets, phase)."""

    rel: np.ndarray
    few: tuple[int, ...] | None
    span: int
    runs: int
    rounds: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        return self.rel.size


def tile_lines(
    base: int, shape: tuple[int, ...], offsets: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> tuple[int, Pattern]:
    """The line a tile starts in and the pattern of its lines (`region_lines` in two)."""
    start = base + sum(map(operator.mul, offsets, strides(shape))) * elem_bytes
    return lines_from(start, tuple(shape[1:]), tuple(extent), elem_bytes, line)


def lines_from(
    start: int, inner: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> tuple[int, Pattern]:
    """`tile_lines` of a tile whose first element is at byte `start`, of a tensor whose
    dimensions after the first are `inner`."""
    # The pattern depends only on where in its line the tile starts: computed once.
    return start // line, _pattern(inner, extent, elem_bytes, line, start % line)


@lru_cache(maxsize=1024)
def strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides."""
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return tuple(out)


@lru_cache(maxsize=4096)
def _pattern(inner: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int, phase: int) -> Pattern:
    """The lines of a tile `extent` of a tensor whose dimensions after the first are
    `inner`, starting `phase` bytes into a line: they depend on nothing else."""
    lines = _lines(phase, (extent[0], *inner), (0,) * len(extent), extent, elem_bytes, line)
    return _frozen_pattern(lines, _nd_runs(inner, extent))


# (public: `Machine.gm_access` calls it without `lines_from`'s call around it)
line_pattern = _pattern


def _frozen_pattern(lines: np.ndarray, runs: int) -> Pattern:
    lines.setflags(write=False)
    few = tuple(lines.tolist()) if lines.size <= SMALL else None
    return Pattern(lines, few, int(lines[-1] - lines[0]) if lines.size else 0, runs)


def _nd_runs(inner: tuple[int, ...], extent: tuple[int, ...]) -> int:
    """The contiguous runs of a row-major tile: one per index of the axes before the
    last axis it does not span whole (a tile of whole rows is one run)."""
    if 0 in extent:
        return 0
    full = (extent[0], *inner)
    cut = max((ax for ax in range(1, len(extent)) if extent[ax] != full[ax]), default=0)
    return math.prod(extent[:cut])


def _lines(
    base: int, shape: tuple[int, ...], offsets: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> np.ndarray:
    if 0 in extent:  # (an empty tile, a ragged tail's half past K: no line; each row would count one)
        return np.zeros(0, np.int64)
    strides = np.ones(len(shape), np.int64)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    starts = np.zeros(1, np.int64)
    for ax in range(len(shape) - 1):
        idx = (offsets[ax] + np.arange(extent[ax], dtype=np.int64)) * strides[ax]
        starts = (starts[:, None] + idx[None, :]).ravel()
    first = (base + (starts + offsets[-1]) * elem_bytes) // line
    last = (base + (starts + offsets[-1] + extent[-1]) * elem_bytes - 1) // line
    return _run_lines(first, last)


def _run_lines(first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """The unique lines of contiguous runs, run i over lines first[i]..last[i] (ascending
    runs: each starts at or after the previous one's start)."""
    counts = last - first + 1
    total = int(counts.sum())
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    lines = np.repeat(first, counts) + (np.arange(total, dtype=np.int64) - run_start)
    if len(first) > 1 and (first[1:] <= last[:-1]).any():
        lines = np.unique(lines)
    return lines


def nz_lines_from(
    start: int, col_phase: int, block_stride: int, c0: int, extent: tuple[int, ...], elem_bytes: int, line: int
) -> tuple[int, Pattern]:
    """`lines_from` of a tile of an NZ (fractal) matrix, whose first element is at byte
    `start` and `col_phase` columns into its C0-column block: column block k of the tile
    is one contiguous run (its rows, C0 elements each), `block_stride` bytes (the
    matrix's rows x 32 B) after block k - 1's."""
    return start // line, _nz_pattern(block_stride, c0, extent, col_phase, elem_bytes, line, start % line)


@lru_cache(maxsize=1024)
def _nz_pattern(
    block_stride: int, c0: int, extent: tuple[int, ...], col_phase: int, elem_bytes: int, line: int, phase: int
) -> Pattern:
    rows, cols = extent
    nblocks = (col_phase + cols + c0 - 1) // c0 if rows and cols else 0
    k = np.arange(nblocks, dtype=np.int64)
    lo = np.where(k == 0, col_phase, 0)  # the tile's first and last column in block k
    hi = np.minimum(col_phase + cols - k * c0, c0) - 1
    at = phase + k * block_stride - col_phase * elem_bytes  # block k's row 0, column 0, from the line
    begin, end = at + lo * elem_bytes, at + ((rows - 1) * c0 + hi + 1) * elem_bytes  # block k's bytes
    runs = int(nblocks - np.count_nonzero(begin[1:] == end[:-1]))  # blocks of whole columns merge
    return _frozen_pattern(_run_lines(begin // line, (end - 1) // line), runs)
