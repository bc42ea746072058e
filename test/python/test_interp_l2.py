"""The L2 model: LRU order, associativity conflicts, NONE_CACHEABLE bypass, write-back,
per-tensor counters, and the lines a tile touches."""

from __future__ import annotations

from collections import Counter

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


class LineByLine:
    """The L2 as docs/model.md states it, one line at a time: a DMA's lines in rounds
    (the r-th line of each set in round r, rounds in order), each line stamped by a
    clock that counts lookups; a miss of a cacheable access takes its set's way used
    least recently (never used first, then the lowest way)."""

    def __init__(self, sets: int, ways: int):
        self.sets, self.clock, self.written_back = sets, 0, 0
        self.ways = [[[-1, 0, False, ""] for _ in range(ways)] for _ in range(sets)]  # tag, stamp, dirty, owner
        self.stats: dict[str, list[int]] = {}  # hits, misses, HBM bytes read, written

    def access(self, addrs: list[int], tensor: str, write: bool, cacheable: bool) -> tuple[int, int]:
        st = self.stats.setdefault(tensor, [0, 0, 0, 0])
        hits = 0
        for a in self.rounds(addrs):
            self.clock += 1
            ways = self.ways[a % self.sets]
            way = next((w for w in ways if w[0] == a), None)
            if way is not None:
                way[1], way[2], hits = self.clock, way[2] or write, hits + 1
            elif not cacheable:  # read from HBM or written through to it
                st[3 if write else 2] += LINE
            else:  # allocated; a write miss reads nothing (the DMA writes whole lines)
                victim = min(ways, key=lambda w: w[1])
                if victim[2] and victim[0] >= 0:
                    self.written_back += 1
                    self.stats[victim[3]][3] += LINE
                victim[:] = [a, self.clock, write, tensor]
                st[2] += 0 if write else LINE
        st[0] += hits
        st[1] += len(addrs) - hits
        return hits, len(addrs) - hits

    def rounds(self, addrs: list[int]) -> list[int]:
        rank, seen = [], Counter[int]()
        for a in addrs:
            rank.append(seen[a % self.sets])
            seen[a % self.sets] += 1
        return [a for _, a in sorted(zip(rank, addrs, strict=True), key=lambda p: p[0])]


@pytest.mark.parametrize("seed", range(4))
def test_the_cache_is_the_line_by_line_model(seed: int) -> None:
    """Random accesses, ascending or not, sharing sets or not, through every path of
    `access` and `access_tile`: the same answers, ways, stamps and counters as the model."""
    from pto.interp.l2 import tile_lines

    rng = np.random.default_rng(seed)
    sets, ways = int(rng.choice([1, 4, 16])), int(rng.choice([1, 2, 4]))
    c, ref = cache(sets, ways), LineByLine(sets, ways)
    for _ in range(400):
        tensor, write, cacheable = f"t{rng.integers(3)}", bool(rng.integers(2)), bool(rng.integers(4))
        if rng.integers(2):
            size = int(rng.integers(1, 40))
            picked = rng.choice(np.arange(int(rng.integers(0, 200)), 260), size, replace=False).astype(np.int64)
            ascending = bool(rng.integers(2))
            addrs = np.sort(picked) if ascending else picked
            got = c.access(addrs, tensor, write, cacheable, ascending=ascending)
        else:  # a tile of a 40 x 300 f32 tensor at a tensor's own base
            rows, cols = int(rng.integers(1, 12)), int(rng.integers(1, 300))
            at = (int(rng.integers(0, 40 - rows + 1)), int(rng.integers(0, 300 - cols + 1)))
            first, pattern = tile_lines(int(tensor[1]) * 100 * LINE, (40, 300), at, (rows, cols), 4, LINE)
            addrs = pattern.rel + first
            got = c.access_tile(first, pattern, tensor, write, cacheable)
        assert got == ref.access(addrs.tolist(), tensor, write, cacheable)
    assert c.used.tolist() == [sum(w[0] >= 0 for w in s) for s in ref.ways]
    assert c.free_ways == sets * ways - int(c.used.sum())
    for s in range(sets):
        assert c.tags[s].tolist() == [w[0] for w in ref.ways[s]]
        assert c.stamp[s].tolist() == [w[1] for w in ref.ways[s]]
        assert c.dirty[s].tolist() == [w[2] for w in ref.ways[s]]
    assert c.written_back == ref.written_back > 0
    counters = {n: [s.hits, s.misses, s.hbm_read, s.hbm_written] for n, s in c.stats.items()}
    assert counters == ref.stats


