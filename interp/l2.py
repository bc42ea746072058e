"""The shared L2: set-associative, LRU, write-back with write-allocate, lines of the
target's `l2.line_bytes`.

One DMA presents the lines it touches as a numpy array; the cache handles them in
rounds of at most one line per set (numpy over the round), so the cost is a handful of
vector operations per DMA, not a Python loop per line. Lines of one DMA that map to
the same set are handled in address order, one round each.

`cacheable=False` (NONE_CACHEABLE) looks lines up but never allocates: a read miss
goes to HBM, a write miss is written through to HBM. Counters are kept per tensor.
A tensor only ever accessed that way has no line in the cache to find, so the
machine counts its accesses as misses without looking (`never_cached`, `miss_all`):
a none-cacheable weight stream is most of a kernel's lines.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Lines of one access below which a Python loop beats the fixed cost of a vector round
# (a few microseconds of numpy calls; an access of one or two lines is common: one
# token's row of a tile).
SMALL = 8


@dataclass
class TensorStats:
    hits: int = 0
    misses: int = 0
    hbm_read: int = 0
    hbm_written: int = 0

    @property
    def hit_rate(self) -> float:
        n = self.hits + self.misses
        return self.hits / n if n else 0.0


class L2Cache:
    def __init__(self, size: int, line_bytes: int, ways: int):
        if size < line_bytes * ways or size % (line_bytes * ways):
            raise ValueError(f"L2 size {size} is not a positive multiple of {line_bytes} B x {ways} ways")
        self.line = line_bytes
        self.ways = ways
        self.sets = size // (line_bytes * ways)
        self.tags = np.full((self.sets, ways), -1, np.int64)
        self.stamp = np.zeros((self.sets, ways), np.int64)  # 0 = never used: the first victim
        self.dirty = np.zeros((self.sets, ways), bool)
        self.owner = np.full((self.sets, ways), -1, np.int64)
        self.clock = 0
        self.written_back = 0  # dirty lines evicted by misses, all tensors: HBM writes
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self.stats: dict[str, TensorStats] = {}
        self.cached: set[int] = set()  # ids of tensors a cacheable access was made for

    def tensor_id(self, name: str) -> int:
        if name not in self.stats:
            self.ids[name] = len(self.names)
            self.names.append(name)
            self.stats[name] = TensorStats()
        return self.ids[name]

    def access(
        self, lines: np.ndarray, tensor: str, write: bool, cacheable: bool = True, ascending: bool = False
    ) -> tuple[int, int]:
        """Touch `lines` (line addresses, unique; `ascending` if the caller knows they are
        sorted) on behalf of `tensor`; return (hits, misses)."""
        if ascending and lines.size <= SMALL and (lines.size < 2 or lines[-1] - lines[0] < self.sets):
            return self.access_few(lines.tolist(), tensor, write, cacheable)
        tid = self.tensor_id(tensor)
        st = self.stats[tensor]
        if cacheable:
            self.cached.add(tid)
        hits = misses = 0
        sets = lines % self.sets
        if lines.size < 2 or lines[-1] - lines[0] < self.sets and (ascending or (np.diff(lines) > 0).all()):
            bounds = [0, lines.size]  # ascending within one sweep of the sets: no conflicts
        else:
            lines, sets, bounds = _rounds(lines, sets)
        # A round of a few lines (many lines sharing few sets) runs line by line, as a
        # small access does; the reference (not `ascending`) keeps the vector round.
        listed = lines.tolist() if ascending and len(bounds) > 2 else None
        for a, b in itertools.pairwise(bounds):
            if listed is not None and b - a <= SMALL:
                nh, nm = self._round_small(listed[a:b], write, cacheable, tid, st)
            else:
                nh, nm = self._round(lines[a:b], sets[a:b], write, cacheable, tid, st)
            hits += nh
            misses += nm
        st.hits += hits
        st.misses += misses
        return hits, misses

    def access_tile(self, first: int, pattern: Pattern, tensor: str, write: bool, cacheable: bool) -> tuple[int, int]:
        """`access` of a tile's lines, `pattern` from line `first` (`tile_lines`)."""
        if pattern.few is not None and pattern.span < self.sets:
            return self.access_few([first + r for r in pattern.few], tensor, write, cacheable)
        return self.access(pattern.rel + first, tensor, write, cacheable, ascending=True)

    def access_few(self, lines: list[int], tensor: str, write: bool, cacheable: bool) -> tuple[int, int]:
        """`access` of at most `SMALL` ascending lines of distinct sets, a Python loop."""
        tid = self.tensor_id(tensor)
        st = self.stats[tensor]
        if cacheable:
            self.cached.add(tid)
        hits, misses = self._round_small(lines, write, cacheable, tid, st)
        st.hits += hits
        st.misses += misses
        return hits, misses

    def never_cached(self, tensor: str) -> bool:
        """Whether no cacheable access was made for `tensor`: none of the lines only it
        uses can be in the cache (the caller knows which lines those are)."""
        return self.ids.get(tensor) not in self.cached

    def miss_all(self, n: int, tensor: str, write: bool) -> tuple[int, int]:
        """What a none-cacheable `access` of `n` lines none of which is in the cache does:
        count them as misses to or from HBM. It looks up no way and changes none; the
        LRU clock advances as for a lookup, so later stamps are the same."""
        self.tensor_id(tensor)
        st = self.stats[tensor]
        self.clock += n
        st.misses += n
        if write:
            st.hbm_written += n * self.line
        else:
            st.hbm_read += n * self.line
        return 0, n

    def _round(
        self, batch: np.ndarray, s: np.ndarray, write: bool, cacheable: bool, tid: int, st: TensorStats
    ) -> tuple[int, int]:
        """Lines `batch` of distinct sets `s`, stamped in order: (hits, misses). The
        common rounds, all hits or all misses, skip the selections of the mixed one."""
        n = batch.size
        base = self.clock + 1
        self.clock += n
        match = self.tags[s] == batch[:, None]
        nh = int(np.count_nonzero(match))  # a line is in at most one way of its set
        if nh == n:
            self._touch(s, match.argmax(axis=1), np.arange(base, base + n), write)
            return nh, 0
        if nh:
            hit = match.any(axis=1)
            at = hit.nonzero()[0]
            self._touch(s[at], match[at].argmax(axis=1), base + at, write)
            at = (~hit).nonzero()[0]
            batch, s, stamps = batch[at], s[at], base + at
        nm = n - nh
        if not cacheable:
            if write:
                st.hbm_written += nm * self.line
            else:
                st.hbm_read += nm * self.line
            return nh, nm
        self._fill(batch, s, stamps if nh else np.arange(base, base + n), write, tid)
        if not write:  # a write miss allocates without reading: the DMA writes whole lines
            st.hbm_read += nm * self.line
        return nh, nm

    def _round_small(
        self, lines: list[int], write: bool, cacheable: bool, tid: int, st: TensorStats
    ) -> tuple[int, int]:
        """`_round` line by line, for a few lines of distinct sets."""
        tags, stamp, sets = self.tags, self.stamp, self.sets
        nh, missed = 0, []
        for line in lines:
            self.clock += 1
            s = line % sets
            row = tags[s].tolist()
            if line in row:
                w = row.index(line)
                stamp[s, w] = self.clock
                if write:
                    self.dirty[s, w] = True
                nh += 1
            else:
                missed.append((line, s, self.clock))
        nm = len(missed)
        if nm and not cacheable:
            if write:
                st.hbm_written += nm * self.line
            else:
                st.hbm_read += nm * self.line
        elif nm:
            for line, s, when in missed:
                self._fill_one(line, s, when, write, tid)
            if not write:
                st.hbm_read += nm * self.line
        return nh, nm

    def _fill_one(self, line: int, s: int, when: int, write: bool, tid: int) -> None:
        """`_fill` of one line."""
        w = int(self.stamp[s].argmin())
        if self.dirty[s, w] and self.tags[s, w] >= 0:
            self.written_back += 1
            self.stats[self.names[self.owner[s, w]]].hbm_written += self.line
        self.tags[s, w] = line
        self.stamp[s, w] = when
        self.dirty[s, w] = write
        self.owner[s, w] = tid

    def _touch(self, s: np.ndarray, w: np.ndarray, stamps: np.ndarray, write: bool) -> None:
        self.stamp[s, w] = stamps
        if write:
            self.dirty[s, w] = True

    def _fill(self, batch: np.ndarray, s: np.ndarray, stamps: np.ndarray, write: bool, tid: int) -> None:
        """Missed lines replace the least recently used way of their sets."""
        victim = self.stamp[s].argmin(axis=1)
        evict = self.dirty[s, victim] & (self.tags[s, victim] >= 0)
        if evict.any():
            self.written_back += int(np.count_nonzero(evict))
            for owner, k in zip(*np.unique(self.owner[s, victim][evict], return_counts=True), strict=True):
                self.stats[self.names[owner]].hbm_written += int(k) * self.line
        self.tags[s, victim] = batch
        self.stamp[s, victim] = stamps
        self.dirty[s, victim] = write
        self.owner[s, victim] = tid

    def flush(self) -> None:
        """Write every dirty line back (the end of the kernel: outputs reach HBM)."""
        d = self.dirty & (self.tags >= 0)
        for owner, n in zip(*np.unique(self.owner[d], return_counts=True), strict=True):
            self.stats[self.names[owner]].hbm_written += int(n) * self.line
        self.dirty[:] = False


