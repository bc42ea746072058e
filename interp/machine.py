"""The machine the `npu` interpreter runs on: global memory, per-core buffers, L2, HBM
and the pipe-timing model. Every figure comes from the target data file
(`pto.targets`); what each one means, and what is approximated, is in docs/model.md.

Time is in cycles of the target clock. Each core keeps, per pipe, when the pipe is free
and when its last op completes; an op starts when its pipe is free, its scalar issue
point is reached, the buffers it reads are written and the buffers it writes are read
(data dependences), and any flag its pipe waits for is set. What an op costs is
`pto.interp.cost`'s; this module books it.
"""

from __future__ import annotations

import math
import operator
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from pto.dialects.npu import Pipe, Space
from pto.interp.cost import CostModel
from pto.interp.l2 import L2Cache, Pattern, lines_from, nz_lines_from, strides
from pto.interp.l2_lines import line_pattern
from pto.interp.writes import count
from pto.targets import Target

PIPES = (Pipe.MTE2, Pipe.MTE1, Pipe.MTE3, Pipe.FIXPIPE, Pipe.CUBE, Pipe.VECTOR, Pipe.SCALAR)
# (name, pipe) of each: an enum's `.value` is a descriptor call (7 a task, 3% of an
# op-heavy timing-only run).
PIPE_NAMES = tuple((p.value, p) for p in PIPES)
SCALAR_NAME = Pipe.SCALAR.value
# A core's busy cycles of every pipe, in `PIPES` order, in one call (a task's marks).
_BUSY = operator.itemgetter(*PIPES)
_NAMES = tuple(name for name, _ in PIPE_NAMES)
# The trace track (thread) of a core that shows the graph tasks it ran.
TASK_TRACK = "task"
# Every pipe (ALL too) at 0.0, in the enum's order: a new core's `pipe_wait` is a copy
# (iterating the enum itself, once per core of each graph, was 2% of a timing-only run).
_PIPE_ZEROS = dict.fromkeys(Pipe, 0.0)


class MachineError(Exception):
    """A run-time error of the kernel (out-of-bounds access, capacity, deadlock); the
    message names the op, the buffer, its space and the bytes."""

    def __init__(self, op, msg: str):
        super().__init__(msg)
        self.op = op


def dependence_key(space: Space, where: int | str) -> str:
    """What the pipe timing's data dependences track: an on-chip buffer's space and
    offset, or a GM tensor's name (space `gm`), as one interned string, so that an op's
    several dict lookups compare it by identity and hash it once (a tuple is hashed at
    every lookup)."""
    return sys.intern(f"{space.value}:{where}")


@dataclass
class GmTensor:
    """A tensor in global memory: a numpy view, the byte address of its first element
    and `layout`, the row-major shape its addresses follow (its own, except for a window
    of another tensor: that tensor's)."""

    name: str
    array: np.ndarray
    base: int
    layout: tuple[int, ...] | None = None
    # C0, the columns of one fractal block, of a matrix stored NZ (`npu.layout`); 0: ND.
    # Its array is still the logical matrix: only the addresses of its tiles change.
    nz_c0: int = 0
    # A window's first element in the tensor of `layout` (None: the tensor itself), for
    # counting an output's writes through a window of its columns (`Machine.count_writes`).
    at: tuple[int, ...] | None = None
    key: str = field(init=False)  # what the pipe timing's data dependences track (`dependence_key`)
    # What `Machine.gm_access` reads per access: the element strides of `layout`, its
    # dimensions after the first, the element size.
    strides: tuple[int, ...] = field(init=False)
    inner: tuple[int, ...] = field(init=False)
    itemsize: int = field(init=False)

    def __post_init__(self) -> None:
        self.key = dependence_key(Space.GM, self.name)
        layout = tuple(self.strides_shape)
        self.strides, self.inner, self.itemsize = strides(layout), layout[1:], self.array.itemsize

    @property
    def strides_shape(self) -> tuple[int, ...]:
        return self.layout if self.layout is not None else self.array.shape

    def reshaped(self, shape: tuple[int, ...]) -> GmTensor:
        """An in-place reshape: of a contiguous tensor only (the lowering's rule)."""
        assert not self.nz_c0, "the npu verifier lets only DMAs read an NZ tensor"
        return GmTensor(self.name, self.array.reshape(shape), self.base)

    def window(self, offsets: list[int], shape: list[int]) -> GmTensor:
        """`shape` at `offsets`, in place: its elements keep their addresses. A window of
        an NZ matrix keeps the matrix's base and shape: `nz_lines` places its tiles at
        `at` (whole fractals, the npu verifier's rule)."""
        layout = self.strides_shape
        sl = tuple(slice(o, o + n) for o, n in zip(offsets, shape, strict=True))
        at = tuple(o + a for o, a in zip(offsets, self.at or [0] * len(offsets), strict=True))
        if self.nz_c0:
            return GmTensor(self.name, self.array[sl], self.base, layout, self.nz_c0, at=at)
        flat = 0
        for o, d in zip(offsets, layout, strict=True):
            flat = flat * d + o
        return GmTensor(self.name, self.array[sl], self.base + flat * self.array.itemsize, layout, at=at)