def test_a_tile_pattern_sorts_its_rounds_once_per_phase(monkeypatch) -> None:
    """The rounds of a tile over more than one sweep of the sets depend only on where in
    the sets it starts: sorted once per phase, the same accesses as the plain path."""
    from pto.interp import l2
    from pto.interp.l2 import tile_lines

    sorts = []
    real = l2._rounds
    monkeypatch.setattr(l2, "_rounds", lambda *a: sorts.append(1) or real(*a))
    c, ref = cache(4, 2), cache(4, 2)
    _, pattern = tile_lines(0, (40, 300), (0, 0), (8, 40), 4, LINE)
    assert pattern.span >= 4
    for first in (0, 4, 9, 1, 8, 13):  # phases 0, 0, 1, 1, 0, 1
        addrs = pattern.rel + first
        assert c.access_tile(first, pattern, "t", first % 3 == 0, True) == ref.access(addrs, "t", first % 3 == 0)
    assert len(sorts) == 2 + 6  # once per phase for the tile; every time for the plain path
    assert (c.tags == ref.tags).all() and (c.stamp == ref.stamp).all() and c.stats == ref.stats


def test_an_access_of_several_rounds_all_in_the_cache_is_one_stamping(monkeypatch) -> None:
    """Lines of one access that share sets, all of them cached: no round fills or
    evicts, so they are stamped in round order in one step, as the model's rounds do."""
    from pto.interp.l2 import tile_lines

    c, ref = cache(4, 8), LineByLine(4, 8)
    first, pattern = tile_lines(0, (40, 300), (0, 0), (6, 20), 4, LINE)
    addrs = (pattern.rel + first).tolist()
    assert pattern.span >= 4 and len(addrs) <= 32  # several rounds, all of them fit
    for write in (False, True):
        assert c.access_tile(first, pattern, "t", write, True) == ref.access(addrs, "t", write, True)
        for way in ("_round", "_round_small"):  # the second access takes neither
            monkeypatch.setattr(L2Cache, way, lambda *a: pytest.fail("a round after all lines are cached"))
    assert c.tags.tolist() == [[w[0] for w in s] for s in ref.ways]
    assert c.stamp.tolist() == [[w[1] for w in s] for s in ref.ways]
    assert c.dirty.tolist() == [[w[2] for w in s] for s in ref.ways]


def test_an_access_of_several_rounds_none_cached_with_room_is_one_fill(monkeypatch) -> None:
    """Lines of one access that share sets, none of them cached, each set with a free
    way for each of its lines: no round evicts, so they fill in one step, a set's
    lines its next ways in round order; a set without room sends the access through its
    rounds. Both the model's answers, ways, stamps and counters."""
    from pto.interp.l2 import tile_lines

    rounds = []
    for way in ("_round", "_round_small"):
        real = getattr(L2Cache, way)
        monkeypatch.setattr(L2Cache, way, lambda self, *a, real=real: rounds.append(1) or real(self, *a))
    c, ref = cache(4, 4), LineByLine(4, 4)
    first, pattern = tile_lines(0, (40, 512), (0, 0), (3, 512), 4, LINE)
    addrs = (pattern.rel + first).tolist()
    assert pattern.few is None and addrs == list(range(12))  # 3 rounds of the 4 sets
    for tensor, write in (("t", True), ("u", False)):  # (u: the same lines, then all cached)
        assert c.access_tile(first, pattern, tensor, write, True) == ref.access(addrs, tensor, write, True)
    assert not rounds and c.used.tolist() == [3] * 4 and c.free_ways == 4
    first, pattern = tile_lines(100 * LINE, (40, 512), (0, 0), (2, 512), 4, LINE)
    more = (pattern.rel + first).tolist()  # 2 lines a set: a round that fills the sets, one that evicts
    assert c.access_tile(first, pattern, "v", False, True) == ref.access(more, "v", False, True)
    assert rounds and c.written_back == ref.written_back > 0
    assert c.tags.tolist() == [[w[0] for w in s] for s in ref.ways]
    assert c.stamp.tolist() == [[w[1] for w in s] for s in ref.ways]
    assert c.dirty.tolist() == [[w[2] for w in s] for s in ref.ways]
    assert {n: [s.hits, s.misses, s.hbm_read, s.hbm_written] for n, s in c.stats.items()} == ref.stats


