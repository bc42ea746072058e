"""Interpreter functions for the `npu` dialect: numerics on whole tiles (numpy) and the
machine model's accounting (buffers, L2, pipe timing) for every op; what each op costs
is `pto.interp.cost`'s.

A GM value is a `GmTensor`; an on-chip value is a `Buf` (a numpy view into its core's
memory space at the alloc's byte offset, so allocs at the same offset share storage
as on the hardware). `npu.launch` runs each core's program in its own interpreter,
interleaved by `pto.interp.scheduler`; `npu.graph` dispatches tasks to cores
(`pto.interp.graph`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from pto.dialects import npu
from pto.dialects.npu import DYN, BufferType, Pipe, Space
from pto.dialects.pto import CachePolicy, RoundMode
from pto.interp import numerics as nx
from pto.interp.graph import Group, TaskGraph
from pto.interp.machine import Core, GmTensor, Machine, MachineError
from pto.interp.scheduler import Scheduler
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation, Region, SSAValue
from xdsl.utils.scoped_dict import ScopedDict

# The model keeps a record per task; past this many tasks in one graph a run is refused
# rather than left to exhaust memory (a loop bound far beyond its tensor, say).
MAX_TASKS = 1 << 24


@dataclass(eq=False)
class Buf:
    """An on-chip buffer of one core."""

    array: np.ndarray
    space: Space
    offset: int

    @property
    def key(self) -> tuple[Space, int]:
        return (self.space, self.offset)


def _key(v: Buf | GmTensor) -> object:
    return v.key if isinstance(v, Buf) else ("gm", v.name)


def _space(v: Buf | GmTensor) -> Space:
    return v.space if isinstance(v, Buf) else Space.GM


def _tile(op: Operation, v: Buf | GmTensor, offs: tuple[int, ...], ext: tuple[int, ...], what: str) -> np.ndarray:
    a = v.array
    for ax, (o, e, d) in enumerate(zip(offs, ext, a.shape)):
        if e and (o < 0 or o + e > d):  # moving nothing (a tail's missing tile) is no access
            name = v.name if isinstance(v, GmTensor) else f"{_space(v).value} buffer at offset {v.offset}"
            raise MachineError(op, f"'{op.name}' {what} [{o}, +{e}) of axis {ax} is outside {name} "
                               f"({'x'.join(map(str, a.shape))}, {a.nbytes} bytes)")
    return a[tuple(slice(o, o + e) for o, e in zip(offs, ext))]


def _merge(static: tuple[int, ...], dyn) -> tuple[int, ...]:
    it = iter(dyn)
    return tuple(int(next(it)) if s == DYN else s for s in static)


class CoreInterpreter(Interpreter):
    """The interpreter of one core's program. Its region loop is xDSL's, minus the
    per-op listener and checks (a core program runs tens of thousands of ops), and it
    charges scalar ops (index arithmetic, loop control) issue cycles on its core. Values
    live in one dict per core: the programs are structured (scf), so a value's latest
    definition is the one in scope."""

    def __init__(self, module, impls, outer: ScopedDict, core: Core):
        super().__init__(module, _impls=impls)  # type: ignore[call-arg]
        env: dict = {}
        scope: ScopedDict | None = outer
        chain = []
        while scope is not None:
            chain.append(scope.local_scope)
            scope = scope.parent
        for local in reversed(chain):
            env.update(local)
        self.env = env
        self.core = core
        self.set_data(NpuFunctions, "core", core)

    def get_values(self, values) -> tuple:
        env = self.env
        return tuple(env[v] for v in values)

    def set_values(self, pairs) -> None:
        self.env.update(pairs)

    def run_ssacfg_region(self, region: Region, args: PythonValues, name: str = "unknown") -> PythonValues:
        if not region.blocks:
            return ()
        env, run, core, cost = self.env, self._impls.run, self.core, self.core.machine.cost.issue
        block = region.blocks.first
        while block is not None:
            env.update(zip(block.args, args))
            op, block = block.first_op, None
            while op is not None:
                if op.name.startswith(_SCALAR):
                    core.scalar(cost)
                result = run(self, op, tuple(env[v] for v in op.operands))
                env.update(zip(op.results, result.values))
                tv = result.terminator_value
                if tv is not None:
                    if isinstance(tv, ReturnedValues):
                        return tv.values
                    block, args = tv  # a Successor
                    break
                op = op.next_op
        return ()


_SCALAR = ("arith.", "scf.")


@register_impls
class NpuFunctions(InterpreterFunctions):
    def __init__(self, machine: Machine):
        self.machine = machine
        self._ends: dict[Operation, Any] = {}
        self._allocs: dict[Operation, Any] = {}
        self._groups: list[Group] | None = None  # of the npu.graph whose block is running
        self._loops: dict[SSAValue, int] = {}  # its token loops, by their bodies value

    # -- helpers ---------------------------------------------------------------------

    @staticmethod
    def core(interpreter: Interpreter) -> Core | None:
        return interpreter.get_data(NpuFunctions, "core", lambda: None)

    def _need_core(self, interpreter: Interpreter, op: Operation) -> Core:
        c = self.core(interpreter)
        if c is None:
            raise MachineError(op, f"'{op.name}' runs on a core: put it inside npu.launch")
        return c

    def ends(self, op: npu.DmaOp | npu.FixpipeOp, args: PythonValues):
        """(src, dst, src offsets, dst offsets, rows) of a copy."""
        if op not in self._ends:
            self._ends[op] = (op.static_src.get_values(), len(op.src_offsets), op.static_dst.get_values(),
                              len(op.dst_offsets), op.rows is not None, op.extent())
        ss, ns, ds, nd, has_rows, ext = self._ends[op]
        so = _merge(ss, args[2:2 + ns])
        do = _merge(ds, args[2 + ns:2 + ns + nd])
        rows = int(args[-1]) if has_rows else None
        return args[0], args[1], so, do, rows, ext

    # -- allocation and views ----------------------------------------------------------

    @impl(npu.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: npu.AllocOp, args: PythonValues):
        t = op.result.type
        assert isinstance(t, BufferType)
        if op in self._allocs:  # allocs in task loops run again and again: decode the type once
            core = self._need_core(interpreter, op)
            space, off, need, dtype, shape, nbytes = self._allocs[op]
            core.peak[space] = max(core.peak.get(space, 0), need)
            return (Buf(core.space(space)[off:off + nbytes].view(dtype).reshape(shape), space, off),)
        dtype = nx.DTYPES[t.elem]
        if t.mem == Space.GM:
            it = iter(args)
            shape = tuple(int(next(it)) if d == DYNAMIC_INDEX else d for d in t.get_shape())
            name = op.result.name_hint or f"ws{len(self.machine.l2.names)}"
            return (self.machine.gm(self._fresh(name), nx.poison(shape, dtype)),)
        core = self._need_core(interpreter, op)
        off = op.offset.value.data if op.offset is not None else 0
        need, cap = off + t.nbytes(), self.machine.target.capacity(t.mem.value)
        if need > cap:
            raise MachineError(op, f"{core.name}: buffer {t} at offset {off} needs {need} bytes of "
                               f"{t.mem.value}, which has {cap}")
        core.peak[t.mem] = max(core.peak.get(t.mem, 0), need)
        self._allocs[op] = (t.mem, off, need, dtype, t.get_shape(), t.nbytes())
        view = core.space(t.mem)[off:off + t.nbytes()].view(dtype).reshape(t.get_shape())
        return (Buf(view, t.mem, off),)

    def _fresh(self, name: str) -> str:
        names, n, base = self.machine.l2.stats, 1, name
        while name in names:
            name = f"{base}_{n}"
            n += 1
        return name

    @impl(npu.DimOp)
    def run_dim(self, interpreter: Interpreter, op: npu.DimOp, args: PythonValues):
        return (args[0].array.shape[op.dim.value.data],)

    @impl(npu.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: npu.ReshapeOp, args: PythonValues):
        src: GmTensor = args[0]
        t = op.result.type
        assert isinstance(t, BufferType)
        shape = tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
        return (src.reshaped(shape),)

    @impl(npu.ViewOp)
    def run_view(self, interpreter: Interpreter, op: npu.ViewOp, args: PythonValues):
        src: GmTensor = args[0]
        return (src.window(op.starts, list(op.result.type.get_shape())),)  # type: ignore[attr-defined]

    # -- launch ------------------------------------------------------------------------

    @impl(npu.LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: npu.LaunchOp, args: PythonValues):
        m = self.machine
        sched = Scheduler()
        cores: list[Core] = []
        for kind, count, region in (("cube", op.cube_cores.value.data, op.cube),
                                    ("vector", op.vector_cores.value.data, op.vector)):
            for i in range(count):
                core = m.new_core(kind, i)
                cores.append(core)
                child = CoreInterpreter(interpreter.module, interpreter._impls, interpreter._ctx, core)
                sched.add(core.name, partial(child.run_ssacfg_region, region, (i,), core.name),
                          lambda c=core: c.clock)
        m.scheduler = sched
        sched.run_all()
        m.scheduler = None
        m.finish_launch(cores)
        return ()

    @impl(npu.GraphOp)
    def run_graph(self, interpreter: Interpreter, op: npu.GraphOp, args: PythonValues):
        """Run the graph's block here (its `npu.tasks` only register groups), then its
        tasks on the cores; the tasks see the block's values."""
        if self._groups is not None:
            raise MachineError(op, "'npu.graph' cannot nest")
        self._groups, self._loops = [], {}
        interpreter.push_scope("npu.graph")
        try:
            for o in op.body.block.ops:
                result = interpreter._run_op(o, interpreter.get_values(o.operands))
                interpreter.set_values(zip(o.results, result.values))
            groups, self._groups = self._groups, None
            child = lambda core: CoreInterpreter(interpreter.module, interpreter._impls, interpreter._ctx, core)
            stitch = op.stitch.value.data if op.stitch is not None else None
            TaskGraph(self.machine, groups, stitch).run(op.cube_cores.value.data, op.vector_cores.value.data, child)
        finally:
            self._groups = None
            interpreter.pop_scope()
        return ()

    @impl(npu.TasksOp)
    def run_tasks(self, interpreter: Interpreter, op: npu.TasksOp, args: PythonValues):
        if self._groups is None:
            raise MachineError(op, "'npu.tasks' runs inside 'npu.graph'")
        bodies = int(args[0])
        if bodies < 0:
            raise MachineError(op, f"'npu.tasks' \"{op.label.data}\" has {bodies} loop bodies: its token loop's "
                                   "lower bound is above its upper bound")
        if bodies * op.per_body.value.data > MAX_TASKS:
            raise MachineError(op, f"'npu.tasks' \"{op.label.data}\" would run {bodies} x {op.per_body.value.data} "
                                   f"tasks, over the model's limit of {MAX_TASKS}")
        loop = self._loops.setdefault(op.bodies, len(self._loops))  # groups of one loop share its bodies value
        self._groups.append(Group(len(self._groups), op.label.data, op.kind.data, bodies,
                                  op.per_body.value.data, op.deps(), op.body, loop, op.hub is not None))
        return ()

    # -- data movement -------------------------------------------------------------------

    @impl(npu.DmaOp)
    def run_dma(self, interpreter: Interpreter, op: npu.DmaOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        src, dst, so, do, rows, ext = self.ends(op, args)
        transpose = op.transpose is not None
        valid = ext[0] if rows is None else max(0, min(rows, ext[0]))
        vext = (valid, *ext[1:])
        sext = tuple(reversed(vext)) if transpose else vext
        data = _tile(op, src, so, sext, "source")
        out = _tile(op, dst, do, vext, "destination")
        out[...] = data.T if transpose else data
        if valid < ext[0] and isinstance(dst, Buf):
            _tile(op, dst, do, ext, "destination")[valid:] = 0
        nbytes = data.nbytes
        gm = src if isinstance(src, GmTensor) else dst if isinstance(dst, GmTensor) else None
        cost = self.machine.cost
        adjust = cost.transposed if transpose else None
        rw = dict(reads=[_key(src)], writes=[_key(dst)], nbytes=nbytes)
        if gm is None:
            cycles = cost.onchip_dma(nbytes, _space(src).value, _space(dst).value)
            core.run(op, op.pipe.data, adjust(cycles) if adjust else cycles, **rw)
            return ()
        cacheable = op.cache is None or op.cache.data != CachePolicy.NONE_CACHEABLE
        offs, gext = (so, sext) if gm is src else (do, vext)
        if gm is dst:
            self.machine.count_writes(gm, do, vext)
        self._gm_copy(core, op, op.pipe.data, gm, offs, gext, gm is dst, cacheable, adjust, **rw)
        return ()

    def _gm_copy(self, core: Core, op: Operation, pipe: Pipe, gm: GmTensor, offs, ext, write: bool, cacheable: bool,
                 adjust, reads, writes, nbytes: int) -> None:
        """Charge a copy with a GM end: L2 sees its lines now, and the shared HBM is
        booked from when the copy really starts (after its pipe, flag and data waits)."""
        m = self.machine
        if m.scheduler:
            m.scheduler.yield_now()
        hits, misses, evicted = m.gm_access(gm, offs, ext, write, cacheable)
        t = core.begin(pipe, reads, writes)
        fixed = m.cost.dma_fixed(to_gm=write)
        cycles = m.cost.gm_transfer(t + fixed, hits, misses, write, cacheable, m.hbm_time, evicted)
        if adjust is not None:
            cycles = adjust(cycles)
        core.commit(op, pipe, t, fixed + cycles, m.cost.gm_latency(misses), reads, writes, nbytes)

    @impl(npu.FixpipeOp)
    def run_fixpipe(self, interpreter: Interpreter, op: npu.FixpipeOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        m = self.machine
        src, dst, so, do, rows, ext = self.ends(op, args)
        valid = ext[0] if rows is None else max(0, min(rows, ext[0]))
        vext = (valid, *ext[1:])
        acc = _tile(op, src, so, vext, "source")
        out = _tile(op, dst, do, vext, "destination")
        s_el, d_el = nx.NAMES[acc.dtype], nx.NAMES[out.dtype]
        val: np.ndarray = acc
        if op.deq is not None:
            val, s_el = nx.f32(acc) * np.float32(op.deq.value.data), "f32"
        mode = op.round.data if op.round is not None else RoundMode.RINT
        if op.atomic_add is not None:
            out[...] = nx.cast(nx.f32(out) + nx.f32(val), "f32", d_el, mode) if d_el != "f32" else out + nx.f32(val)
        elif s_el != d_el:
            out[...] = nx.cast(val, s_el, d_el, mode)
        else:
            out[...] = val
        rw = dict(reads=[_key(src)], writes=[_key(dst)], nbytes=out.nbytes)
        if isinstance(dst, GmTensor):
            atomic = op.atomic_add is not None
            if not atomic:  # atomic adds accumulate: not counted as writes
                m.count_writes(dst, do, vext)
            self._gm_copy(core, op, Pipe.FIXPIPE, dst, do, vext, True, True, m.cost.atomic_add if atomic else None,
                          **rw)
        else:
            core.run(op, Pipe.FIXPIPE, m.cost.onchip_dma(out.nbytes, "l0c", _space(dst).value), **rw)
        return ()

    # -- cube ----------------------------------------------------------------------------

    @impl(npu.MmadOp)
    def run_mmad(self, interpreter: Interpreter, op: npu.MmadOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        a, b, c = args[0], args[1], args[2]
        rest = iter(args[3:])
        rows = int(next(rest)) if op.rows is not None else None
        accumulate = bool(next(rest)) if op.accumulate is not None else False
        prod = nx.matmul(a.array, b.array)
        if accumulate:
            c.array[...] = (c.array.astype(np.int64) + prod).astype(np.int32) if prod.dtype == np.int32 \
                else c.array + prod
        else:
            c.array[...] = prod
        mm, k = a.array.shape
        cycles = self.machine.cost.mmad(mm, k, b.array.shape[1], nx.NAMES[a.array.dtype], rows)
        core.run(op, Pipe.CUBE, cycles, reads=[a.key, b.key, *([c.key] if accumulate else [])], writes=[c.key])
        return ()

    # -- vector --------------------------------------------------------------------------

    def _vector(self, interpreter: Interpreter, op: Operation, srcs: list[Buf], dst: Buf, value) -> None:
        core = self._need_core(interpreter, op)
        dst.array[...] = value
        nbytes = max(b.array.nbytes for b in (*srcs, dst))
        cycles = self.machine.cost.vector(op.name.split(".")[1], nbytes)
        core.run(op, Pipe.VECTOR, cycles, reads=[b.key for b in srcs], writes=[dst.key], nbytes=nbytes)

    @staticmethod
    def _calc(b: Buf) -> np.ndarray:
        return b.array.astype(np.int64) if b.array.dtype.kind == "i" else nx.f32(b.array)

    def _binary(self, interpreter, op, args, fn):
        lhs, rhs, dst = args
        self._vector(interpreter, op, [lhs, rhs], dst, fn(self._calc(lhs), self._calc(rhs)).astype(dst.array.dtype))
        return ()

    @impl(npu.VAddOp)
    def run_vadd(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.add)

    @impl(npu.VSubOp)
    def run_vsub(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.subtract)

    @impl(npu.VMulOp)
    def run_vmul(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.multiply)

    @impl(npu.VDivOp)
    def run_vdiv(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.divide)

    @impl(npu.VMaxOp)
    def run_vmax(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.maximum)

    @impl(npu.VMinOp)
    def run_vmin(self, interpreter, op, args):
        return self._binary(interpreter, op, args, np.minimum)

    def _unary(self, interpreter, op, args, name):
        src, dst = args
        self._vector(interpreter, op, [src], dst, nx.unary(name, src.array).astype(dst.array.dtype))
        return ()

    @impl(npu.VSqrtOp)
    def run_vsqrt(self, interpreter, op, args):
        return self._unary(interpreter, op, args, "sqrt")

    @impl(npu.VRsqrtOp)
    def run_vrsqrt(self, interpreter, op, args):
        return self._unary(interpreter, op, args, "rsqrt")

    @impl(npu.VAbsOp)
    def run_vabs(self, interpreter, op, args):
        return self._unary(interpreter, op, args, "abs")

    @impl(npu.VExpOp)
    def run_vexp(self, interpreter, op, args):
        return self._unary(interpreter, op, args, "exp")

    def _scalar(self, interpreter, op, args, fn):
        src, dst = args
        s = np.float32(op.scalar.value.data)
        self._vector(interpreter, op, [src], dst, fn(nx.f32(src.array), s).astype(dst.array.dtype))
        return ()

    @impl(npu.VMulsOp)
    def run_vmuls(self, interpreter, op, args):
        return self._scalar(interpreter, op, args, np.multiply)

    @impl(npu.VAddsOp)
    def run_vadds(self, interpreter, op, args):
        return self._scalar(interpreter, op, args, np.add)

    @impl(npu.VMaxsOp)
    def run_vmaxs(self, interpreter, op, args):
        return self._scalar(interpreter, op, args, np.maximum)

    @impl(npu.VMinsOp)
    def run_vmins(self, interpreter, op, args):
        return self._scalar(interpreter, op, args, np.minimum)

    @impl(npu.VDupOp)
    def run_vdup(self, interpreter, op: npu.VDupOp, args):
        (dst,) = args
        self._vector(interpreter, op, [], dst, np.float32(op.scalar.value.data))
        return ()

    @impl(npu.VReduceOp)
    def run_vreduce(self, interpreter, op: npu.VReduceOp, args):
        src, dst = args
        self._vector(interpreter, op, [src], dst, nx.reduce(src.array, op.kind.data).astype(dst.array.dtype))
        return ()

    @impl(npu.VCastOp)
    def run_vcast(self, interpreter, op: npu.VCastOp, args):
        src, dst = args
        s, d = nx.NAMES[src.array.dtype], nx.NAMES[dst.array.dtype]
        self._vector(interpreter, op, [src], dst, nx.cast(src.array, s, d, op.round.data, op.sat is not None))
        return ()

    @impl(npu.VCopyOp)
    def run_vcopy(self, interpreter, op: npu.VCopyOp, args):
        src, dst = args
        core = self._need_core(interpreter, op)
        sc, dc, w = op.src_col.value.data, op.dst_col.value.data, op.width.value.data
        part = src.array[..., sc:sc + w]
        dst.array[..., dc:dc + w] = part
        nbytes = part.nbytes
        cycles = self.machine.cost.vector("vcopy", nbytes)
        core.run(op, Pipe.VECTOR, cycles, reads=[src.key], writes=[dst.key], nbytes=nbytes)
        return ()

    # -- synchronisation ---------------------------------------------------------------

    @impl(npu.SetFlagOp)
    def run_set_flag(self, interpreter, op: npu.SetFlagOp, args):
        self._need_core(interpreter, op).set_flag(op.src_pipe.data, op.dst_pipe.data, op.event.value.data)
        return ()

    @impl(npu.WaitFlagOp)
    def run_wait_flag(self, interpreter, op: npu.WaitFlagOp, args):
        self._need_core(interpreter, op).wait_flag(op, op.src_pipe.data, op.dst_pipe.data, op.event.value.data)
        return ()

    @impl(npu.BarrierOp)
    def run_barrier(self, interpreter, op: npu.BarrierOp, args):
        self._need_core(interpreter, op).barrier(op.pipe.data)
        return ()

    @impl(npu.CrossCoreSetOp)
    def run_cross_core_set(self, interpreter, op: npu.CrossCoreSetOp, args):
        core = self._need_core(interpreter, op)
        self.machine.cross.setdefault(op.flag.value.data, []).append(core.end())
        if self.machine.scheduler:
            self.machine.scheduler.yield_now()
        return ()

    @impl(npu.CrossCoreWaitOp)
    def run_cross_core_wait(self, interpreter, op: npu.CrossCoreWaitOp, args):
        core = self._need_core(interpreter, op)
        flag, count = op.flag.value.data, int(args[0])
        if count <= 0:
            return ()
        sets = self.machine.cross.setdefault(flag, [])
        sched = self.machine.scheduler
        if sched is not None:
            sched.block_until(lambda: len(sets) >= count, f"cross-core flag {flag} ({count} sets)")
        elif len(sets) < count:
            raise MachineError(op, f"cross-core flag {flag} has {len(sets)} of {count} sets")
        core.issue = max(core.issue, sorted(sets)[count - 1])
        return ()
