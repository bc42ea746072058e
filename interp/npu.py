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

from collections.abc import Callable, Sequence
from functools import partial

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation, Region, SSAValue

from pto.dialects import npu
from pto.dialects.npu import BufferType, Space
from pto.interp import compiled
from pto.interp import npu_ops as ops
from pto.interp.graph import Group, TaskGraph
from pto.interp.machine import Core, Machine, MachineError
from pto.interp.npu_ops import Buf, CopySpec
from pto.interp.scheduler import Scheduler

__all__ = ["Buf", "CoreInterpreter", "NpuFunctions"]

# The model keeps a record per task; past this many tasks in one graph a run is refused
# rather than left to exhaust memory (a loop bound far beyond its tensor, say).
MAX_TASKS = 1 << 24

# The interpreter functions of a kernel's interpreter, each with its `override` flag: a
# core's interpreter registers the same ones.
Functions = Sequence[tuple[InterpreterFunctions, bool]]
FreeValues = Callable[[Region], tuple[SSAValue, ...]]


class _ScalarIssue(Interpreter.Listener):
    """Charges each scalar op (index arithmetic, loop control) its issue cycles on the
    core, before it runs."""

    def __init__(self, core: Core):
        self.core = core

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if op.name.startswith(ops.SCALAR_OPS):
            self.core.scalar()


def free_values(region: Region) -> tuple[SSAValue, ...]:
    """The values `region` uses that are defined outside it, in order of first use."""
    body = list(region.walk())
    inner: set[SSAValue] = {a for b in region.blocks for a in b.args}
    for op in body:
        inner.update(op.results)
        inner.update(a for r in op.regions for b in r.blocks for a in b.args)
    return tuple(dict.fromkeys(v for op in body for v in op.operands if v not in inner))


class CoreInterpreter(Interpreter):
    """The interpreter of one core's program: xDSL's, with the functions of the kernel's
    interpreter, a listener that charges scalar ops, and the values a program takes from
    the kernel's scope (the launch's or the graph's block) copied in as it starts."""

    def __init__(self, outer: Interpreter, functions: Functions, core: Core, free: FreeValues):
        super().__init__(outer.module, listeners=(_ScalarIssue(core),))
        for fns, override in functions:
            self.register_implementations(fns, override=override)
        self.outer, self.core, self.free = outer, core, free
        self.depth = 0
        self.set_data(NpuFunctions, "core", core)

    def run_core(self, region: Region, index: int) -> None:
        """A launch's program on core `index` of its kind."""
        self.run_ssacfg_region(region, (index,), self.core.name)

    def run_ssacfg_region(self, region: Region, args: PythonValues, name: str = "unknown") -> PythonValues:
        if self.depth == 0:  # a program (not a loop body in one): it starts from the kernel's values
            free = self.free(region)
            self.set_values(zip(free, self.outer.get_values(free), strict=True))
        self.depth += 1
        try:
            return super().run_ssacfg_region(region, args, name)
        finally:
            self.depth -= 1