def test_a_miss_into_a_set_with_a_free_way_looks_at_no_stamps(monkeypatch) -> None:
    """Ways fill in order (a never-used way is the least recently used, the lowest
    first), so until a set is full its next miss takes way `used` without comparing
    stamps, in the vector and the line-by-line paths alike; once sets are full, the
    least recently used way goes as before: the model's ways, stamps and counters."""
    fills = []
    for way in ("_fill", "_fill_one"):
        real = getattr(L2Cache, way)
        monkeypatch.setattr(L2Cache, way, lambda self, *a, real=real, way=way: fills.append(way) or real(self, *a))
    c, ref = cache(16, 4), LineByLine(16, 4)
    stamps, c.stamp = c.stamp, None  # (the stamps' (sets, ways) view: the victim search's)
    accesses = [(list(range(0, 32, 3)), "a", True), ([5, 6, 7], "b", False), (list(range(1, 65, 2)), "b", True)]
    accesses += [(list(range(0, 64, 5)), "a", False), ([16, 17, 18, 19], "a", True)]
    for addrs, tensor, write in accesses:
        assert c.access(lines(*addrs), tensor, write, True, ascending=True) == ref.access(addrs, tensor, write, True)
    assert c.used.tolist() == [sum(w[0] >= 0 for w in s) for s in ref.ways]
    assert c.free_ways == 16 * 4 - sum(c.used) > 0
    assert set(fills) == {"_fill", "_fill_one"}
    c.stamp = stamps
    for addrs in (list(range(40, 120)), [3, 19, 35, 51, 67, 83], list(range(200, 208))):
        assert c.access(lines(*addrs), "b", True, True, ascending=True) == ref.access(addrs, "b", True, True)
    assert c.used.tolist() == [4] * 16 and c.free_ways == 0 and c.written_back == ref.written_back > 0
    assert c.tags.tolist() == [[w[0] for w in s] for s in ref.ways]
    assert c.stamp.tolist() == [[w[1] for w in s] for s in ref.ways]


@pytest.mark.parametrize("seed", range(3))
def test_repeated_tiles_and_pending_stamps_are_the_line_by_line_model(seed: int) -> None:
    """A few tiles accessed again and again (a tile loop's weight and row tiles), in a
    cache that first has room and then evicts: a repeat of a tile whose lines were all
    cached is answered without a lookup (`_present`), hits' stampings wait until a miss
    evicts (`_pending`), and the answers, ways, stamps and counters are the model's."""
    from pto.interp.l2 import tile_lines

    rng = np.random.default_rng(seed)
    c, ref = cache(16, 2), LineByLine(16, 2)
    tiles = [
        tile_lines(t * 100 * LINE, (40, 300), (r, 0), (4, 200 + 50 * t), 4, LINE) for t in range(3) for r in (0, 4)
    ]
    rounds, pended = 0, False
    real = L2Cache._round

    def counted(self, *a):
        nonlocal rounds
        rounds += 1
        return real(self, *a)

    L2Cache._round = counted  # type: ignore[method-assign]
    try:
        for step in range(300):
            first, pattern = tiles[int(rng.integers(2 if step < 150 else len(tiles)))]
            tensor, write = f"t{rng.integers(2)}", bool(rng.integers(4) == 0)
            got = c.access_tile(first, pattern, tensor, write, True)
            assert got == ref.access((pattern.rel + first).tolist(), tensor, write, True)
            pended |= bool(c._pending)
    finally:
        L2Cache._round = real  # type: ignore[method-assign]
    assert all(p.few is None and p.span < 16 for _, p in tiles)  # one round each, in numpy
    assert pended and rounds < 200 and c.written_back == ref.written_back > 0, (pended, rounds)
    assert c.tags.tolist() == [[w[0] for w in s] for s in ref.ways]
    assert c.stamp.tolist() == [[w[1] for w in s] for s in ref.ways]
    assert c.dirty.tolist() == [[w[2] for w in s] for s in ref.ways]
    assert {n: [s.hits, s.misses, s.hbm_read, s.hbm_written] for n, s in c.stats.items()} == ref.stats


def test_a_cached_tile_again_is_stamped_later_without_a_lookup(monkeypatch) -> None:
    """The second access of a tile the first one cached takes no round and writes no
    stamp, nor does the third, whose pending stamping replaces the second's (later on
    every slot); reading the stamps writes the pending ones: the model's."""
    from pto.interp.l2 import tile_lines

    c, ref = cache(16, 2), LineByLine(16, 2)
    first, pattern = tile_lines(0, (40, 300), (0, 0), (4, 300), 4, LINE)
    addrs = (pattern.rel + first).tolist()
    assert pattern.few is None and pattern.span < 16
    assert c.access_tile(first, pattern, "t", False, True) == ref.access(addrs, "t", False, True)
    raw = c._stamps.copy()
    monkeypatch.setattr(L2Cache, "_round", lambda *a: pytest.fail("a lookup of a tile known cached"))
    for _ in range(2):
        assert c.access_tile(first, pattern, "t", False, True) == ref.access(addrs, "t", False, True)
    assert (c._stamps == raw).all() and len(c._pending) == 1  # (the second repeat's replaced the first's)
    assert c.stamp.tolist() == [[w[1] for w in s] for s in ref.ways] and not c._pending


def test_the_cache_keeps_few_enough_attributes_for_cpythons_fast_lookups() -> None:
    """CPython 3.11 keeps an instance's attributes inline, with specialised loads, only
    up to 30 of them: at 31 every lookup of the cache's tables was slower (measured 7%
    on the accesses of an op-heavy run)."""
    assert len(vars(cache())) < 30
