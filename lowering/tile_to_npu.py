"""`tile-to-npu`: buffers, DMA, cube and vector programs for each token loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
    UnitAttr,
    UnknownLoc,
    f16,
    f32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError, warn
from pto.dialects import npu, tile
from pto.dialects.npu import MMAD_OUT, BufferType, Pipe, Space
from pto.dialects.pto import ReduceKind, RoundMode, elem_name
from pto.lowering import tile_to_npu_columns as columns
from pto.lowering.npu_build import c, sync, unsupported
from pto.targets import Target, target_of

idx = IndexType()


def gm_type(t: Attribute) -> BufferType:
    assert isinstance(t, TensorType)
    return BufferType(list(t.get_shape()), t.element_type, Space.GM)


@dataclass
class UB:
    """UB buffers of one vector phase: bump allocation, plus holes that a task copy frees
    when a value is dead (first fit), so one copy reuses its own space. `offset` is the
    high-water mark. Freed space is reused only by later vector ops of the same copy:
    they run in order on the VECTOR pipe after every load of the task."""

    target: Target
    offset: int = 0
    bufs: dict[SSAValue, SSAValue] = field(default_factory=dict)
    holes: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes), sorted
    sizes: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)

    def alloc(self, shape: list[int], elem: Attribute, loc) -> SSAValue:
        t = BufferType(shape, elem, Space.UB)
        block = self.target.block_bytes
        size = (t.nbytes() + block - 1) // block * block
        at = next((i for i, (_, n) in enumerate(self.holes) if n >= size), None)
        if at is None:
            off = self.offset
            self.offset += size
        else:
            off, n = self.holes.pop(at)
            if n > size:
                self.holes.insert(at, (off + size, n - size))
        op = npu.AllocOp(t, off)
        op.location = loc
        self.sizes[op.result] = (off, size)
        return op.result

    def free(self, buf: SSAValue) -> None:
        off, size = self.sizes.pop(buf)
        self.holes.append((off, size))
        self.holes.sort()
        merged: list[tuple[int, int]] = []
        for o, n in self.holes:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((o, n))
        self.holes = merged

    def new_copy(self) -> None:
        """A task copy of its own: no value, no reuse of another copy's space."""
        self.bufs, self.holes, self.sizes = {}, [], {}


@dataclass(frozen=True)
class TileToNpuPass(ModulePass):
    """Lower each token loop to one `npu.launch` of a cube and a vector program.

    Tensors become GM buffers. The vector stages before the cube stage form the vector
    program's first phase, those after it the second: each phase is a grid of tasks of
    one vector tile (r whole rows) spread over the vector cores, its ops fused in UB
    (one buffer per value, block-aligned), its inputs and outputs moved by MTE2/MTE3
    with the pipes ordered by flags. Values crossing phases go through GM workspaces.
    The cube stage is a grid of (mL1-row, nL1-column) tasks over the cube cores, each
    streaming K through L1 (kL1) and L0A/L0B (kL0) into an L0C accumulator and moving
    it out through the fixpipe (with the stage's cast). Cross-core flags order the
    phases: the cube waits for every first-phase task, the second phase for every cube
    task.

    Vector stages with `nbuffer` N run N tasks per core iteration in N UB copies; cube
    stages with `l1_reuse [a, w]` stream K with a activation and w weight copies in L1
    (their L0 buffers stay single: the cube `nbuffer` is not modelled yet).
    A `host_transpose` weight becomes an argument passed [K, N] (`npu.host_transpose`),
    an in-place reshape of a loaded tensor a GM view (`npu.reshape`).
    Split-K (one f32 result): K is cut into up to 4 runs, one per task; the first run's
    task writes its tile, the others wait for all first-run tasks and add (atomic_add).
    Not supported yet (rejected): split-K into other results, mL0 < mL1 or nL0 < nL1, N
    or K not a multiple of its L1 tile, a_trans, reshapes of computed values, rank-3 tiles. Vector tiles
    narrower than a row are processed as whole rows (with a warning).
    """

    name = "tile-to-npu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and any(isinstance(o, tile.TokenLoopOp) for o in f.walk()):
                Lowering(f, target_of(f)).run()


