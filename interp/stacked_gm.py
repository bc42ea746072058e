"""The GM checks of the stacked pass (`pto.interp.stacked`): which tasks touch which
elements of the tensors the kernel writes, kept as spans of memory, not per element.

A task's tile of an n-D tensor is a row of elements per index of its leading axes: one
span [start, end) of its root array's memory each (the root's element numbers in the
tensor's element size). Each group's spans are merged per tag (touching spans of one
tag become one) and kept merged, so what is kept grows with the distinct row blocks a
tensor has, not with its elements: a per-element owner and writer array over every
written tensor was most of a stacked pass (hc_pre at t=512: 0.6 s of 0.8 s).

The rules are those the per-element arrays checked (`pto.interp.stacked` module doc):
- an element is touched by the tasks of one body only (spans tagged by body, over every
  group: no two of different tags overlap);
- groups that touch one element depend on each other (spans per group: a group's may
  meet only its own and its ancestors'; ancestors are transitive, so this is the per-
  element "last group to touch it" rule);
- no element is written by two tasks of a group (write spans tagged by task);
- a group reads or writes a tensor, not both; inputs are never written.
Spans of a tile that runs past the array are clipped to it (its rows past the valid
ones are masked out, as the copies do).
"""

from __future__ import annotations

import numpy as np

# The stack axes of a group's stacked arrays (`pto.interp.stacked.Stack`): body, task
# // split, task % split.
AXES = 3


class NotStackable(Exception):
    """A program the stacked pass cannot run (known when compiling)."""


class Unstackable(Exception):
    """A run whose stacked numerics could differ from the per-task engine's: it is run
    again per task. `group`: the index of the group whose program was refused (set by
    `run_numerics`), so that its program is not stacked again (`Programs.refuse`)."""

    group: int | None = None


Spans = tuple[np.ndarray, np.ndarray, np.ndarray]  # start, end, tag: int64 each, one per span
_NONE: Spans = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))


class Tracker:
    """Per GM tensor the kernel writes (by its root array): the spans each body, each
    group and each group's writing tasks have touched (module doc)."""

    def __init__(self, inputs, ancestors: dict[int, set[int]]):
        self.inputs = {id(root(t.array)) for t in inputs}
        self.ancestors = ancestors
        self.bodies: dict[int, Spans] = {}  # root -> spans tagged by (loop << 20) + body
        self.groups: dict[tuple[int, int], Spans] = {}  # (root, rank) -> spans (tag 0)
        self.writes: dict[tuple[int, int], Spans] = {}  # (root, rank) -> spans tagged by task
        self.kinds: dict[tuple[int, int], set[bool]] = {}  # (root, rank) -> {write?}
        # (root, rank) -> the group's accesses not yet checked: (start, end, body, task, write?)
        self.pending: dict[tuple[int, int], list[tuple]] = {}

    def untracked(self, gm) -> bool:
        """Whether `gm` is an input, whose reads are not tracked."""
        return id(root(gm.array)) in self.inputs

    def access(self, st, gm, where, ext, mask, write: bool) -> None:
        """Group `st` (a `stacked.Stack`) reads or writes a tile of `gm` per task: at
        `where` (offsets: ints, or index arrays (b?, p1?, p2?, ..) from `Stack._indices`), of
        extent `ext`, its rows cut by `mask` (None: all). A write of an input is refused
        before it is made; the rules on spans are checked for all of a group's accesses at
        once when it ends (`close`): each is a test of the union of the spans, which
        grows as accesses come (checked per access, three merges each were a sixth of
        mla_wkv_rmsnorm's stacked pass)."""
        a = gm.array
        r = root(a)
        key = id(r)
        if key in self.inputs:
            if write:
                raise Unstackable("a task writes an input")
            return
        kinds = self.kinds.setdefault((key, st.rank), set())
        kinds.add(write)
        if len(kinds) > 1:
            raise Unstackable("one group reads and writes one tensor")
        # (a mask along the last axis, of a 1-D tile, cuts rows: a span per element then)
        start, end = tile_spans(a, r, where, ext, mask is not None and mask.shape[-1] > 1)
        shape = np.broadcast_shapes(start.shape, (1,) * AXES if mask is None else mask.shape)
        if st.B > 1 and shape[0] == 1:
            raise Unstackable("tasks of several bodies touch one element of a written tensor")
        if write:  # every task writes (`Stack.store`), those with alike offsets too
            shape = (*st.S, *shape[AXES:])
        b, p1, p2 = shape[:AXES]
        lead_shape = (b, p1, p2, *(1,) * (len(shape) - AXES))
        start, end = _filled(start, shape), _filled(end, shape)
        body = _filled(st.owner[:b].reshape(b, 1, 1, *lead_shape[AXES:]), shape)
        task = _filled((st.body[:b] * st.P + st.task[:, :p1, :p2]).reshape(lead_shape), shape)
        if mask is not None:
            mask = np.broadcast_to(mask, shape)
            start, end, body, task = start[mask], end[mask], body[mask], task[mask]
        else:
            start, end, body, task = (x.reshape(-1) for x in (start, end, body, task))
        keep = end > start
        self.pending.setdefault((key, st.rank), []).append((start[keep], end[keep], body[keep], task[keep], write))

    def close(self, rank: int) -> None:
        """Check group `rank`'s accesses (`access`) against each other and the groups
        before it, per tensor."""
        for key, r in [k for k in self.pending if k[1] == rank]:
            parts = self.pending.pop((key, r))
            start, end, body, task = (np.concatenate([p[i] for p in parts]) for i in range(4))
            merged = _merge_apart(_join(self.bodies.get(key, _NONE), (start, end, body)))
            if merged is None:
                raise Unstackable("tasks of several bodies touch one element of a written tensor")
            self.bodies[key] = merged
            mine = (start, end, np.zeros_like(start))
            apart = self.ancestors[rank]
            others = [s for (k, g), s in self.groups.items() if k == key and g != rank and g not in apart]
            if others and _meet(mine, _join(*others)):
                raise Unstackable("two groups that do not depend on each other touch one element")
            group = _merge_apart(_join(self.groups.get((key, rank), _NONE), mine))
            assert group is not None  # (one tag)
            self.groups[(key, rank)] = group
            writes = [p for p in parts if p[4]]
            if writes:
                spans = tuple(np.concatenate([p[i] for p in writes]) for i in (0, 1, 3))
                written = _merge_apart(_join(self.writes.get((key, rank), _NONE), spans))  # type: ignore[arg-type]
                if written is None:
                    raise Unstackable("two tasks of one group write one element")
                self.writes[(key, rank)] = written


