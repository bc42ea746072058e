"""Numbers by task group: the numerics of a graph's tasks computed one group at a time,
all of its tasks at once, after the timing model has scheduled every task.

The tasks of a group run one program on different rows. Its stacked program
(`pto.interp.codegen_stacked`) runs once per group: an index value that depends on the
body is an array of shape (bodies, 1), on the task one of (1, tasks), on both
(bodies, tasks), else a Python int; a buffer's contents are an array of shape
(b, p, *its shape), b and p each 1 or the group's count, so that a tile every task
loads alike (a weight tile of one column block) is loaded and transposed once, and one
numpy call does an op for every task. The math is the per-task engine's, element for
element: elementwise ops and last-axis reductions see the same operands, and a stacked
matmul is numpy's batched product, one BLAS call per task's tile with the tile's own
shape (`test_engine_stacked.py` compares with the interp engine bit for bit).

Whether this is the interleaved run's result is checked, not assumed, as it runs:
- control flow (a branch, a loop's trip count), an on-chip offset or an on-chip copy's
  valid rows that differ between tasks, a read of on-chip bytes the task has not
  written (the per-task engine would see what the core's last task left), are refused;
  a loop whose start differs (a column block chosen by the task) runs its trips alike,
  its induction value an index array (`loop`);
- GM (`Tracker`, kept as spans of memory: `pto.interp.stacked_gm`): an element of a
  tensor the kernel writes may be touched by the tasks of one body only, by groups that
  depend on each other (the task graph then orders them in every schedule, and this
  pass runs groups in that order), written by one task of a group, and not read and
  written by one group. Inputs are never written.
A refusal raises `Unstackable` and the run starts again on the per-task path
(`pto.interp.run`), which is always exact; a program that cannot be stacked at all is
known when compiling (`NotStackable`), and its graph runs per task from the start; a
program refused once is not stacked again (`compiled.Programs.refuse`). A graph that can
be stacked runs stacked once, per task once, then the way measured cheaper
(`compiled._way`): both give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pto.interp import npu_ops as ops
from pto.interp import stacked_mm
from pto.interp.machine import GmTensor
from pto.interp.stacked_gm import AXES, Tracker, clip, least, most
from pto.interp.stacked_gm import NotStackable as NotStackable
from pto.interp.stacked_gm import Unstackable as Unstackable


def u(x):
    """A value every task has alike (a loop bound, a branch, an on-chip offset): an
    array of one value is that value; else the program cannot be stacked."""
    if isinstance(x, np.ndarray):
        flat = x.reshape(-1)
        if flat.size == 0 or not (flat == flat[0]).all():
            raise Unstackable("a value that decides control flow or an on-chip place differs between tasks")
        x = flat[0]
    return x.item() if isinstance(x, np.generic) else x


def loop(lb, ub, step):
    """The induction values of an `scf.for`: a `range` when every task loops alike, else
    one array per trip when the tasks' loops start at different places but make the same
    number of trips (hc_pre's column loop starts at a column block chosen by the task);
    else the program cannot be stacked."""
    step = u(step)
    if not step > 0:  # (the timing run has raised the per-task engine's error already)
        raise Unstackable("a loop step that is not positive")
    if not isinstance(lb, np.ndarray) and not isinstance(ub, np.ndarray):
        return range(lb, ub, step)
    trips = u(np.maximum(0, -((lb - ub) // step)))
    if not isinstance(lb, np.ndarray):
        return range(lb, lb + trips * step, step)
    return (nz(lb + i * step) for i in range(trips))


def nz(x):
    """An index value narrowed to the axes it varies along: the rows of a task's tile
    that depend on `task % 1` are the body's alike (and so are loaded once per body), a
    column block `task // q` is alike along the task's low axis (`Stack`)."""
    if not isinstance(x, np.ndarray):
        return x
    for ax in range(AXES - 1, -1, -1):
        if x.shape[ax] > 1:
            first = x[(slice(None),) * ax + (slice(0, 1),)]
            if (x == first).all():
                x = first
    return x.item() if x.size == 1 else x


def mn(a, b):
    return min(a, b) if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray) else np.minimum(a, b)


def mx(a, b):
    return max(a, b) if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray) else np.maximum(a, b)


