"""The L2 model: LRU order, associativity conflicts, NONE_CACHEABLE bypass, write-back,
per-tensor counters, and the lines a tile touches."""

from __future__ import annotations

import numpy as np
import pytest

from pto.interp.l2 import L2Cache, region_lines

LINE = 512


def cache(sets: int = 4, ways: int = 2) -> L2Cache:
    return L2Cache(sets * ways * LINE, LINE, ways)


def lines(*xs: int) -> np.ndarray:
    return np.array(xs, np.int64)


def test_hit_after_miss_and_per_tensor_counters() -> None:
    c = cache()
    assert c.access(lines(0, 1), "a", write=False) == (0, 2)
    assert c.access(lines(0, 1), "a", write=False) == (2, 0)
    assert c.access(lines(1, 2), "b", write=False) == (1, 1)
    assert (c.stats["a"].hits, c.stats["a"].misses, c.stats["a"].hbm_read) == (2, 2, 2 * LINE)
    assert (c.stats["b"].hits, c.stats["b"].misses) == (1, 1)
    assert c.stats["a"].hit_rate == 0.5


def test_lru_evicts_the_least_recently_used_way() -> None:
    c = cache(sets=4, ways=2)
    c.access(lines(0), "t", False)  # set 0
    c.access(lines(4), "t", False)  # set 0, second way
    c.access(lines(0), "t", False)  # touch 0: now 4 is the LRU
    c.access(lines(8), "t", False)  # set 0 again: evicts 4
    assert c.access(lines(0), "t", False) == (1, 0)
    assert c.access(lines(4), "t", False) == (0, 1)


def test_associativity_conflicts_within_one_access() -> None:
    c = cache(sets=4, ways=2)
    # Three lines of one set in one DMA: the third evicts the first (handled in rounds).
    assert c.access(lines(0, 4, 8), "t", False) == (0, 3)
    assert c.access(lines(8, 4), "t", False) == (2, 0)
    assert c.access(lines(0), "t", False) == (0, 1)
    # Lines of different sets do not conflict.
    c2 = cache(sets=4, ways=1)
    c2.access(lines(0, 1, 2, 3), "t", False)
    assert c2.access(lines(0, 1, 2, 3), "t", False) == (4, 0)


def test_none_cacheable_bypasses_allocation() -> None:
    c = cache()
    assert c.access(lines(0, 1), "w", False, cacheable=False) == (0, 2)
    assert c.access(lines(0, 1), "w", False, cacheable=False) == (0, 2)
    assert c.stats["w"].hbm_read == 4 * LINE
    c.access(lines(5), "w", True, cacheable=False)
    assert c.stats["w"].hbm_written == LINE
    # A line someone else brought in is still a hit for a non-cacheable read.
    c.access(lines(2), "x", False)
    assert c.access(lines(2), "w", False, cacheable=False) == (1, 0)


def test_write_back_on_eviction_and_flush() -> None:
    c = cache(sets=1, ways=1)
    c.access(lines(0), "out", write=True)  # write-allocate: no HBM read
    assert (c.stats["out"].hbm_read, c.stats["out"].hbm_written) == (0, 0)
    c.access(lines(1), "x", write=False)  # evicts the dirty line
    assert c.stats["out"].hbm_written == LINE
    c.access(lines(2), "out", write=True)
    c.flush()
    assert c.stats["out"].hbm_written == 2 * LINE


def test_bad_geometry() -> None:
    with pytest.raises(ValueError, match="not a positive multiple"):
        L2Cache(1000, LINE, 16)


def test_region_lines_row_major_tiles() -> None:
    # A [4, 128] f32 tensor: one 512-byte line per row.
    assert region_lines(0, (4, 128), (1, 0), (2, 128), 4, LINE).tolist() == [1, 2]
    # Half rows of a [4, 256] f32 tensor (1 KiB rows): the second line of each row.
    assert region_lines(0, (4, 256), (0, 128), (4, 128), 4, LINE).tolist() == [1, 3, 5, 7]
    # Narrow columns share lines: rows of 24 f32 (96 bytes) -> 16 rows span 3 lines.
    assert region_lines(0, (64, 24), (0, 0), (16, 24), 4, LINE).tolist() == [0, 1, 2]
    # The base address offsets the lines; rank 1 works.
    assert region_lines(1024, (256,), (0,), (256,), 4, LINE).tolist() == [2, 3]


def test_written_back_counts_dirty_evictions_only() -> None:
    c = cache(sets=1, ways=1)
    c.access(lines(0), "out", write=True)
    c.access(lines(1), "x", write=False)  # evicts the dirty line 0
    c.access(lines(2), "x", write=False)  # evicts the clean line 1
    c.access(lines(3), "w", write=False, cacheable=False)  # allocates nothing
    assert c.written_back == 1