def _rounds(lines: np.ndarray, sets: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The lines and their sets reordered into rounds, and where each round starts (and
    the last ends): round r holds the r-th line of each set, in the lines' order. One
    sort of the sets gives each line its round, however many lines share a set."""
    by_set = np.argsort(sets, kind="stable")
    grouped = sets[by_set]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank = np.empty(lines.size, np.int64)
    rank[by_set] = np.arange(lines.size) - np.repeat(starts, np.diff(np.r_[starts, lines.size]))
    order = np.argsort(rank, kind="stable")
    return lines[order], sets[order], [0, *np.cumsum(np.bincount(rank)).tolist()]


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
    the same as Python ints if there are at most `SMALL`; `span`, last minus first."""

    rel: np.ndarray
    few: tuple[int, ...] | None
    span: int

    @property
    def size(self) -> int:
        return self.rel.size


def tile_lines(
    base: int, shape: tuple[int, ...], offsets: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> tuple[int, Pattern]:
    """The line a tile starts in and the pattern of its lines (`region_lines` in two)."""
    start = base + sum(map(operator.mul, offsets, _strides(shape))) * elem_bytes
    # The pattern depends only on where in its line the tile starts: computed once.
    return start // line, _pattern(tuple(shape[1:]), tuple(extent), elem_bytes, line, start % line)


@lru_cache(maxsize=1024)
def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return tuple(strides)


@lru_cache(maxsize=4096)
def _pattern(inner: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int, phase: int) -> Pattern:
    lines = _lines(phase, (extent[0], *inner), (0,) * len(extent), extent, elem_bytes, line)
    lines.setflags(write=False)
    few = tuple(lines.tolist()) if lines.size <= SMALL else None
    return Pattern(lines, few, int(lines[-1] - lines[0]) if lines.size else 0)


def _lines(
    base: int, shape: tuple[int, ...], offsets: tuple[int, ...], extent: tuple[int, ...], elem_bytes: int, line: int
) -> np.ndarray:
    strides = np.ones(len(shape), np.int64)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    starts = np.zeros(1, np.int64)
    for ax in range(len(shape) - 1):
        idx = (offsets[ax] + np.arange(extent[ax], dtype=np.int64)) * strides[ax]
        starts = (starts[:, None] + idx[None, :]).ravel()
    first = (base + (starts + offsets[-1]) * elem_bytes) // line
    last = (base + (starts + offsets[-1] + extent[-1]) * elem_bytes - 1) // line
    counts = last - first + 1
    total = int(counts.sum())
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    lines = np.repeat(first, counts) + (np.arange(total, dtype=np.int64) - run_start)
    if len(first) > 1 and (first[1:] <= last[:-1]).any():
        lines = np.unique(lines)
    return lines