def _filled(x, shape: tuple[int, ...]) -> np.ndarray:
    """`x` broadcast to `shape`, as a new int64 array (a copy by assignment: a fifth of
    the cost of `np.broadcast_to`'s view and a copy of it, a few microseconds a call)."""
    out = np.empty(shape, np.int64)
    out[...] = x
    return out


def root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def tile_spans(a: np.ndarray, r: np.ndarray, where, ext, apart: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each row of each task's tile in `r`'s memory: shape (b, p1, p2, rows..,
    1). A tensor whose last axis is not contiguous, or `apart`, has a span per element."""
    size = a.itemsize
    base = (a.__array_interface__["data"][0] - r.__array_interface__["data"][0]) // size
    steps = [s // size for s in a.strides]
    if all(not isinstance(w, np.ndarray) for w in where):
        where = _int_indices(a.shape, where, ext)
    if apart or steps[-1] != 1 or any(s < 0 for s in steps):  # (not a row of memory)
        flat = base + sum(i * s for i, s in zip(where, steps, strict=True))
        flat = np.asarray(flat, np.int64)
        return flat, flat + 1
    rows = base + sum((i * s for i, s in zip(where[:-1], steps[:-1], strict=True)), np.int64(0))
    last = where[-1]
    first, past = last[..., :1], last[..., -1:] + 1
    return np.asarray(rows + first, np.int64), np.asarray(rows + past, np.int64)


def _int_indices(shape, offs, ext) -> list[np.ndarray]:
    """`Stack._indices`' arrays for int offsets, clipped to the array (a slice stops at
    its end)."""
    nd = len(ext)
    out = []
    for d, (o, e, n) in enumerate(zip(offs, ext, shape, strict=True)):
        i = clip(np.arange(o, o + e, dtype=np.int64), max(n - 1, 0))
        out.append(i.reshape((1,) * AXES + (1,) * d + (e,) + (1,) * (nd - d - 1)))
    return out


def _join(*spans: Spans) -> Spans:
    if len(spans) == 1:
        return spans[0]
    return tuple(np.concatenate([s[i] for s in spans]) for i in range(3))  # type: ignore[return-value]


def _merge_apart(spans: Spans) -> Spans | None:
    """The spans merged per tag (overlapping or touching ones of one tag become one), in
    order of start; None if spans of two tags overlap."""
    start, end, tag = spans
    if start.size == 0:
        return spans
    tags, dense = np.unique(tag, return_inverse=True)
    # One sort by (tag, start): each tag's spans moved past the others' by a multiple of
    # the memory's extent, so one running maximum of the ends merges them per tag.
    width = int(end.max()) + 1
    s, e = dense * width + start, dense * width + end
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    t = s[first] // width
    ms, me = s[first] - t * width, reach[last] - t * width
    order = np.argsort(ms, kind="stable")
    ms, me, t = ms[order], me[order], t[order]
    if ms.size > 1 and (ms[1:] < np.maximum.accumulate(me)[:-1]).any():
        return None  # (each tag's spans are apart now: an overlap is between two tags)
    return ms, me, tags[t]


def _meet(a: Spans, b: Spans) -> bool:
    """Whether a span of `a` overlaps one of `b`."""
    z = np.zeros
    return _merge_apart(_join((a[0], a[1], z(a[0].size, np.int64)), (b[0], b[1], z(b[0].size, np.int64) + 1))) is None


# (`np.clip`, `np.min` and `np.max` dispatch through Python at several microseconds a
# call, most of the cost of a copy's index values: these are one ufunc call, or none)
def clip(x, hi: int):
    """`np.clip(x, 0, hi)` of an int or an index array."""
    return max(0, min(x, hi)) if not isinstance(x, np.ndarray) else np.minimum(np.maximum(x, 0), hi)


def least(x):
    return x.min() if isinstance(x, np.ndarray) else x


def most(x):
    return x.max() if isinstance(x, np.ndarray) else x