# Every stack axis, as an index's leading part.
ALL = (slice(None),) * AXES


def lead(x) -> tuple[int, ...]:
    """The stack shape (b, p1, p2) of an index value or a stacked array."""
    if isinstance(x, np.ndarray):
        return x.shape[:AXES]
    return (1,) * AXES


def both(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    if len(shapes) == 2:
        (a, b, c), (d, e, f) = shapes
        return (a if a > d else d, b if b > e else e, c if c > f else f)
    return tuple(max(s[i] for s in shapes) for i in range(AXES))


def upto(stop: int) -> tuple:
    """The index of a stacked array's tiles' rows up to `stop`."""
    return (*ALL, slice(0, stop))


_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def raw(a: np.ndarray) -> np.ndarray:
    """The array's bits (copies and zero fills move bits, as `npu_ops.move` does)."""
    return a.view(_RAW[a.itemsize])


@dataclass(eq=False)
class Slot:
    """An on-chip buffer of every task of a group: `arr` (b, p1, p2, *shape), None until
    written; `written` marks the elements the task has written so far (alike for all
    tasks: on-chip offsets are). `zero_from`: every row of `arr` from this one on is
    zeros in every task (a token tail's tile: one valid row of 16 at unroll [1]), so
    that a copy of the tile, a zero fill and a product skip them (`write_rows`).
    `borrowed`: `arr` is an array the slot may not write in place, copied before it is:
    a GM load's tiles as they are (a view of the tensor, which no task of the group
    writes: `Tracker`), a transposed view of a copy, or another slot's borrowed tiles
    (`Stack.dma`)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    arr: np.ndarray | None = None
    written: np.ndarray = field(init=False)
    full: bool = False
    zero_from: int = 0  # (an array is allocated as zeros)
    borrowed: bool = False
    # The slots of other buffers at overlapping bytes (a buffer reused for another type
    # once its value is dead: the int8 example's UB): a write of this one makes them
    # forget what they were written (their bytes are this one's now, which the per-task
    # engine would read through them: such a read is refused, `read`).
    overlaps: list[Slot] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.written = np.zeros(self.shape, bool)

    def read(self, window: tuple) -> np.ndarray:
        if not self.full and not self.written[window].all():
            raise Unstackable("a task reads on-chip bytes it has not written")
        assert self.arr is not None
        return self.arr[(*ALL, *window)]

    def write(
        self, window: tuple, data: np.ndarray, stack: tuple[int, ...], own: bool = False, borrow: bool = False
    ) -> None:
        """`data` (b', p', *window's shape) into the window; the slot grows to the
        tasks' stack shape when they write it differently. `own`: `data` is a new array
        nothing else holds, which a write of the whole slot takes instead of a copy (a
        product's tiles: 8 MB a call for sk03_standard at unroll [1], t=128); `borrow`:
        an array it takes as it is but may not write in place (`borrowed`)."""
        self.clobber()
        grown = both(stack, lead(data))
        if (own or borrow) and not window and self._takes(data, grown, contiguous=own):
            self.arr, self.borrowed = data, not own
            self.written[...] = self.full = True
            self.zero_from = self.shape[0]
            return
        if self.arr is None:
            self.arr = np.zeros((*grown, *self.shape), self.dtype)
        elif both(self.arr.shape[:AXES], grown) != self.arr.shape[:AXES]:
            grown = both(self.arr.shape[:AXES], grown)
            self.arr = np.broadcast_to(self.arr, (*grown, *self.shape)).copy()
        else:
            self.own()
        self.borrowed = False
        target = self.arr[(*ALL, *window)]
        if data.dtype == self.dtype:
            raw(target)[...] = raw(data)
        else:
            target[...] = data
        end = window[0].stop if window and window[0].stop is not None else self.shape[0]
        if end > self.zero_from:
            self.zero_from = end
        if not self.full:
            self.written[window] = True
            self.full = bool(self.written.all())

    def write_rows(
        self, at: list[int], data: np.ndarray, ext: tuple[int, ...], own: bool = False, borrow: bool = False
    ) -> None:
        """A tile of `ext` at `at` whose rows past `data`'s (b', p1', p2', v, ...) are zeros,
        as a copy with valid rows writes it. A tile of whole rows that ends at the slot's
        last row leaves its zero rows known (`zero_from`): those already known are not
        written again. `own`, `borrow`: as `write`'s."""
        v, r0 = data.shape[AXES], at[0]
        whole = all(o == 0 and e == n for o, e, n in zip(at[1:], ext[1:], self.shape[1:], strict=True))
        if v == ext[0] and whole and r0 == 0 and v == self.shape[0] and (own or borrow):
            return self.write((), data, lead(data), own=own, borrow=borrow)
        if v == ext[0] or not (whole and r0 + ext[0] == self.shape[0]):
            return self.write(window(at, ext), Stack._padded(data, ext), lead(data))
        known = self.zero_from if self.arr is not None else r0 + v
        if v:
            self.write(window(at, (v, *ext[1:])), data, lead(data))
        elif self.arr is None:
            self.arr = np.zeros((*lead(data), *self.shape), self.dtype)
        self.clobber()
        assert self.arr is not None
        if known > r0 + v:
            self.own()
            raw(self.arr)[(*ALL, slice(r0 + v, known))] = 0
        self.zero_from = r0 + v
        if not self.full:
            self.written[window(at, ext)] = True
            self.full = bool(self.written.all())

    def live(self, win: tuple) -> int:
        """How many of the window's rows may be nonzero (rows from `zero_from` on are
        not)."""
        rows = win[0] if win else slice(None)
        r0, r1 = rows.start or 0, self.shape[0] if rows.stop is None else rows.stop
        return max(0, min(r1, self.zero_from) - r0)

    def clobber(self) -> None:
        """This slot is written: the slots overlapping it forget what they hold."""
        for o in self.overlaps:
            if o.full or o.written.any():
                o.written[...] = o.full = False

    def own(self) -> None:
        """Copy a borrowed array before it is written in place."""
        if self.borrowed:
            assert self.arr is not None
            self.arr, self.borrowed = self.arr.copy(), False

    def _takes(self, data: np.ndarray, stack: tuple[int, ...], contiguous: bool = True) -> bool:
        """Whether `data` may become the slot's array: its stack shape is the slot's
        after the write, its type (and with `contiguous` its layout) a slot's array's."""
        grown = stack if self.arr is None else both(self.arr.shape[:AXES], stack)
        return (
            data.shape == (*grown, *self.shape)
            and data.dtype == self.dtype
            and (data.flags.c_contiguous or not contiguous)
        )


# A store whose tiles are not one strided view is a slice per task up to this many tasks
# (a scatter through index arrays over every element was most of hc_pre's stacked pass).
SCATTER_TILES = 4096


def window(offs, ext) -> tuple:
    return tuple(slice(o, o + e) for o, e in zip(offs, ext, strict=True))


def _aligned(a: np.ndarray, nd: int) -> np.ndarray:
    """A stacked operand with its buffer axes right-aligned to `nd` (numpy's broadcasting
    of the per-task operands, which have no stack axes)."""
    extra = nd - (a.ndim - AXES)
    return a.reshape(a.shape[:AXES] + (1,) * extra + a.shape[AXES:]) if extra > 0 else a


def _fresh(value: np.ndarray, args: list[np.ndarray]) -> bool:
    """Whether a vector op's result is a new array nothing else holds: it, or a view of
    all of one (`nx.f32`'s widened bits seen as f32), that shares no memory with the op's
    operands (the computes of `npu_ops.vector_kernel` hold no arrays of their own)."""
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (
        root.flags.owndata
        and root.nbytes == value.nbytes
        and value.flags.c_contiguous
        and not any(np.may_share_memory(value, a) for a in args)
    )


class Stack:
    """One group's stacked pass: its index arrays, its slots, its GM accesses.

    Its stack axes are (body, task // split, task % split): a program that picks a row
    block by `task % q` and a column block by `task // q` (mla_wqa_qrmsnorm: 2 row blocks
    of 16 column blocks) has tiles alike along one of the task axes each, loaded,
    copied and multiplied once per distinct tile, not once per task; `split` 1 leaves
    the last axis of one."""

    def __init__(self, tracker: Tracker, rank: int, bodies: int, per_body: int, loop: int = 0, split: int = 1):
        self.tracker, self.rank = tracker, rank
        self.B, self.P = bodies, per_body
        low = split if splits(split, per_body) else 1
        self.S = (bodies, per_body // low, low)
        self.body = np.arange(bodies, dtype=np.int64).reshape(bodies, 1, 1)
        # which tasks of other groups it depends on: those of its loop body (`TaskGraph`)
        self.owner = (loop << 20) + self.body
        self.task = np.arange(per_body, dtype=np.int64).reshape(1, *self.S[1:])
        self.slots: dict[tuple, Slot] = {}
        self.spans: dict[tuple, tuple[int, int]] = {}  # each slot's bytes in its space

    def args(self) -> tuple:
        """The block arguments (body, task): an array each, or 0 when there is one."""
        return (self.body if self.B > 1 else 0), (self.task if self.P > 1 else 0)

    def alloc(self, s: ops.AllocSpec) -> Slot:
        key = (s.space, s.offset, s.dtype, s.shape)
        slot = self.slots.get(key)
        if slot is None:
            slot = self.slots[key] = Slot(s.shape, s.dtype)
            self.spans[key] = (s.offset, s.offset + s.nbytes)
            for k, o in self.slots.items():
                (start, end), other = self.spans[k], (s.offset, s.offset + s.nbytes)
                if o is not slot and k[0] == s.space and start < other[1] and other[0] < end:
                    o.overlaps.append(slot)
                    slot.overlaps.append(o)
        return slot

    # -- copies ------------------------------------------------------------------------

    def dma(self, spec: ops.CopySpec, src, dst, so, do, rows) -> None:
        ext, transpose = spec.ext, spec.transpose
        if isinstance(src, GmTensor) and isinstance(dst, GmTensor):
            raise Unstackable("a GM to GM copy")
        if transpose and isinstance(src, GmTensor):  # (its valid rows are the GM tile's columns)
            valid = ext[0] if rows is None else max(0, min(u(rows), ext[0]))
            data = self.load(src, so, tuple(reversed((valid, *ext[1:]))), None)
            data = data.transpose(*range(AXES), *reversed(range(AXES, data.ndim)))
            return dst.write_rows(list(map(u, do)), data, ext, borrow=True)
        if isinstance(src, GmTensor):
            data = self.load(src, so, ext, rows)  # (its valid rows)
            return dst.write_rows(list(map(u, do)), data, ext, own=data.flags.owndata, borrow=True)
        if isinstance(dst, GmTensor):
            valid = ext[0] if rows is None else clip(rows, ext[0])
            data = src.read(window(list(map(u, so)), (int(most(valid)), *ext[1:])))
            return self.store(dst, do, ext, rows, self._padded(data, ext))
        valid = ext[0] if rows is None else max(0, min(u(rows), ext[0]))
        vext = (valid, *ext[1:])
        sext = tuple(reversed(vext)) if transpose else vext
        win = window(list(map(u, so)), sext)
        data = src.read(win)
        do = list(map(u, do))
        if not transpose:  # the rows past the valid ones are zeroed (and so are the source's zero rows)
            live = src.live(win)
            if src.borrowed and valid == ext[0] and not any(do) and tuple(ext) == dst.shape:
                # whole tiles of a GM load (which `src` copies before writing it in place) are
                # borrowed as they are: mla_wqa_qrmsnorm's L1 -> L0B weight copies at unroll [1]
                dst.write((), data, lead(data), borrow=True)
                dst.zero_from = live  # (taken or copied, the rows past them are zeros)
                return None
            return dst.write_rows(do, data[upto(live)], ext)
        # A transposed tile is a transposed view of a compact copy, laid out by the product's
        # own pass (`stacked_mm.product`): its transposing copy was a tenth of int8's pass.
        data = np.swapaxes(data.copy(), -1, -2)
        if valid < ext[0]:
            data = self._padded(data, ext)
        dst.write_rows(do, data, ext, borrow=True)

    @staticmethod
    def _padded(data: np.ndarray, ext) -> np.ndarray:
        if data.shape[AXES] == ext[0]:
            return data
        out = np.zeros((*data.shape[:AXES], *ext), data.dtype)
        raw(out)[upto(data.shape[AXES])] = raw(data)
        return out

    def fixpipe(self, op, spec: ops.CopySpec, src: Slot, dst, so, do, rows) -> None:
        if op.atomic_add is not None:
            raise Unstackable("an atomic add")
        ext = spec.ext
        valid = ext[0] if rows is None else clip(rows, ext[0])
        acc = src.read(window(list(map(u, so)), (int(most(valid)), *ext[1:])))
        out = ops.fixpipe_converted(op, acc, dst.array.dtype if isinstance(dst, GmTensor) else dst.dtype)
        if isinstance(dst, GmTensor):
            return self.store(dst, do, ext, rows, self._padded(out, ext))
        dst.write(window(list(map(u, do)), (u(valid), *ext[1:])), out, lead(out))

    def load(self, gm: GmTensor, offs, ext, rows) -> np.ndarray:
        """A GM tile per task, (b, p1, p2, v, *ext[1:]): the rows up to the last any task
        copies (past a task's valid ones zero); the tile's rows past them are zeros."""
        a = gm.array
        valid = None if rows is None else clip(rows, ext[0])
        if all(not isinstance(o, np.ndarray) for o in offs) and not isinstance(valid, np.ndarray):
            v = ext[0] if valid is None else int(valid)
            self.tracker.access(self, gm, offs, (v, *ext[1:]), None, False)
            return a[window(offs, (v, *ext[1:]))][(None,) * AXES]
        # (an input's reads are not tracked: its index arrays are made only if a copy needs them)
        idx, mask = None, None
        if not self.tracker.untracked(gm):
            idx, mask = self._indices(a, offs, ext, valid)
            self.tracker.access(self, gm, idx, ext, mask, False)
        # Only the rows some task copies are read (past them are zeros: a tile's rows past
        # the valid ones may lie past the array).
        v = ext[0] if valid is None else int(most(valid))
        data = self._tiles(a, offs, (v, *ext[1:]), both(*(lead(o) for o in offs)), gather=True)
        if data is None:
            if idx is None:
                idx, mask = self._indices(a, offs, ext, valid)
            data = a[idx]
        if valid is not None and int(least(valid)) < data.shape[AXES]:  # (else every row read is valid)
            if mask is None:
                mask = self._indices(a, offs, ext, valid)[1]
            assert mask is not None
            data = np.where(mask[upto(data.shape[AXES])], raw(data), 0).view(a.dtype)
        return data

    def store(self, gm: GmTensor, offs, ext, rows, data: np.ndarray) -> None:
        a = gm.array
        valid = None if rows is None else clip(rows, ext[0])
        st = both(lead(data), *(lead(o) for o in offs), lead(valid))
        if st != self.S:  # several tasks would write the same elements
            raise Unstackable("tasks of one group write alike")
        idx, mask = self._indices(a, offs, ext, valid)
        self.tracker.access(self, gm, idx, ext, mask, True)
        data = np.broadcast_to(data, (*st, *ext))
        v = ext[0] if valid is None else int(most(valid))
        view = self._tiles(a, offs, (v, *ext[1:]), st)
        # every task's rows up to v valid: copied whole (else masked)
        cut = (
            None
            if mask is None or valid is None or int(least(valid)) >= v
            else np.broadcast_to(mask[upto(v)], data[upto(v)].shape)
        )
        if view is not None:  # (no two tasks' tiles overlap: the tracker checked it)
            same, data = data.dtype == a.dtype, data[upto(v)]
            where = True if cut is None else cut
            np.copyto(raw(view) if same else view, raw(data) if same else data, casting="unsafe", where=where)
            return
        if int(np.prod(st)) <= SCATTER_TILES and self._inside(a, offs, (v, *ext[1:])):  # a slice per task
            at = [np.broadcast_to(o, st) for o in offs]
            same, data = data.dtype == a.dtype, data[upto(v)]
            for t in np.ndindex(*st):
                tile = a[window([int(o[t]) for o in at], data.shape[AXES:])]
                w = True if cut is None else cut[t]
                np.copyto(raw(tile) if same else tile, raw(data[t]) if same else data[t], "unsafe", w)
            return
        idx = tuple(np.broadcast_to(i, (*st, *ext)) for i in idx)
        if mask is not None:
            mask = np.broadcast_to(mask, (*st, *ext))
            idx, data = tuple(i[mask] for i in idx), data[mask]
        if data.dtype == a.dtype:
            raw(a)[idx] = raw(data)
        else:
            a[idx] = data

    def _tiles(self, a: np.ndarray, offs, ext, stack: tuple[int, ...], gather: bool = False) -> np.ndarray | None:
        """Every task's tile at `offs` as one strided view of `a`, (b, p1, p2, *ext), when
        each offset is a fixed step along each stack axis (a gather through index arrays
        was most of a stacked load); else with `gather` a copy of the distinct tiles,
        each sliced once (a task's row block and column block, hc_pre); None if a tile
        does not lie inside `a`, or is not a view and not `gather`."""
        if not self._inside(a, offs, ext):
            return None
        first, steps, affine = [], [0] * AXES, True
        for d, o in enumerate(offs):
            if isinstance(o, np.ndarray):
                o0 = int(o.flat[0])
                grid = np.full((1,) * AXES, o0, np.int64)
                for ax in range(AXES):
                    if o.shape[ax] > 1:
                        step = int(o[tuple(1 if i == ax else 0 for i in range(AXES))]) - o0
                        grid = grid + step * np.arange(o.shape[ax]).reshape([-1 if i == ax else 1 for i in range(AXES)])
                        steps[ax] += step * a.strides[d]
                affine = affine and bool((o == grid).all())
            else:
                o0 = int(o)
            first.append(slice(o0, None))
        if affine:
            return np.lib.stride_tricks.as_strided(a[tuple(first)], (*stack, *ext), (*steps, *a.strides))
        if not gather:
            return None
        at = np.stack([np.broadcast_to(o, stack).reshape(-1) for o in offs], 1).tolist()
        place: dict[tuple, int] = {}  # each distinct tile's place, in the order tasks meet them
        which = [place.setdefault(tuple(o), len(place)) for o in at]
        tiles = np.empty((len(place), *ext), a.dtype)
        for o, i in place.items():
            tiles[i] = a[window(o, ext)]
        if len(place) == len(at):  # (every task's own tile, in task order: not indexed again)
            return tiles.reshape(*stack, *ext)
        return tiles[which].reshape(*stack, *ext)

    @staticmethod
    def _inside(a: np.ndarray, offs, ext) -> bool:
        """Whether every task's tile lies inside `a` (else index arrays clip it)."""
        return all(least(o) >= 0 and most(o) + e <= n for o, e, n in zip(offs, ext, a.shape, strict=True))

    @staticmethod
    def _indices(a: np.ndarray, offs, ext, valid) -> tuple[tuple, np.ndarray | None]:
        """Per axis an index array (b?, p?, 1.., e, ..1) of a tile at `offs`, clipped to
        the array (rows past the valid ones may lie outside; they are masked)."""
        nd = len(ext)
        idx = []
        for d, (o, e) in enumerate(zip(offs, ext, strict=True)):
            o = np.asarray(o, np.int64)
            o = o.reshape(o.shape + (1,) * (AXES - o.ndim)) if o.ndim < AXES else o
            step = np.arange(e, dtype=np.int64).reshape((1,) * d + (e,) + (1,) * (nd - d - 1))
            i = o.reshape(o.shape + (1,) * nd) + step
            idx.append(clip(i, max(a.shape[d] - 1, 0)))
        mask = None
        if valid is not None:
            v = np.asarray(valid, np.int64)
            v = v.reshape(v.shape + (1,) * (AXES - v.ndim)) if v.ndim < AXES else v
            mask = np.arange(ext[0]).reshape((ext[0],) + (1,) * (nd - 1)) < v.reshape(v.shape + (1,) * nd)
        return tuple(idx), mask

    # -- compute -----------------------------------------------------------------------

    def mmad(self, a: Slot, b: Slot, c: Slot, accumulate) -> None:
        x, y = a.read(()), b.read(())
        if u(accumulate) and stacked_mm.adds_into(c.arr if c.full and not c.borrowed else None, x, y):
            prod, zero = stacked_mm.product(x, y, a.live(()), rows_only=True)
            c.zero_from = stacked_mm.add_into(c.read(()), prod, zero, c.live(()))
            return c.clobber()
        prod, zero = stacked_mm.product(x, y, a.live(()))  # (a new array; rows from `zero` on +0)
        if u(accumulate):
            acc = c.read(())
            if np.broadcast_shapes(acc.shape, prod.shape) == prod.shape:
                # the per-task engine's `np.add(c, prod, out=c)` (an int32 sum wraps mod 2^32
                # alike), into the product's own new array; rows +0 in both stay +0
                zero = max(zero, c.live(()))
                live = upto(zero)
                np.add(acc[live], prod[live], out=prod[live])
            else:
                prod, zero = np.add(acc, prod), c.shape[0]
        c.write((), prod, lead(prod), own=True)
        if c.arr is prod and prod.dtype == np.float32:
            c.zero_from = zero

    def vector(self, compute, transpose: bool, srcs: list[Slot], dst: Slot) -> None:
        nd = max(len(s.shape) for s in (*srcs, dst))
        made: dict[int, np.ndarray] = {}  # (a slot that is two operands, `x * x`, made contiguous once)
        # (an elementwise kernel reads a GM load's strided tiles where they lie: a copy of
        # hc_pre's 32 MB workspace a run)
        free = ops.layout_free(compute) and not transpose
        for s in srcs:
            if id(s) not in made:
                a = _aligned(s.read(()), nd)
                made[id(s)] = a if free and ops.c_ordered(a) else np.ascontiguousarray(a)
        args = [made[id(s)] for s in srcs]
        if transpose:
            value = np.swapaxes(args[0], -1, -2)
        else:
            value = np.asarray(compute(np.empty(0, dst.dtype), *args))
        if value.shape[AXES:] == dst.shape and _fresh(value, args):
            out = value.astype(dst.dtype, copy=False)  # (a new array that nothing else holds: taken)
            return dst.write((), out, lead(out), own=True)
        if value.ndim < AXES:  # (a duplicated scalar)
            value = np.broadcast_to(value, (*(1,) * AXES, *dst.shape))
        out = np.broadcast_to(value, (*value.shape[:AXES], *np.broadcast_shapes(value.shape[AXES:], dst.shape)))
        out = out.reshape(out.shape[:AXES] + dst.shape)
        dst.write((), out.astype(dst.dtype, copy=False), lead(out))

    def vcopy(self, op, src: Slot, dst: Slot) -> None:
        sc, dc, w = op.src_col.value.data, op.dst_col.value.data, op.width.value.data
        lead_s = (slice(None),) * (len(src.shape) - 1)
        lead_d = (slice(None),) * (len(dst.shape) - 1)
        part = src.read((*lead_s, slice(sc, sc + w)))
        dst.write((*lead_d, slice(dc, dc + w)), part, lead(part))


def splits(split: int, per_body: int) -> bool:
    """Whether a program's task split (`codegen_stacked.compile_stacked`) splits a body
    of `per_body` tasks (`Stack`)."""
    return 1 < split < per_body and per_body % split == 0


def ancestors(groups) -> dict[int, set[int]] | None:
    """Per group index, the groups its tasks wait for, directly or not; None if a group
    waits for a later one (the pass runs groups in index order)."""
    index = {g.label: g.index for g in groups}
    out: dict[int, set[int]] = {}
    for g in groups:
        deps = {index.get(a, len(groups)) for a in g.after}
        if any(d >= g.index for d in deps):
            return None
        out[g.index] = set().union(deps, *(out[d] for d in deps))
    return out


def run_numerics(groups, programs: list, inputs: list[GmTensor], above: dict[int, set[int]]) -> None:
    """Each group's stacked program once, in index order (an order of the task graph):
    `programs[i]` is (numerics function, free values, task split) of group i, None for one with no
    task."""
    tracker = Tracker(inputs, above)
    for g, prog in zip(groups, programs, strict=True):
        if prog is None:
            continue
        fn, free, split = prog
        st = Stack(tracker, g.index, g.bodies, g.per_body, g.loop, split)
        try:
            fn(st, free, *st.args())
            tracker.close(g.index)
        except Unstackable as e:
            e.group = g.index
            raise
