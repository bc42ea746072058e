"""The shared L2: set-associative, LRU, write-back with write-allocate, lines of the
target's `l2.line_bytes`.

One DMA presents the lines it touches as a numpy array; the cache handles them in
rounds of at most one line per set (numpy over the round), so the cost is a handful of
vector operations per DMA, not a Python loop per line. Lines of one DMA that map to
the same set are handled in address order, one round each.

Where a line is, if anywhere, is kept per line address (`slot`, grown as addresses
appear): a lookup is one gather, not a compare against every way of the line's set.

`cacheable=False` (NONE_CACHEABLE) looks lines up but never allocates: a read miss
goes to HBM, a write miss is written through to HBM. Counters are kept per tensor.
A tensor only ever accessed that way has no line in the cache to find, so the
machine counts its accesses as misses without looking (`never_cached`, `miss_all`):
a none-cacheable weight stream is most of a kernel's lines.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pto.interp.l2_lines import SMALL as SMALL
from pto.interp.l2_lines import Pattern as Pattern
from pto.interp.l2_lines import lines_from as lines_from
from pto.interp.l2_lines import nz_lines_from as nz_lines_from
from pto.interp.l2_lines import region_lines as region_lines
from pto.interp.l2_lines import strides as strides
from pto.interp.l2_lines import tile_lines as tile_lines

# Phases of one tile pattern whose rounds are kept (`L2Cache._rounds_of`): a loop over
# tiles repeats a few; a bound, so that a pattern met at every phase does not grow.
ROUNDS_KEPT = 256
# Pending stampings of hits (`L2Cache._pending`) written in one step once this many (a
# bound on memory, and on the step's arrays).
PENDING = 64
# Tiles known cached (`L2Cache._present`) kept at most: the ones a loop repeats come back
# at once after it is emptied (a slot array each: a bound on memory at many tokens).
PRESENT_KEPT = 512


@dataclass
class TensorStats:
    hits: int = 0
    misses: int = 0
    hbm_read: int = 0
    hbm_written: int = 0
    # DMA bursts: contiguous byte runs of the tensor's GM copies (counted, not priced:
    # the model charges whole lines; an NZ tile is one run per column block).
    bursts: int = 0

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
        self._stamps = np.zeros((self.sets, ways), np.int64)  # 0 = never used: the first victim
        self.dirty = np.zeros((self.sets, ways), bool)
        self.owner = np.full((self.sets, ways), -1, np.int64)
        # The same, one entry per way ("slot": set * ways + way), as views.
        self._tags, self._stamp, self._dirty, self._owner = (
            a.reshape(-1) for a in (self.tags, self._stamps, self.dirty, self.owner)
        )
        # Stampings of hits not yet written (`_settle`): (slots, first stamp) each. Only
        # the victim search reads the stamps, and a stamp written is the LRU clock, later
        # than any before it, so a way's stamp is the largest written to it, in whatever
        # order they are written: a hit's stamping waits until a miss evicts (in a kernel
        # whose lines fit the cache, never), and many are written in one step. Kept by the
        # identity of the slots array: a tile known cached (`_present`) is stamped with the
        # same array at each repeat, each time later on every slot, so a repeat replaces
        # the entry (16 tasks of a body read one row tile: one entry, not 16).
        self._pending: dict[int, tuple[np.ndarray, int]] = {}
        # No line evicted yet: until then hits' stampings wait, and `_present` is kept
        # (from then on, misses evict often: the stamps are read, `_present` emptied).
        self._fresh = True
        # Accesses of a tile whose lines were all cached when it was last made, by (first
        # line, id of its `Pattern`): (pattern, the slots of its lines, in the access's
        # order). Lines leave the cache only when evicted, which empties it: until then a
        # repeat of the access hits every line, at those slots, with no lookup.
        self._present: dict[tuple[int, int], tuple[Pattern, np.ndarray]] = {}
        # `slot[line]`: the slot holding `line`, or -1. Its last entry stands for the tag
        # -1 of an empty way, so that clearing the entries of a round's victims needs no
        # test for empty ones; no line address reaches it (`_cover`).
        # (intp, not the int32 that slots fit: a slot array indexes the way arrays, and
        # numpy converts any other index type first, which made a round's stamping 4x slower)
        self.slot = np.full(1, -1, np.intp)
        # `used[set]`: how many of the set's ways have ever held a line. A never-used way
        # (stamp 0) is the least recently used, the lowest first, so a set's ways fill in
        # order and ways 0 .. used - 1 are the used ones: while a set has a free way, a
        # miss takes way `used` and evicts nothing, with no look at the stamps.
        self.used = np.zeros(self.sets, np.int64)
        self.free_ways = self.sets * ways  # never-used ways left: at 0, `used` is all `ways`
        # The same arrays as memoryviews, for the line-by-line paths: an item of one is a
        # Python int, read or written at several times the speed of a numpy scalar.
        self._slot_mv = self.slot.data
        self._stamp_mv, self._dirty_mv = self._stamp.data, self._dirty.data
        self._tags_mv, self._owner_mv = self._tags.data, self._owner.data
        self._used_mv = self.used.data
        self.clock = 0
        self.written_back = 0  # dirty lines evicted by misses, all tensors: HBM writes
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self.stats: dict[str, TensorStats] = {}
        self.cached: set[int] = set()  # ids of tensors a cacheable access was made for

    @property
    def stamp(self) -> np.ndarray:
        """Each way's LRU stamp, (sets, ways): 0 for a never-used way, else when it was
        last touched (the clock then)."""
        self._settle()
        return self._stamps

    @stamp.setter
    def stamp(self, value: np.ndarray) -> None:
        self._stamps = value

    def _settle(self) -> None:
        """Write the pending stampings (`_pending`): each way's largest."""
        if not self._pending:
            return
        pending = list(self._pending.values())
        if len(pending) == 1:
            where, base = pending[0]
            np.maximum.at(self._stamp, where, np.arange(base, base + where.size))
        else:
            where = np.concatenate([w for w, _ in pending])
            sizes = [w.size for w, _ in pending]
            starts = np.cumsum(sizes) - sizes
            bases = np.array([b for _, b in pending], np.int64) - starts
            np.maximum.at(self._stamp, where, np.arange(where.size) + np.repeat(bases, sizes))
        self._pending.clear()

    def _stamped(self, where: np.ndarray, n: int, write: bool) -> None:
        """The hits at slots `where` (n of them), stamped in order from the clock on:
        later, until a miss first evicts (from then on misses evict, and read the stamps,
        often), now after that."""
        if self._fresh:
            self._pending[id(where)] = (where, self.clock + 1)  # (held: its id stays its own)
            if len(self._pending) >= PENDING:
                self._settle()
        else:
            self._stamp[where] = np.arange(self.clock + 1, self.clock + 1 + n)
        self.clock += n
        if write:
            self._dirty[where] = True

    def _keep(self, tile: tuple, where: np.ndarray) -> None:
        """A tile access of `tile` = (key, pattern) left all its lines cached, at `where`."""
        if len(self._present) >= PRESENT_KEPT:
            self._present.clear()
        self._present[tile[0]] = (tile[1], where)

    def _evicting(self) -> None:
        """A miss is about to evict: stamps are read, lines leave."""
        self._settle()
        self._fresh = False
        if self._present:
            self._present.clear()

    def tensor_id(self, name: str) -> int:
        if name not in self.stats:
            self.ids[name] = len(self.names)
            self.names.append(name)
            self.stats[name] = TensorStats()
        return self.ids[name]

    def _open(self, tensor: str, cacheable: bool) -> tuple[int, TensorStats]:
        """An access on behalf of `tensor` begins: its id and counters."""
        tid = self.tensor_id(tensor)
        if cacheable:
            self.cached.add(tid)
        return tid, self.stats[tensor]

    def access(
        self, lines: np.ndarray, tensor: str, write: bool, cacheable: bool = True, ascending: bool = False
    ) -> tuple[int, int]:
        """Touch `lines` (line addresses, unique; `ascending` if the caller knows they are
        sorted) on behalf of `tensor`; return (hits, misses)."""
        if ascending and lines.size <= SMALL and (lines.size < 2 or lines[-1] - lines[0] < self.sets):
            return self.access_few(lines.tolist(), tensor, write, cacheable)
        self._cover(int(lines[-1] if ascending else lines.max()) if lines.size else 0)
        if lines.size < 2 or lines[-1] - lines[0] < self.sets and (ascending or (np.diff(lines) > 0).all()):
            bounds = [0, lines.size]  # ascending within one sweep of the sets: no conflicts
        else:
            lines, _, bounds = _rounds(lines, lines % self.sets)
        return self._access_rounds(lines, bounds, tensor, write, cacheable, ascending)

    def _access_rounds(
        self, lines: np.ndarray, bounds: list[int], tensor: str, write: bool, cacheable: bool, ascending: bool
    ) -> tuple[int, int]:
        """`access` of lines in rounds (`_rounds`), `bounds` where each starts."""
        tid, st = self._open(tensor, cacheable)
        if len(bounds) > 2 and lines.size:
            where = self.slot[lines]
            if where.min() >= 0:
                # every line is in the cache: no round fills a way (nor evicts a later
                # round's line), so the rounds are one round stamped in their order
                self._stamped(where, lines.size, write)
                st.hits += lines.size
                return lines.size, 0
            # (the reference, not `ascending`, keeps the rounds)
            if ascending and cacheable and where.max() < 0 and self._fill_apart(lines, bounds, write, tid):
                st.misses += lines.size
                if not write:
                    st.hbm_read += lines.size * self.line
                return 0, lines.size
        hits = misses = 0
        # A round of a few lines (many lines sharing few sets) runs line by line, as a
        # small access does; the reference (not `ascending`) keeps the vector round.
        listed = lines.tolist() if ascending and len(bounds) > 2 else None
        for a, b in itertools.pairwise(bounds):
            if listed is not None and b - a <= SMALL:
                nh, nm = self._round_small(listed[a:b], write, cacheable, tid, st)
            else:
                nh, nm = self._round(lines[a:b], write, cacheable, tid, st)
            hits += nh
            misses += nm
        st.hits += hits
        st.misses += misses
        return hits, misses

    def _fill_apart(self, lines: np.ndarray, bounds: list[int], write: bool, tid: int) -> bool:
        """Fill `lines`, none of them cached, in rounds (`bounds`), in one step, if no
        line evicts: as the rounds would, each line takes its set's first free way, the
        next line of the set (a later round) the next way, each stamped in the lines'
        order. With no eviction one round's fills touch no later round's line, so only
        the ways differ between rounds. False, with nothing done, if a set lacks room
        (the int8 example's workspace tiles: 4 rounds of 64 lines, one step)."""
        if not self.free_ways:  # (then `used` is all `ways`: every miss evicts)
            return False
        sets = lines % self.sets
        way = self.used[sets] + np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))  # + the round
        if way.max() >= self.ways:
            return False
        victim = sets * self.ways + way
        np.maximum.at(self.used, sets, way + 1)  # (a set's last round's line: its count after)
        self.free_ways -= lines.size
        self.slot[lines] = victim
        self._tags[victim] = lines
        self._stamp[victim] = np.arange(self.clock + 1, self.clock + 1 + lines.size)
        self.clock += lines.size
        self._dirty[victim] = write
        self._owner[victim] = tid
        return True

    def access_tile(self, first: int, pattern: Pattern, tensor: str, write: bool, cacheable: bool) -> tuple[int, int]:
        """`access` of a tile's lines, `pattern` from line `first` (`tile_lines`)."""
        if pattern.few is not None and pattern.span < self.sets:
            return self.access_few(pattern.few, tensor, write, cacheable, first)
        key = (first, id(pattern)) if self._fresh else None
        if key is not None and (got := self._present.get(key)) is not None and got[0] is pattern:
            n = got[1].size  # all cached, at these slots
            self._stamped(got[1], n, write)
            self._open(tensor, cacheable)[1].hits += n
            return n, 0
        self._cover(first + pattern.span)
        if pattern.span >= self.sets:  # over more than one sweep of the sets: rounds
            order, bounds = self._rounds_of(pattern, first % self.sets)
            lines = pattern.rel[order] + first
            if lines.size and (where := self.slot[lines]).min() >= 0:  # (`_access_rounds`' test)
                self._stamped(where, lines.size, write)
                self._open(tensor, cacheable)[1].hits += lines.size
                if key is not None:
                    self._keep((key, pattern), where)
                return lines.size, 0
            return self._access_rounds(lines, bounds, tensor, write, cacheable, True)
        # ascending within one sweep of the sets: one round, as `access` would find
        tid, st = self._open(tensor, cacheable)
        hits, misses = self._round(pattern.rel + first, write, cacheable, tid, st, key and (key, pattern))
        st.hits += hits
        st.misses += misses
        return hits, misses

    def _rounds_of(self, pattern: Pattern, phase: int) -> tuple[np.ndarray, list[int]]:
        """`_rounds` of the pattern's lines from a first line of set `phase`: which lines
        share a set depends on nothing else, so it is sorted out once per phase (a tile
        loop's copies repeat a few phases) and kept on the pattern."""
        key = (self.sets, phase)
        got = pattern.rounds.get(key)
        if got is None:
            rel = pattern.rel
            order, _, bounds = _rounds(np.arange(rel.size), (rel + phase) % self.sets)
            got = (order, bounds)
            if len(pattern.rounds) < ROUNDS_KEPT:
                pattern.rounds[key] = got
        return got

    def access_few(
        self, lines: Sequence[int], tensor: str, write: bool, cacheable: bool, base: int = 0
    ) -> tuple[int, int]:
        """`access` of at most `SMALL` ascending lines of distinct sets, `base` added to
        each (a tile pattern's few lines, from its first), a Python loop."""
        if tensor not in self.stats:
            self.tensor_id(tensor)
        return self.access_lines(base, lines, 0, tensor, write, cacheable)[:2]

    def access_lines(
        self, first: int, lines: Sequence[int], runs: int, tensor: str, write: bool, cacheable: bool
    ) -> tuple[int, int, int]:
        """`Machine.gm_access` of a tile of at most `SMALL` lines of distinct sets, `lines`
        from line `first` (a pattern's `few`), in one call: its `runs` bursts counted,
        then `access_few`'s loop; returns (hits, misses, dirty lines its misses
        evicted). (The calls `access_tile`, `access_few`, `_open` and `_round_small` make
        were a fifth of an op-heavy run's L2 time.) `tensor` has its counters."""
        st = self.stats[tensor]
        st.bursts += runs
        if cacheable:
            self.cached.add(self.ids[tensor])
        if not lines:
            return 0, 0, 0
        if (top := first + lines[-1]) >= self.slot.size - 1:
            self._cover(top)
        slot, stamp, dirty = self._slot_mv, self._stamp_mv, self._dirty_mv
        nh, missed, clock = 0, None, self.clock
        for line in lines:  # (`_round_small`'s loop)
            clock += 1
            w = slot[line + first]
            if w >= 0:
                stamp[w] = clock
                if write:
                    dirty[w] = True
                nh += 1
            elif missed is None:
                missed = [(line + first, clock)]
            else:
                missed.append((line + first, clock))
        self.clock = clock
        if missed is None:
            st.hits += nh
            return nh, 0, 0
        before = self.written_back
        self._missed(missed, write, cacheable, self.ids[tensor], st)
        st.hits += nh
        st.misses += len(missed)
        return nh, len(missed), self.written_back - before

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

    def _cover(self, line: int) -> None:
        """Make `slot` long enough for addresses up to `line` (doubling, so that growing
        costs a constant per address)."""
        if line >= self.slot.size - 1:
            grown = np.full(max(2 * self.slot.size, line + 2), -1, np.intp)
            grown[: self.slot.size - 1] = self.slot[:-1]
            self.slot, self._slot_mv = grown, grown.data

    def _round(
        self, batch: np.ndarray, write: bool, cacheable: bool, tid: int, st: TensorStats, tile: tuple | None = None
    ) -> tuple[int, int]:
        """Lines `batch` of distinct sets, stamped in order: (hits, misses). The
        common rounds, all hits or all misses, skip the selections of the mixed one.
        `tile`: (key, pattern) of `access_tile`'s one-round access, kept in `_present`
        if its lines are all cached after it."""
        n = batch.size
        where = self.slot[batch]
        missed = where < 0
        nm = int(np.count_nonzero(missed))
        if not nm:
            self._stamped(where, n, write)
            if tile is not None:
                self._keep(tile, where)
            return n, 0
        base = self.clock + 1
        self.clock += n
        stamps = np.arange(base, base + n)
        if nm < n:
            hit = ~missed
            self._touch(where[hit], stamps[hit], write)
            batch, stamps = batch[missed], stamps[missed]
        if not cacheable:
            if write:
                st.hbm_written += nm * self.line
            else:
                st.hbm_read += nm * self.line
            return n - nm, nm
        victim = self._fill(batch, stamps, write, tid)
        if tile is not None:  # (a round's lines are of distinct sets: its fills evict none of them)
            if nm < n:
                where[missed] = victim
            else:
                where = victim
            self._keep(tile, where)
        if not write:  # a write miss allocates without reading: the DMA writes whole lines
            st.hbm_read += nm * self.line
        return n - nm, nm

    def _round_small(
        self, lines: Sequence[int], write: bool, cacheable: bool, tid: int, st: TensorStats, base: int = 0
    ) -> tuple[int, int]:
        """`_round` line by line, for a few lines of distinct sets (`base` added to each)."""
        slot, stamp, dirty = self._slot_mv, self._stamp_mv, self._dirty_mv
        nh, missed, clock = 0, [], self.clock
        for line in lines:
            line += base
            clock += 1
            w = slot[line]
            if w >= 0:
                stamp[w] = clock
                if write:
                    dirty[w] = True
                nh += 1
            else:
                missed.append((line, clock))
        self.clock = clock
        if missed:
            self._missed(missed, write, cacheable, tid, st)
        return nh, len(missed)

    def _missed(self, missed: list, write: bool, cacheable: bool, tid: int, st: TensorStats) -> None:
        """The misses of a line-by-line round, (line, stamp) each: filled in order."""
        nm = len(missed)
        if not cacheable:
            if write:
                st.hbm_written += nm * self.line
            else:
                st.hbm_read += nm * self.line
            return
        for line, when in missed:
            self._fill_one(line, when, write, tid)
        if not write:
            st.hbm_read += nm * self.line

    def _fill_one(self, line: int, when: int, write: bool, tid: int) -> None:
        """`_fill` of one line."""
        s = line % self.sets
        slot, tags, owner = self._slot_mv, self._tags_mv, self._owner_mv
        if self.free_ways and (u := self._used_mv[s]) < self.ways:  # a free way: no eviction
            w = s * self.ways + u
            self._used_mv[s] = u + 1
            self.free_ways -= 1
        else:
            self._evicting()
            # (the first least stamp, as `argmin`, over the set's ways as Python ints: a
            # numpy call per line was several times this)
            w = s * self.ways
            ways = self._stamp_mv[w : w + self.ways].tolist()
            w += ways.index(min(ways))
            old = tags[w]
            if self._dirty_mv[w]:
                self.written_back += 1
                self.stats[self.names[owner[w]]].hbm_written += self.line
            slot[old] = -1
        slot[line] = w
        tags[w] = line
        self._stamp_mv[w] = when
        self._dirty_mv[w] = write
        owner[w] = tid

    def _touch(self, where: np.ndarray, stamps: np.ndarray, write: bool) -> None:
        self._stamp[where] = stamps
        if write:
            self._dirty[where] = True

    def _fill(self, batch: np.ndarray, stamps: np.ndarray, write: bool, tid: int) -> np.ndarray:
        """Missed lines replace the least recently used way of their sets: returns the
        slots they went to."""
        s = batch % self.sets
        used = self.used[s] if self.free_ways else None
        if used is not None and used.max() < self.ways:  # each set has a free way: no eviction
            victim = s * self.ways + used
            self.used[s] = used + 1
            self.free_ways -= batch.size
        else:
            self._evicting()
            # (`take` gathers the sets' rows in half the time of `stamps[s]`; the method, not
            # `np.take`, whose Python wrapper cost more than the gather of a round's sets)
            victim = s * self.ways + self._stamps.take(s, axis=0).argmin(axis=1)
            old = self._tags[victim]
            evict = self._dirty[victim]  # (a never-used way is clean)
            if n := int(np.count_nonzero(evict)):
                self.written_back += n
                self._written_back_by(self._owner[victim[evict]])
            if used is not None:  # (a full cache keeps no count)
                free = old < 0
                self.used[s] = used + free
                self.free_ways -= int(np.count_nonzero(free))
            self.slot[old] = -1  # a free way's -1 clears the spare last entry
        self.slot[batch] = victim
        self._tags[victim] = batch
        self._stamp[victim] = stamps
        self._dirty[victim] = write
        self._owner[victim] = tid
        return victim

    def _written_back_by(self, owners: np.ndarray) -> None:
        """Count dirty lines written back to HBM, given the tensor id of each."""
        lines = np.bincount(owners)  # (a sort, as np.unique does, was most of a full cache's fills)
        for owner in lines.nonzero()[0].tolist():
            self.stats[self.names[owner]].hbm_written += int(lines[owner]) * self.line

    def flush(self) -> None:
        """Write every dirty line back (the end of the kernel: outputs reach HBM)."""
        self._written_back_by(self.owner[self.dirty & (self.tags >= 0)])
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