class NpuFunctions(InterpreterFunctions):
    def __init__(self, machine: Machine, engine: str = "interp", functions: Functions = ()):
        self.machine = machine
        self.functions: Functions = [*functions, (self, False)]
        self._free: dict[Region, tuple[SSAValue, ...]] = {}
        self.engine = engine  # "interp": a CoreInterpreter per core; "compiled": `pto.interp.compiled`
        self._programs: compiled.Programs | None = None
        self._ends: dict[Operation, CopySpec] = {}
        self._allocs: dict[Operation, ops.AllocSpec] = {}
        self._kernels: dict[Operation, tuple[str, ops.Compute]] = {}
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

    # -- allocation and views ----------------------------------------------------------

    @impl(npu.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: npu.AllocOp, args: PythonValues):
        t = op.result.type
        assert isinstance(t, BufferType)
        if t.mem == Space.GM:
            return (ops.gm_alloc(self.machine, op, args),)
        core = self._need_core(interpreter, op)
        if op not in self._allocs:  # allocs in task loops run again and again: decode the type once
            spec = ops.AllocSpec.of(op)
            ops.check_capacity(self.machine, core, op, spec)
            self._allocs[op] = spec
        return (ops.alloc(core, self._allocs[op]),)

    @impl(npu.DimOp)
    def run_dim(self, interpreter: Interpreter, op: npu.DimOp, args: PythonValues):
        return (ops.dim(op, args[0]),)

    @impl(npu.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: npu.ReshapeOp, args: PythonValues):
        return (ops.reshape(op, args[0]),)

    @impl(npu.ViewOp)
    def run_view(self, interpreter: Interpreter, op: npu.ViewOp, args: PythonValues):
        return (ops.view(op, args[0]),)

    # -- launch ------------------------------------------------------------------------

    @impl(npu.LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: npu.LaunchOp, args: PythonValues):
        self._on_host(op)
        regions = (("cube", op.cube_cores.value.data, op.cube), ("vector", op.vector_cores.value.data, op.vector))
        if self.engine == "compiled":
            compiled.run_launch(self.machine, self._compiled(interpreter), regions)
            return ()
        m = self.machine
        sched = Scheduler()
        cores: list[Core] = []
        for kind, count, region in regions:
            for i in range(count):
                core = m.new_core(kind, i)
                cores.append(core)
                child = self._core_interpreter(interpreter, core)
                sched.add(core.name, partial(child.run_core, region, i), partial(_clock, core))
        m.scheduler = sched
        sched.run_all()
        m.scheduler = None
        m.finish_launch(cores)
        return ()

    def _on_host(self, op: npu.LaunchOp | npu.GraphOp) -> None:
        """Cores run while a scheduler is set: an op that starts cores is not one of theirs
        (the verifier says so too; IR built in Python may not have been verified)."""
        if self.machine.scheduler is not None:
            raise MachineError(op, npu.host_only(op))

    def _core_interpreter(self, interpreter: Interpreter, core: Core) -> CoreInterpreter:
        return CoreInterpreter(interpreter, self.functions, core, self.free_values)

    def free_values(self, region: Region) -> tuple[SSAValue, ...]:
        if region not in self._free:  # once per program and run
            self._free[region] = free_values(region)
        return self._free[region]

    def _compiled(self, interpreter: Interpreter) -> compiled.Programs:
        if self._programs is None:  # on first use; each region compiles once (`Programs.get`)
            self._programs = compiled.Programs(interpreter)
        return self._programs

    @impl(npu.GraphOp)
    def run_graph(self, interpreter: Interpreter, op: npu.GraphOp, args: PythonValues):
        """Run the graph's block here (its `npu.tasks` only register groups), then its
        tasks on the cores; the tasks see the block's values."""
        self._on_host(op)
        if self._groups is not None:
            raise MachineError(op, "'npu.graph' cannot nest")
        self._groups, self._loops = [], {}
        interpreter.push_scope("npu.graph")
        try:
            for o in op.body.block.ops:
                results = interpreter.run_op(o, interpreter.get_values(o.operands))
                interpreter.set_values(zip(o.results, results, strict=True))
            groups, self._groups = self._groups, None
            stitch = op.stitch.value.data if op.stitch is not None else None
            graph = TaskGraph(self.machine, groups, stitch)
            cube, vector = op.cube_cores.value.data, op.vector_cores.value.data
            if self.engine == "compiled":
                compiled.run_graph(self.machine, self._compiled(interpreter), graph, cube, vector)
            else:
                graph.run(cube, vector, partial(self._core_interpreter, interpreter))
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
            raise MachineError(
                op,
                f"'npu.tasks' \"{op.label.data}\" has {bodies} loop bodies: its token loop's "
                "lower bound is above its upper bound",
            )
        if bodies * op.per_body.value.data > MAX_TASKS:
            raise MachineError(
                op,
                f"'npu.tasks' \"{op.label.data}\" would run {bodies} x {op.per_body.value.data} "
                f"tasks, over the model's limit of {MAX_TASKS}",
            )
        loop = self._loops.setdefault(op.bodies, len(self._loops))  # groups of one loop share its bodies value
        self._groups.append(
            Group(
                len(self._groups),
                op.label.data,
                op.kind.data,
                bodies,
                op.per_body.value.data,
                op.deps(),
                op.body,
                loop,
                op.hub is not None,
                tuple(op.succ_counts() or ()),
                tuple(a.value.data for a in op.hub_order.data) if op.hub_order is not None else (),
                tuple(map(tuple, op.needs_lists() or ())),
            )
        )
        return ()

    # -- data movement -------------------------------------------------------------------

    def _spec(self, op: npu.DmaOp | npu.FixpipeOp) -> CopySpec:
        if op not in self._ends:
            self._ends[op] = CopySpec.of(op)
        return self._ends[op]

    def _gm_copy(self, core: Core, c: ops.GmCopy | None) -> None:
        """Let the cores behind this one in model time run first, then time the copy."""
        if c is None:
            return
        if self.machine.scheduler:
            self.machine.scheduler.yield_now()
        ops.gm_copy(self.machine, core, c)

    @impl(npu.DmaOp)
    def run_dma(self, interpreter: Interpreter, op: npu.DmaOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        self._gm_copy(core, ops.dma(self.machine, core, op, self._spec(op), *self._spec(op).split(args)))
        return ()

    @impl(npu.FixpipeOp)
    def run_fixpipe(self, interpreter: Interpreter, op: npu.FixpipeOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        self._gm_copy(core, ops.fixpipe(self.machine, core, op, self._spec(op), *self._spec(op).split(args)))
        return ()

    # -- cube ----------------------------------------------------------------------------

    @impl(npu.MmadOp)
    def run_mmad(self, interpreter: Interpreter, op: npu.MmadOp, args: PythonValues):
        core = self._need_core(interpreter, op)
        rest = iter(args[3:])
        rows = int(next(rest)) if op.rows is not None else None
        accumulate = bool(next(rest)) if op.accumulate is not None else False
        ops.mmad(self.machine, core, op, args[0], args[1], args[2], rows, accumulate)
        return ()

    # -- vector --------------------------------------------------------------------------

    def run_vector(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        """Every op of `ops.VECTOR_OPS`: sources, then the destination."""
        core = self._need_core(interpreter, op)
        if op not in self._kernels:
            self._kernels[op] = ops.vector_kernel(op)
        name, compute = self._kernels[op]
        ops.vector(self.machine, core, op, name, compute, args[:-1], args[-1])
        return ()

    @impl(npu.VCopyOp)
    def run_vcopy(self, interpreter, op: npu.VCopyOp, args):
        ops.vcopy(self.machine, self._need_core(interpreter, op), op, *args)
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
        ops.cross_set(self.machine, self._need_core(interpreter, op), op.flag.value.data)
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
        assert sched is not None  # a core runs under its launch's or graph's (they cannot nest)
        sched.block_until(lambda: len(sets) >= count, f"cross-core flag {flag} ({count} sets)")
        ops.cross_wait_time(self.machine, core, flag, count)
        return ()


def _clock(core: Core) -> float:
    return core.clock


for _t in ops.VECTOR_OPS:  # one implementation serves every vector op
    setattr(NpuFunctions, f"run_{_t.name.split('.')[1]}", impl(_t)(NpuFunctions.run_vector))
register_impls(NpuFunctions)