def nz_lines(t: GmTensor, offsets: tuple[int, ...], extent: tuple[int, ...], line: int) -> tuple[int, Pattern]:
    """The lines of a tile of an NZ matrix: element (r, c) of an [H, W] matrix is at
    (c // C0) * H * C0 + r * C0 + c % C0 (column blocks one after another, each its
    rows of C0 elements), so a tile is one run per column block it touches."""
    (r, c), c0, rows = offsets, t.nz_c0, t.strides_shape[0]
    if t.at is not None:  # a window: its tile is the matrix's at the window's offset
        r, c = r + t.at[0], c + t.at[1]
    start = t.base + ((c // c0) * rows * c0 + r * c0 + c % c0) * t.itemsize
    return nz_lines_from(start, c % c0, rows * c0 * t.itemsize, c0, extent, t.itemsize, line)


@dataclass
class Event:
    core: str
    pipe: str
    name: str
    start: float
    dur: float  # until the result is ready (occupancy + latency)
    nbytes: int
    cycles: float  # how long the op occupies its pipe


@dataclass
class TaskRun:
    """One task of a graph as it ran: recorded for every run (one per task, cheap), so
    that a report can show its timeline without tracing every op."""

    core: str
    group: str
    body: int
    index: int
    start: float  # when its core took it
    end: float  # when all its pipes were done
    busy: dict[str, float]  # pipe -> cycles it occupied that pipe
    macs: int  # multiply-accumulates of its mmads (whole fractals, as priced)
    hbm_bytes: int  # what its GM copies moved through HBM (L2 misses, dirty evictions)

    @property
    def name(self) -> str:
        return f"{self.group}[{self.body},{self.index}]"

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass
class Core:
    kind: str  # "cube" or "vector"
    index: int
    machine: Machine
    start: float
    mem: dict[Space, np.ndarray] = field(default_factory=dict)
    free: dict[Pipe, float] = field(default_factory=dict)
    last_done: dict[Pipe, float] = field(default_factory=dict)
    busy: dict[Pipe, float] = field(default_factory=dict)
    issue: float = 0.0
    flags: dict[tuple[Pipe, Pipe, int], list[float]] = field(default_factory=dict)
    # Every pipe's, 0.0 until a flag is waited for; and per data-dependence key, when its
    # last writer and its last reader are done, 0.0 for a key never used: so that the
    # compiled engine's programs index them rather than call `get`.
    pipe_wait: dict[Pipe, float] = field(default_factory=_PIPE_ZEROS.copy)
    written: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    read: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    peak: dict[Space, int] = field(default_factory=dict)
    bufs: dict = field(default_factory=dict)  # the compiled engine's buffers, by AllocSpec
    memo: dict = field(default_factory=dict)  # a compiled program's values per core (`codegen`)
    # Scalar issue slots charged: SCALAR's busy cycles are this many `latency.issue`
    # additions to 0.0, whatever the order they came in, so they are counted and summed
    # once, when the launch ends (`settle`), not added op by op.
    issued: int = 0
    # Work counted for the report's per-task figures (`TaskRun`).
    macs: int = 0
    hbm_lines: int = 0
    # What the counters above were when the running task was taken (`Machine.task_taken`).
    mark: tuple = ()

    def __post_init__(self) -> None:
        self.issue = self.start
        for p in PIPES:
            self.free[p] = self.last_done[p] = self.start
            self.busy[p] = 0.0

    @property
    def name(self) -> str:
        return f"{'aic' if self.kind == 'cube' else 'aiv'}{self.index}"

    @property
    def clock(self) -> float:
        return self.issue

    def end(self) -> float:
        return max(self.issue, *self.last_done.values())

    def space(self, space: Space) -> np.ndarray:
        if space not in self.mem:
            m = self.machine
            self.mem[space] = np.zeros(m.target.capacity(space.value), np.uint8) if m.numerics else m.blank(space)
        return self.mem[space]

    def scalar(self) -> None:
        """Issue one scalar op."""
        self.issue += self.machine.cost.issue
        self.issued += 1

    def settle(self) -> None:
        """SCALAR's busy cycles from the slots issued: `issued` additions of the issue
        cost to 0.0 in sequence (an integer cost's sum is exact, so it is one product)."""
        ci, n = self.machine.cost.issue, self.issued
        if float(ci).is_integer() and abs(n * ci) < 2**53:
            self.busy[Pipe.SCALAR] = float(n * ci)
            return
        total = 0.0
        for _ in range(n):
            total += ci
        self.busy[Pipe.SCALAR] = total

    # `begin`, `commit`, `run`, `flag`, `set_flag` and `wait_flag` are the pipe timing of
    # both engines: the compiled engine writes them out into its programs
    # (`pto.interp.inline`), so they keep to the Python it can specialise (no `with`,
    # `while`, comprehensions; loops over the keys an op names; tests, not `max`, since
    # they run once per op).

    def begin(self, pipe: Pipe, reads=(), writes=()) -> float:
        """Issue one op on `pipe` and return when it can start: its issue point, the pipe
        being free, a flag the pipe waits for, and its data dependences. Ops whose cost
        depends on when they start (shared HBM) are priced between `begin` and `commit`."""
        self.issue = t = self.issue + self.machine.cost.issue
        self.issued += 1
        if (x := self.free[pipe]) > t:  # (tests, not `max`: this runs once per op of a run)
            t = x
        if (x := self.pipe_wait[pipe]) > t:
            t = x
        for k in reads:
            if (x := self.written[k]) > t:
                t = x
        for k in writes:
            if (x := self.written[k]) > t:
                t = x
            if (x := self.read[k]) > t:
                t = x
        return t

    def commit(
        self, op, pipe: Pipe, t: float, cycles: float, latency: float = 0.0, reads=(), writes=(), nbytes: int = 0
    ) -> float:
        """Book an op that `begin` started at `t`: it occupies `pipe` for `cycles`, its
        results are ready `latency` cycles after that. Returns when they are ready."""
        self.free[pipe] = done = t + cycles
        if latency:  # (t + cycles + latency; an op without latency spares the addition)
            done = done + latency
        if done > self.last_done[pipe]:
            self.last_done[pipe] = done
        self.busy[pipe] += cycles
        for k in reads:
            if done > self.read[k]:
                self.read[k] = done
        for k in writes:
            self.written[k] = done
        if self.machine.events is not None:
            self.machine.events.append(Event(self.name, pipe.value, op.name, t, cycles + latency, nbytes, cycles))
        return done

    def run(self, op, pipe: Pipe, cycles: float, latency: float = 0.0, reads=(), writes=(), nbytes: int = 0) -> float:
        """Schedule an op whose cost does not depend on its start time; returns when its
        results are ready."""
        t = self.begin(pipe, reads, writes)
        return self.commit(op, pipe, t, cycles, latency, reads, writes, nbytes)

    # -- synchronisation ------------------------------------------------------------

    def flag(self, src: Pipe, dst: Pipe, event: int) -> list[float]:
        """A flag's pending sets, oldest first: the same list for the core's life."""
        return self.flags.setdefault((src, dst, event), [])

    def set_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        self.flag(src, dst, event).append(self.last_done[src])

    def wait_flag(self, op, src: Pipe, dst: Pipe, event: int) -> None:
        pending = self.flag(src, dst, event)
        if not pending:
            raise MachineError(
                op, f"{self.name}: wait_flag {src.value} -> {dst.value}, {event} was never set: this core would hang"
            )
        t = pending.pop(0)
        if dst == Pipe.SCALAR:
            if t > self.issue:
                self.issue = t
        elif t > self.pipe_wait[dst]:
            self.pipe_wait[dst] = t

    def barrier(self, pipe: Pipe) -> None:
        if pipe == Pipe.ALL:
            self.issue = max(self.issue, *self.last_done.values())
        else:
            self.pipe_wait[pipe] = max(self.pipe_wait.get(pipe, 0.0), self.last_done[pipe])


class Machine:
    def __init__(self, target: Target, l2_size: int | None = None, trace: bool = False, numerics: bool = True):
        self.target = target
        # Off: timing only. Ops skip their tile arithmetic and copies; bounds, L2 and
        # timing are the same (`pto.interp.npu_ops`).
        self.numerics = numerics
        # A graph's numerics computed by task group after its timing (`pto.interp.stacked`;
        # the compiled engine), and the kernel's inputs, which its tasks only read.
        self.stacking = False
        self.inputs: list[GmTensor] = []
        l2 = target.l2
        self.l2 = L2Cache(l2_size if l2_size is not None else l2.sim_size, l2.line_bytes, l2.ways)
        self.l2_size = self.l2.sets * self.l2.ways * self.l2.line
        self.cost = CostModel(target)
        self._hbm_used: dict[int, float] = {}
        # What `hbm_time` reads per call: a window's cycles, the bytes all cores move in one.
        self._hbm_window = self.cost.hbm_window
        self._hbm_cap = self.cost.hbm_total * self.cost.hbm_window
        self.next_addr = 0
        self.now = 0.0
        self.cores: list[Core] = []
        self.events: list[Event] | None = [] if trace else None
        self.cross: dict[int, list[float]] = {}
        # The interleaving of the running launch or graph's cores: a `Scheduler` (threads)
        # or a `compiled.EventScheduler` (generators), which answer the same calls.
        self.scheduler: Any = None
        self.launches = 0
        # Tasks run by task graphs, per core kind and per group label.
        self.tasks: dict = {"cube": 0, "vector": 0, "groups": {}}
        self.task_runs: list[TaskRun] = []
        # The outputs whose elements' writes are counted (atomic adds excluded), by name:
        # their shapes. A correct kernel writes every output element exactly once.
        self.counted: dict[str, tuple[int, ...]] = {}
        self._writes: list[tuple[GmTensor, Any, Any]] = []  # noted by `count_writes`, not yet counted
        self._blank: dict[Space, np.ndarray] = {}
        self.blank_bufs: dict = {}  # AllocSpec -> its Buf of the blank memory (`npu_ops.alloc`)
        # AllocSpecs that fit their space: a capacity is the target's, alike for every core, so
        # a buffer is checked once per run, not once per core (`npu_ops.alloc_once`).
        self.fitting: set = set()

    def blank(self, space: Space) -> np.ndarray:
        """A timing-only run's memory of `space` for every core: nothing is written to it
        (read-only, so a write would fail), so one array serves all."""
        if space not in self._blank:
            self._blank[space] = np.zeros(self.target.capacity(space.value), np.uint8)
            self._blank[space].setflags(write=False)
        return self._blank[space]

    def count_writes(self, t: GmTensor, offsets, extent) -> None:
        """Note a write of the tile for the output's per-element counts, through `t`'s
        shape (the output, or a reshape of it); `write_counts` counts them."""
        self._writes.append((t, offsets, extent))

    def write_counts(self) -> Callable[[], dict[str, np.ndarray]]:
        """What counts the writes noted so far, each output's per element, when called
        (`pto.interp.writes.count`): the run's result counts them when first read. It
        holds the outputs' notes (no GM tensor: a workspace's array is not kept alive
        with the result), not the machine; the machine notes anew from here."""
        counted = self.counted
        writes = [(t.name, t.at, t.strides_shape, o, e) for t, o, e in self._writes if t.name in counted]
        self._writes = []
        return partial(count, dict(counted), writes)

    # -- global memory ---------------------------------------------------------------

    def gm(self, name: str, array: np.ndarray, nz: bool = False) -> GmTensor:
        """A tensor of its own lines (`nz`: a matrix stored in fractals, C0 columns of one
        `block_bytes` block each). Two tensors of one name would share L2 counters;
        `gm_access` then cannot tell that the lines of either are never cached."""
        line = self.l2.line
        c0 = self.target.block_bytes // array.itemsize if nz else 0
        t = GmTensor(name, array, self.next_addr, nz_c0=c0)
        self.next_addr += math.ceil(max(array.nbytes, 1) / line) * line
        if name in self.l2.stats:
            self.l2.cached.add(self.l2.ids[name])
        self.l2.tensor_id(name)
        return t

    def hbm_time(self, start: float, nbytes: float, rate: float) -> float:
        """Cycles to move `nbytes` to or from HBM starting at `start`, at this core's
        `rate` but within the chip's shared bandwidth per window."""
        t, left = start, float(nbytes)
        if left <= 0:
            return t - start
        used, win, cap = self._hbm_used, self._hbm_window, self._hbm_cap
        w = int(t // win)
        while True:  # window by window; tests, not `min`: it runs per GM copy
            u = used.get(w, 0.0)
            end = (w + 1) * win
            n = rate * (end - t)
            if left < n:
                n = left
            if cap - u < n:
                n = cap - u
            if n > 0:
                used[w] = u + n
                left -= n
                if left <= 0:
                    return t + n / rate - start
            # the next window from its start (`end // win` is w + 1: one fewer division)
            t = end
            w += 1

    def gm_access(
        self, t: GmTensor, offsets: tuple[int, ...], extent: tuple[int, ...], write: bool, cacheable: bool
    ) -> tuple[int, int, int]:
        """Touch a GM tile's lines in L2; returns (hit lines, miss lines, dirty lines its
        misses evicted). What that costs is `CostModel.gm_transfer`'s, priced from the
        DMA's start."""
        l2 = self.l2
        if t.nz_c0:
            first, pattern = nz_lines(t, offsets, extent, l2.line)
        elif len(offsets) == 2:  # (most tiles: `sum(map(...))` cost more than the rest of this)
            start, line = t.base + (offsets[0] * t.strides[0] + offsets[1]) * t.itemsize, l2.line
            first, pattern = start // line, line_pattern(t.inner, extent, t.itemsize, line, start % line)
        else:
            start = t.base + sum(map(operator.mul, offsets, t.strides)) * t.itemsize
            first, pattern = lines_from(start, t.inner, extent, t.itemsize, l2.line)
        if pattern.few is not None and pattern.span < l2.sets and (cacheable or not l2.never_cached(t.name)):
            return l2.access_lines(first, pattern.few, pattern.runs, t.name, write, cacheable)
        l2.stats[t.name].bursts += pattern.runs
        if not cacheable and l2.never_cached(t.name):  # its lines, its own, are not in L2
            return (*l2.miss_all(pattern.size, t.name, write), 0)
        before = l2.written_back
        hits, misses = l2.access_tile(first, pattern, t.name, write, cacheable)
        return hits, misses, l2.written_back - before

    # -- launches ----------------------------------------------------------------------

    def new_core(self, kind: str, index: int, start: float | None = None) -> Core:
        """A core of a launch (starting after the dispatch latency) or, with `start`, of a
        task graph (which charges the dispatch per task)."""
        if start is None:
            start = self.now + self.cost.task_dispatch
        c = Core(kind, index, self, start)
        self.cores.append(c)
        return c

    def finish_launch(self, cores: list[Core]) -> None:
        self.launches += 1
        for c in cores:
            c.settle()
        if cores:
            self.now = max(c.end() for c in cores)

    def task_taken(self, core: Core) -> None:
        """Mark the core's counters as a task starts, so `task_done` books its share."""
        core.mark = (_BUSY(core.busy), core.issued, core.macs, core.hbm_lines)

    def task_done(self, core: Core, label: str, index: tuple[int, int], taken: float, end: float) -> None:
        """Count a task of a graph and record how it ran (`TaskRun`)."""
        self.tasks[core.kind] += 1
        self.tasks["groups"][label] = self.tasks["groups"].get(label, 0) + 1
        busy0, issued0, macs0, lines0 = core.mark
        busy = dict(zip(_NAMES, map(operator.sub, _BUSY(core.busy), busy0), strict=True))
        # SCALAR's busy cycles are settled when the launch ends: its issue slots, now
        busy[SCALAR_NAME] = (core.issued - issued0) * self.cost.issue
        hbm = (core.hbm_lines - lines0) * self.l2.line
        run = TaskRun(core.name, label, index[0], index[1], taken, end, busy, core.macs - macs0, hbm)
        self.task_runs.append(run)