class Lowering:
    def __init__(self, f: func.FuncOp, target: Target):
        self.f, self.target = f, target
        self.gm: dict[SSAValue, SSAValue] = {}  # tile-level tensor value -> GM buffer
        self.flag = 0
        self.views: set[Operation] = set()
        self.plan: columns.Plan | None = None  # column tiling of the phase being lowered

    def run(self) -> None:
        f = self.f
        old = f.body.block
        # A weight the host transposes once (tile.load host_transpose) is passed [K, N].
        host_t = {o.source for o in f.walk() if isinstance(o, tile.LoadOp) and o.host_transpose is not None}
        for v in host_t:
            if not isinstance(v, BlockArgument):
                raise unsupported(v.owner, "host-transposing a computed value")  # type: ignore[arg-type]
        types = [gm_type(TensorType(a.type.element_type, list(reversed(a.type.get_shape())))) if a in host_t  # type: ignore[union-attr]
                 else gm_type(a.type) for a in old.args]
        new = Block(arg_types=types)
        if host_t:
            attrs = list(f.arg_attrs.data) if f.arg_attrs is not None else [DictionaryAttr({})] * len(old.args)
            for a in host_t:
                attrs[a.index] = DictionaryAttr({**attrs[a.index].data, "npu.host_transpose": UnitAttr()})  # type: ignore[union-attr]
            f.arg_attrs = ArrayAttr(attrs)
        for a, b in zip(old.args, new.args, strict=True):
            b.name_hint = a.name_hint
            self.gm[a] = b
        self.tokens: SSAValue | None = None
        with ImplicitBuilder(new):
            for op in list(old.ops):
                if isinstance(op, tile.TokenLoopOp):
                    self.loop(op)
                elif isinstance(op, tensor.DimOp):
                    d = npu.DimOp(self.gm[op.source], 0)
                    d.result.name_hint = op.result.name_hint
                    self.gm[op.result] = d.result
                    self.tokens = d.result
                elif isinstance(op, func.ReturnOp):
                    func.ReturnOp()
                else:
                    cl = op.clone(value_mapper=self.gm)  # the builder inserts it
                    for r, nr in zip(op.results, cl.results, strict=True):
                        self.gm[r] = nr
        f.body.detach_block(old)
        f.body.add_block(new)
        f.function_type = func.FunctionType.from_lists([a.type for a in new.args], [])

    def token_count(self, loop: tile.TokenLoopOp) -> SSAValue:
        """The token count (for sizing GM workspaces): from the kernel's tensor.dim, else
        the dim 0 of its first dynamic argument."""
        if self.tokens is None:
            arg = next((a for a in self.f.body.block.args if isinstance(a.type, TensorType)
                        and a.type.get_shape()[0] == DYNAMIC_INDEX), None)
            if arg is None:
                raise DiagnosticError(loop, "tile-to-npu needs a token axis: an argument with a dynamic dim 0")
            self.tokens = npu.DimOp(self.gm[arg], 0).result
            self.tokens.name_hint = "tokens"
        return self.tokens

    # ---------------------------------------------------------------- one loop

    def loop(self, loop: tile.TokenLoopOp) -> None:
        lb, ub = self.gm[loop.lower], self.gm[loop.upper]
        body = loop.body.block
        cube = next(o for o in body.ops if isinstance(o, tile.CubeStageOp))
        stages = [o for o in body.ops if isinstance(o, tile.StageBase)]
        pre = stages[: stages.index(cube)]
        post = [s for s in stages[stages.index(cube) + 1:]]
        loads = {o.result: o for o in body.ops if isinstance(o, tile.LoadOp)}
        for ld in loads.values():
            self.gm[ld.result] = self.gm[ld.source]
        # An in-place reshape of a loaded tensor is a view of its GM buffer.
        self.views = set()
        for st in stages:
            for o in st.body.block.ops:
                if isinstance(o, tile.ReshapeOp) and o.input in loads:
                    t = o.result.type
                    assert isinstance(t, TensorType)
                    src = self.gm[o.input]
                    shape = [DYNAMIC_INDEX, *t.get_shape()[1:]] if DYNAMIC_INDEX in src.type.get_shape() else list(t.get_shape())  # type: ignore[union-attr]
                    view = npu.ReshapeOp(src, BufferType(shape, t.element_type, Space.GM))
                    view.location = o.location
                    self.gm[o.result] = view.result
                    self.views.add(o)
        stores: dict[SSAValue, list[SSAValue]] = {}
        for st in (o for o in body.ops if isinstance(o, tile.StoreOp)):
            stores.setdefault(st.value, []).append(self.gm[st.dest])
        # GM destinations of every stage result: the outputs it is stored to, and a
        # workspace if another stage reads it.
        dests: dict[SSAValue, list[SSAValue]] = {}
        for st in stages:
            for r in st.results:
                dests[r] = list(stores.get(r, []))
                if any(not isinstance(u.operation, tile.StoreOp) for u in r.uses):
                    tokens = self.token_count(loop)
                    t = r.type
                    assert isinstance(t, TensorType)
                    ws = npu.AllocOp(BufferType([DYNAMIC_INDEX, *t.get_shape()[1:]], t.element_type, Space.GM), None, [tokens])
                    ws.location = st.location
                    ws.result.name_hint = "ws"
                    self.gm[r] = ws.result
                    dests[r].append(ws.result)
                elif dests[r]:
                    self.gm[r] = dests[r][0]
        pre_flag, cube_flag = self.flag, self.flag + 1
        self.flag += 2
        cube_region = Region(Block(arg_types=[idx]))
        vec_region = Region(Block(arg_types=[idx]))
        with ImplicitBuilder(vec_region.block):
            core = vec_region.block.args[0]
            core.name_hint = "v"
            pre_rows = self.vector_phase(pre, loop, core, lb, ub, dests, pre_flag) if pre else None
            if post:
                n_cube = self.cube_tasks(cube, lb, ub)
                npu.CrossCoreWaitOp(cube_flag, n_cube)
                self.vector_phase(post, loop, core, lb, ub, dests, None)
        with ImplicitBuilder(cube_region.block):
            core = cube_region.block.args[0]
            core.name_hint = "core"
            if pre_rows is not None:
                npu.CrossCoreWaitOp(pre_flag, self.vector_tasks(pre_rows, lb, ub))
            self.cube_stage(cube, core, lb, ub, dests, cube_flag)
        launch = npu.LaunchOp(self.target.cube_cores, cube_region, self.target.vector_cores if pre or post else 0,
                              vec_region if pre or post else Region())
        # Generated ops take the loop's location, so an error in them points at the source.
        for o in launch.walk():
            if isinstance(o.location, UnknownLoc):
                o.location = loop.location

    # ------------------------------------------------------------- vector side

    def vec_rows(self, stages: list[tile.StageBase], loop: tile.TokenLoopOp) -> int:
        rows = loop.rows
        for st in stages:
            assert isinstance(st, tile.VecStageOp)
            if st.vec_tile is not None:
                rows = min(rows, st.vec_tile.get_values()[0])  # type: ignore[type-var]
        return rows

    def column_plan(self, stages: list[tile.StageBase]) -> columns.Plan | None:
        """Column tiling when a stage's vector tile is narrower than its rows."""
        narrow = []
        for st in stages:
            assert isinstance(st, tile.VecStageOp)
            if st.vec_tile is not None:
                vt = st.vec_tile.get_values()
                data = next(o for o in st.body.block.ops if o not in self.views)
                cols = data.operands[0].type.get_shape()[-1]  # type: ignore[union-attr]
                if vt[-1] < cols:
                    narrow.append((st, list(vt), cols))
        if not narrow:
            return None
        st, vt, cols = narrow[0]
        p = columns.plan(stages, self.views, cols, min(int(v[1][-1]) for v in narrow))
        if isinstance(p, str):
            warn(st, f"vector tile {vt} is narrower than the {cols}-column row but the phase is not "
                     f"column-tiled ({p}): tile-to-npu processes whole rows")
            return None
        return p

    def vector_phase(self, stages, loop, core, lb, ub, dests, flag) -> int:
        """Emit the phase's task loop; returns the rows per task.

        With `nbuffer` N (the largest of the phase's stages) each core takes N tasks per
        iteration, each with its own UB copy and its own event ids, so one task's DMA
        overlaps another's vector work (ping-pong for N = 2). The phase's stages are fused
        in UB, which can need more than each stage alone: if all copies do not fit, the
        phase is column-tiled (when it can be) to keep its rows, else its rows are halved."""
        nbuf = max((st.nbuffer.value.data for st in stages if st.nbuffer is not None), default=1)
        if nbuf > 4:
            raise unsupported(stages[0], f"nbuffer {nbuf} (at most 4: two event ids per copy)")
        cores = self.target.vector_cores
        chosen = self.vec_rows(stages, loop)
        pinned = self.column_plan(stages)
        cap = self.target.capacity("ub")
        for r, self.plan in self.phase_shapes(stages, chosen, pinned):
            body = Block(arg_types=[idx])
            ub_alloc = UB(self.target)
            with ImplicitBuilder(body):
                ntasks_in = self.vector_tasks(r, lb, ub)
                for j in range(nbuf):
                    task = body.args[0] if j == 0 else arith.AddiOp(body.args[0], c(j * cores)).result
                    if j == 0:
                        self.vector_copy(stages, r, task, lb, ub, ub_alloc, dests, flag, 0)
                        continue
                    guard = Block()
                    with ImplicitBuilder(guard):
                        self.vector_copy(stages, r, task, lb, ub, ub_alloc, dests, flag, 2 * j)
                        scf.YieldOp()
                    scf.IfOp(arith.CmpiOp(task, ntasks_in, "ult").result, [], Region(guard))
                scf.YieldOp()
            if ub_alloc.offset <= cap or r == 1:
                break  # at one row an overflow is reported by the npu.alloc verifier
            body.drop_all_references()
            body.erase(safe_erase=False)
        if r < chosen:
            # tile-assign-shapes sized each stage alone; fused with its copies the phase needs more.
            warn(stages[0], f"vector tile rows {chosen} -> {r}: the fused phase ({len(stages)} stage(s), "
                            f"{nbuf} cop{'y' if nbuf == 1 else 'ies'}) does not fit in UB with more")
        ntasks = self.vector_tasks(r, lb, ub)
        scf.ForOp(core, ntasks, c(cores * nbuf), [], Region(body))
        return r

    def phase_shapes(self, stages, rows: int, pinned: columns.Plan | None):
        """The (rows, column plan) to try for a fused phase, best first: the chosen rows
        (column-tiled as pinned); if nothing is pinned, the chosen rows column-tiled in
        halving chunk widths (when the phase allows it); then halving rows."""
        yield rows, pinned
        if pinned is None:
            widths = [v.type.get_shape()[-1] for st in stages for o in st.body.block.ops  # type: ignore[union-attr]
                      if o not in self.views and not isinstance(o, tile.YieldOp) for v in o.results]
            k = max(widths, default=1)
            cw = k // 2
            while cw >= 64 and k % cw == 0:
                p = columns.plan(stages, self.views, k, cw)
                if isinstance(p, columns.Plan):
                    yield rows, p
                cw //= 2
        while rows > 1:
            rows //= 2
            yield rows, pinned

    def vector_copy(self, stages, r, task, lb, ub, ub_alloc: UB, dests, flag, event: int) -> None:
        row = arith.AddiOp(lb, arith.MuliOp(task, c(r))).result
        row.name_hint = "row"
        valid = arith.MinUIOp(arith.SubiOp(ub, row), c(r)).result
        valid.name_hint = "rows"
        ub_alloc.new_copy()
        if self.plan is not None:
            columns.task(self, self.plan, r, row, valid, ub_alloc, dests, event)
        else:
            self.vector_task(stages, r, row, valid, ub_alloc, dests, event)
        if flag is not None:
            npu.CrossCoreSetOp(flag)

    @staticmethod
    def vector_tasks(r: int, lb: SSAValue, ub: SSAValue) -> SSAValue:
        return arith.CeilDivUIOp(arith.SubiOp(ub, lb), c(r)).result

    def vector_task(self, stages, r, row, valid, ub: UB, dests, event: int) -> None:
        inside = {o for st in stages for o in st.body.block.ops} - self.views
        results = [res for st in stages for res in st.results]  # a list: output order must not depend on hashing
        # Inputs: every value the phase reads that it does not compute.
        loaded = False
        for st in stages:
            for op in st.body.block.ops:
                if op in self.views:
                    continue
                for v in op.operands:
                    if v in ub.bufs or (isinstance(v.owner, Operation) and v.owner in inside):
                        continue
                    t = v.type
                    assert isinstance(t, TensorType)
                    src = self.gm[v]
                    token = isinstance(src.type, BufferType) and DYNAMIC_INDEX in src.type.get_shape()
                    shape = [r, *t.get_shape()[1:]] if token else list(t.get_shape())
                    self.check_rank(op, shape)
                    if not token and len(shape) == 2 and shape[1] == 1 and self.wants_row(op, v):
                        buf = ub.alloc([1, shape[0]], t.element_type, op.location)
                        npu.DmaOp(Pipe.MTE2, src, [0, 0], buf, [0, 0], transpose=True)
                    else:
                        buf = ub.alloc(shape, t.element_type, op.location)
                        npu.DmaOp(Pipe.MTE2, src, [row if token else 0] + [0] * (len(shape) - 1), buf,
                                  [0] * len(shape), rows=valid if token else None)
                    ub.bufs[v] = buf
                    loaded = True
        if loaded:
            sync(Pipe.MTE2, Pipe.VECTOR, event)
        # A buffer is freed after the last op that reads it, unless it is a result to store.
        alias = {outer: inner for st in stages for inner, outer in
                 zip(st.body.block.last_op.operands, st.results, strict=True)}  # type: ignore[union-attr]
        ops = [o for st in stages for o in st.body.block.ops if o not in self.views and not isinstance(o, tile.YieldOp)]
        last = {alias.get(v, v): i for i, o in enumerate(ops) for v in o.operands}
        keep = {alias.get(v, v) for v in results if dests.get(v)}
        for st in stages:
            for op in st.body.block.ops:
                if isinstance(op, tile.YieldOp):
                    for inner, outer in zip(op.values, st.results, strict=True):
                        ub.bufs[outer] = ub.bufs[inner]
                    continue
                if op in self.views:
                    continue
                self.vector_op(op, r, ub)
                for v in {alias.get(u, u) for u in op.operands}:
                    if last.get(v) == ops.index(op) and v not in keep and ub.bufs.get(v) in ub.sizes:
                        ub.free(ub.bufs[v])
        sync(Pipe.VECTOR, Pipe.MTE3, event)
        for res in results:
            for dst in dests.get(res, []):
                buf = ub.bufs[res]
                shape = buf.type.get_shape()  # type: ignore[union-attr]
                npu.DmaOp(Pipe.MTE3, buf, [0] * len(shape), dst, [row] + [0] * (len(shape) - 1), rows=valid)
        sync(Pipe.MTE3, Pipe.MTE2, event + 1)

    @staticmethod
    def wants_row(op: Operation, v: SSAValue) -> bool:
        """A [N, 1] weight scale broadcast along rows is loaded transposed as [1, N]."""
        return isinstance(op, tile.DequantOp) and v is op.w_scale

    @staticmethod
    def check_rank(op: Operation, shape: list[int]) -> None:
        if len(shape) > 2:
            raise unsupported(op, "rank-3 tiles")

    def vector_op(self, op: Operation, r: int, ub: UB, chunk: tuple[int, int] | None = None) -> None:
        """Emit one tile op on [r, ...] UB buffers; with `chunk` (K, cw), a value K wide is
        a chunk cw wide (column tiling)."""
        loc = op.location

        def out(v: SSAValue) -> SSAValue:
            t = v.type
            assert isinstance(t, TensorType)
            shape = [r, *t.get_shape()[1:]]
            if chunk is not None and shape[-1] == chunk[0]:
                shape[-1] = chunk[1]
            self.check_rank(op, shape)
            b = ub.alloc(shape, t.element_type, loc)
            ub.bufs[v] = b
            return b

        tmps: list[SSAValue] = []

        def tmp(shape: list[int], elem: Attribute) -> SSAValue:
            tmps.append(ub.alloc(shape, elem, loc))
            return tmps[-1]

        bufs = ub.bufs
        binary = {tile.AddOp: npu.VAddOp, tile.SubOp: npu.VSubOp, tile.MulOp: npu.VMulOp, tile.DivOp: npu.VDivOp}
        unary = {tile.SqrtOp: npu.VSqrtOp, tile.RsqrtOp: npu.VRsqrtOp, tile.AbsOp: npu.VAbsOp}
        scalar = {tile.MulsOp: npu.VMulsOp, tile.AddsOp: npu.VAddsOp}
        if type(op) in binary:
            binary[type(op)](bufs[op.lhs], bufs[op.rhs], out(op.result))
        elif type(op) in unary:
            unary[type(op)](bufs[op.input], out(op.result))
        elif type(op) in scalar:
            scalar[type(op)](bufs[op.input], op.scalar.value.data, out(op.result))
        elif isinstance(op, tile.CastOp):
            npu.VCastOp(bufs[op.input], out(op.result), op.round.data, op.sat is not None)
        elif isinstance(op, tile.ReduceOp):
            dst = out(op.result)
            kind = op.kind.data
            npu.VReduceOp(ReduceKind.SUM if kind == ReduceKind.MEAN else kind, bufs[op.input], dst)
            if kind == ReduceKind.MEAN:
                npu.VMulsOp(dst, 1.0 / op.input.type.get_shape()[-1], dst)  # type: ignore[union-attr]
        elif isinstance(op, tile.RmsNormOp):
            x = bufs[op.input]
            cols = op.input.type.get_shape()[-1]  # type: ignore[union-attr]
            xf = x if elem_name(op.input.type.element_type) == "f32" else tmp([r, cols], f32)  # type: ignore[union-attr]
            if xf is not x:
                npu.VCastOp(x, xf, RoundMode.NONE)
            sq = tmp([r, cols], f32)
            s = tmp([r, 1], f32)
            npu.VMulOp(xf, xf, sq)
            npu.VReduceOp(ReduceKind.SUM, sq, s)
            npu.VMulsOp(s, 1.0 / cols, s)
            npu.VAddsOp(s, op.eps.value.data, s)
            npu.VRsqrtOp(s, s)
            res_f32 = elem_name(op.result.type.element_type) == "f32"  # type: ignore[union-attr]
            y = out(op.result) if res_f32 else tmp([r, cols], f32)
            npu.VMulOp(xf, s, y)
            if op.gamma is not None:
                g = bufs[op.gamma]
                if elem_name(op.gamma.type.element_type) != "f32":  # type: ignore[union-attr]
                    gf = tmp(list(g.type.get_shape()), f32)  # type: ignore[union-attr]
                    npu.VCastOp(g, gf, RoundMode.NONE)
                    g = gf
                npu.VMulOp(y, g, y)
            if not res_f32:
                npu.VCastOp(y, out(op.result), RoundMode.RINT)
        elif isinstance(op, tile.QuantOp):
            x = bufs[op.input]
            cols = op.input.type.get_shape()[-1]  # type: ignore[union-attr]
            amax = tmp([r, 1], f32)
            npu.VReduceOp(ReduceKind.ABSMAX, x, amax)
            npu.VMulsOp(amax, 1.0 / 127.0, out(op.scale))
            # x * 127 / amax in this order, as the golden of SK03.md computes it.
            t = tmp([r, cols], f32)
            npu.VMulsOp(x, 127.0, t)
            npu.VDivOp(t, amax, t)
            # The hardware's chain: f32 -> i32 (rint) -> f16 (round) -> i8 (trunc, saturated).
            i32b = tmp([r, cols], IntegerType(32))
            npu.VCastOp(t, i32b, RoundMode.RINT)
            h = tmp([r, cols], f16)
            npu.VCastOp(i32b, h, RoundMode.ROUND)
            npu.VCastOp(h, out(op.quantized), RoundMode.TRUNC, sat=True)
        elif isinstance(op, tile.DequantOp):
            cols = op.input.type.get_shape()[-1]  # type: ignore[union-attr]
            y = out(op.result)
            if elem_name(op.input.type.element_type) == "i32":  # type: ignore[union-attr]
                npu.VCastOp(bufs[op.input], y, RoundMode.RINT)
            else:
                npu.VMulsOp(bufs[op.input], 1.0, y)
            npu.VMulOp(y, bufs[op.act_scale], y)
            if op.w_scale is not None:
                npu.VMulOp(y, bufs[op.w_scale], y)
        elif isinstance(op, tile.ReshapeOp):
            raise unsupported(op, "reshapes")
        elif isinstance(op, tile.LoadOp):
            raise unsupported(op, "loads inside a stage")
        else:
            raise unsupported(op, f"'{op.name}' in a vector stage")
        for b in tmps:  # temporaries die with the op
            ub.free(b)

    # --------------------------------------------------------------- cube side

    def tiles(self, st: tile.CubeStageOp):
        mm = st.matmul
        if st.tiles is None:
            raise DiagnosticError(st, "tile-to-npu needs cube tile shapes: run tile-assign-shapes first")
        ax = st.tiles.axes
        if mm.a_trans is not None:
            raise unsupported(mm, "a_trans")
        (m0, m1), (n0, n1) = ax["m"], ax["n"]
        k0, k1 = ax["k"][0], ax["k"][-1]
        _, k, _, n = mm.mkn()
        # A tile wider than the data covers just the data.
        n1, k1 = min(n1, n), min(k1, k)
        n0, k0 = min(n0, n1), min(k0, k1)
        if n % n1 or k % k1:
            raise unsupported(st, f"N = {n} or K = {k} not a multiple of its L1 tile ({n1}, {k1})")
        if m1 % m0 or n1 % n0:
            raise unsupported(st, f"L1 tiles ({m1}, {n1}) that are not multiples of the L0 tiles ({m0}, {n0})")
        return m0, m1, n0, n1, k0, k1, k, n

    @staticmethod
    def splits(st: tile.CubeStageOp, k: int, k1: int) -> int:
        """Split-K: K is cut into up to 4 equal runs of whole L1 tiles, one per task."""
        if st.tiles is None or not st.tiles.is_split_k:
            return 1
        chunks = k // k1
        return next(d for d in (4, 3, 2, 1) if chunks % d == 0)

    def cube_tasks(self, st: tile.CubeStageOp, lb, ub) -> SSAValue:
        _, m1, _, n1, _, k1, k, n = self.tiles(st)
        mn = arith.MuliOp(arith.CeilDivUIOp(arith.SubiOp(ub, lb), c(m1)), c(n // n1)).result
        return arith.MuliOp(mn, c(self.splits(st, k, k1))).result

    def cube_stage(self, st: tile.CubeStageOp, core, lb, ub, dests, flag) -> None:
        mm = st.matmul
        m0, m1, n0, n1, k0, k1, k, n = self.tiles(st)
        bm, bn = m1 // m0, n1 // n0  # L0 blocks of the L1 tile
        a_el, b_el = mm.lhs.type.element_type, mm.rhs.type.element_type  # type: ignore[union-attr]
        acc_name = MMAD_OUT[elem_name(a_el)]
        acc_el = f32 if acc_name == "f32" else IntegerType(32)
        out_val = st.results[0]
        cast = next((o for o in st.body.block.ops if isinstance(o, tile.CastOp)), None)
        bt = mm.b_trans is not None
        # L1 copies from l1_reuse [a, w]: the K loop takes a slices per iteration, slice j
        # into activation copy j and weight copy j % w, so one slice loads while another
        # feeds L0 ("set after use, wait before reuse" on MTE1 -> MTE2 events j and 4 + j).
        # L0 copies from nbuffer: K step i of an L1 slice loads into L0A/L0B copy i % nb,
        # so MTE1 fills one copy while the cube multiplies the other (CUBE -> MTE1 event
        # j: set after the mmad that used copy j, waited before refilling it).
        nb = min(st.nbuffer.value.data, 4) if st.nbuffer is not None else 1
        a_cp, w_cp = st.l1_reuse.get_values() if st.l1_reuse is not None else (1, 1)
        copies, w_cp = min(int(a_cp), 4), min(int(w_cp), int(a_cp), 4)
        b_shape = [n1, k1] if bt else [k1, n1]
        a1_bytes = BufferType([m1, k1], a_el, Space.L1).nbytes()
        b1_bytes = BufferType(b_shape, b_el, Space.L1).nbytes()
        a1s = [npu.AllocOp(BufferType([m1, k1], a_el, Space.L1), j * a1_bytes).result for j in range(copies)]
        b1s = [npu.AllocOp(BufferType(b_shape, b_el, Space.L1), copies * a1_bytes + j * b1_bytes).result
               for j in range(w_cp)]
        a0_t, b0_t = BufferType([m0, k0], a_el, Space.L0A), BufferType([k0, n0], b_el, Space.L0B)
        a0s = [npu.AllocOp(a0_t, j * a0_t.nbytes()).result for j in range(nb)]
        b0s = [npu.AllocOp(b0_t, j * b0_t.nbytes()).result for j in range(nb)]
        # With mL0 < mL1 or nL0 < nL1 the L1 tile is bm x bn L0 blocks, each accumulating
        # over all of K in its own L0C buffer.
        acc_t = BufferType([m0, n0], acc_el, Space.L0C)
        if bm * bn * acc_t.nbytes() > self.target.capacity("l0c"):
            raise unsupported(st, f"{bm}x{bn} L0 blocks of {acc_t} accumulating at once: they need "
                                  f"{bm * bn * acc_t.nbytes()} bytes of l0c, which has "
                                  f"{self.target.capacity('l0c')}")
        accs = [[npu.AllocOp(acc_t, (i * bn + j) * acc_t.nbytes()).result for j in range(bn)] for i in range(bm)]
        nsplit = self.splits(st, k, k1)
        if nsplit > 1 and (acc_name != "f32" or cast is not None or len(dests[out_val]) != 1
                           or elem_name(dests[out_val][0].type.element_type) != "f32"):  # type: ignore[union-attr]
            raise unsupported(st, "split-K into anything but one f32 result (partial sums are added in GM)")
        ntasks = self.cube_tasks(st, lb, ub)
        zero_flag = self.flag
        self.flag += 1
        body = Block(arg_types=[idx])
        with ImplicitBuilder(body):
            task = body.args[0]
            ntiles = c(n // n1)
            # Tasks are numbered split-major, so every core finishes its first-split
            # tasks (which write) before any later-split task (which adds) waits for them.
            per = arith.MuliOp(arith.CeilDivUIOp(arith.SubiOp(ub, lb), c(m1)), ntiles).result
            si = arith.DivUIOp(task, per).result
            rest = arith.RemUIOp(task, per).result
            mi = arith.DivUIOp(rest, ntiles).result
            ni = arith.RemUIOp(rest, ntiles).result
            kstart = arith.MuliOp(si, c(k // nsplit)).result
            kend = arith.AddiOp(kstart, c(k // nsplit)).result
            row = arith.AddiOp(lb, arith.MuliOp(mi, c(m1))).result
            row.name_hint = "row"
            col = arith.MuliOp(ni, c(n1)).result
            col.name_hint = "col"
            valid = arith.MinUIOp(arith.SubiOp(ub, row), c(m1)).result
            valid.name_hint = "rows"
            lhs, rhs = self.gm[mm.lhs], self.gm[mm.rhs]
            for j in range(copies):
                npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, j)
            for j in range(w_cp):
                npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, 4 + j)
            for j in range(nb):
                npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, j)

            def l0_step(a1: SSAValue, b1: SSAValue, kk: SSAValue, k_in: SSAValue, j: int) -> None:
                first = arith.AddiOp(arith.SubiOp(kk, kstart), k_in).result
                later = arith.CmpiOp(first, c(0), "ne").result
                for bi in range(bm):
                    for bj in range(bn):  # the A block stays in L0A while the B blocks pass
                        npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, j)
                        if bj == 0:
                            npu.DmaOp(Pipe.MTE1, a1, [bi * m0, k_in], a0s[j], [0, 0])
                        npu.DmaOp(Pipe.MTE1, b1, [bj * n0, k_in] if bt else [k_in, bj * n0], b0s[j], [0, 0],
                                  transpose=bt)
                        sync(Pipe.MTE1, Pipe.CUBE, j)
                        npu.MmadOp(a0s[j], b0s[j], accs[bi][bj], later)
                        npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, j)

            def k_slice(kk: SSAValue, j: int) -> None:
                a1, b1, wev = a1s[j], b1s[j % w_cp], 4 + j % w_cp
                npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, j)
                npu.DmaOp(Pipe.MTE2, lhs, [row, kk], a1, [0, 0], rows=valid)
                npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, wev)
                npu.DmaOp(Pipe.MTE2, rhs, [col, kk] if bt else [kk, col], b1, [0, 0],
                          cache=self.cache_of(mm.rhs))
                sync(Pipe.MTE2, Pipe.MTE1, j)
                inner = Block(arg_types=[idx])
                with ImplicitBuilder(inner):
                    l0_step(a1, b1, kk, inner.args[0], 0)
                    for q in range(1, nb):
                        k_q = arith.AddiOp(inner.args[0], c(q * k0)).result
                        guard = Block()
                        with ImplicitBuilder(guard):
                            l0_step(a1, b1, kk, k_q, q)
                            scf.YieldOp()
                        scf.IfOp(arith.CmpiOp(k_q, c(k1), "ult").result, [], Region(guard))
                    scf.YieldOp()
                scf.ForOp(c(0), c(k1), c(nb * k0), [], Region(inner))
                npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, j)
                npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, wev)

            kbody = Block(arg_types=[idx])
            with ImplicitBuilder(kbody):
                for j in range(copies):
                    if j == 0:
                        k_slice(kbody.args[0], 0)
                        continue
                    kj = arith.AddiOp(kbody.args[0], c(j * k1)).result
                    guard = Block()
                    with ImplicitBuilder(guard):
                        k_slice(kj, j)
                        scf.YieldOp()
                    scf.IfOp(arith.CmpiOp(kj, kend, "ult").result, [], Region(guard))
                scf.YieldOp()
            scf.ForOp(kstart, kend, c(copies * k1), [], Region(kbody))
            for j in range(copies):
                npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, j)
            for j in range(w_cp):
                npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, 4 + j)
            for j in range(nb):
                npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, j)
            sync(Pipe.CUBE, Pipe.FIXPIPE, 3)
            blocks = []
            for bi in range(bm):
                # Rows of block bi that exist: min(valid, (bi+1) m0) - min(valid, bi m0).
                lo = arith.MinUIOp(valid, c(bi * m0)).result if bi else c(0)
                b_rows = arith.SubiOp(arith.MinUIOp(valid, c((bi + 1) * m0)), lo).result if bm > 1 else valid
                b_row = arith.AddiOp(row, c(bi * m0)).result if bi else row
                for bj in range(bn):
                    b_col = arith.AddiOp(col, c(bj * n0)).result if bj else col
                    blocks.append((accs[bi][bj], b_row, b_col, b_rows))
            def out_block(b_rows: SSAValue, emit) -> None:
                """A block past the tile's last token row (a tail) moves nothing: skip it."""
                if b_rows is valid:
                    emit()
                    return
                some = Block()
                with ImplicitBuilder(some):
                    emit()
                    scf.YieldOp()
                scf.IfOp(arith.CmpiOp(b_rows, c(0), "ne").result, [], Region(some))

            if nsplit > 1:
                dst = dests[out_val][0]
                write, add = Block(), Block()
                with ImplicitBuilder(write):
                    for acc, b_row, b_col, b_rows in blocks:
                        out_block(b_rows, lambda: npu.FixpipeOp(acc, [0, 0], dst, [b_row, b_col], rows=b_rows))
                    npu.CrossCoreSetOp(zero_flag)
                    scf.YieldOp()
                with ImplicitBuilder(add):
                    npu.CrossCoreWaitOp(zero_flag, per)
                    for acc, b_row, b_col, b_rows in blocks:
                        out_block(b_rows, lambda: npu.FixpipeOp(acc, [0, 0], dst, [b_row, b_col], rows=b_rows,
                                                                atomic_add=True))
                    scf.YieldOp()
                scf.IfOp(arith.CmpiOp(si, c(0), "eq").result, [], Region(write), Region(add))
            for dst in dests[out_val] if nsplit == 1 else []:
                d_el = elem_name(dst.type.element_type)  # type: ignore[union-attr]
                rnd = None
                if d_el != acc_name:
                    rnd = cast.round.data if cast is not None else RoundMode.RINT
                for acc, b_row, b_col, b_rows in blocks:
                    out_block(b_rows, lambda: npu.FixpipeOp(acc, [0, 0], dst, [b_row, b_col], rows=b_rows,
                                                            round=rnd))
            sync(Pipe.FIXPIPE, Pipe.CUBE, 4)
            npu.CrossCoreSetOp(flag)
            scf.YieldOp()
        scf.ForOp(core, ntasks, c(self.target.cube_cores), [], Region(body))

    def cache_of(self, v: SSAValue):
        ld = v.owner
        if isinstance(ld, tile.LoadOp) and ld.cache is not None:
            return ld.cache.data
        return None
