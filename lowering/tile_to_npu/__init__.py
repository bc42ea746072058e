"""`tile-to-npu`: a task graph of cube and vector tasks for the token loops.

Each iteration of a token loop is one *body* of p tokens (the loop's step: the unroll
factor); its vector stages before the cube stage, its cube stage and its vector stages
after the cube stage become three `npu.tasks` groups over the bodies (`vector.py`,
`cube.py`), the cube group after the first vector group and the last vector group after
the cube group, body by body (the vector stages after the cube are several groups
where tile-assign-shapes cut their phase: `planning.vector.post_phases`, each after the
cube and the parts it reads). All groups of all loops of a kernel form one `npu.graph`:
tasks of every body and every loop may be in flight at once, each waiting only for the
tasks of its own body that produce its inputs, as PyPTO's runtime does. Values crossing
groups go through GM workspaces.

An NZ weight (`tile.load ... layout nz`) becomes an argument marked `npu.layout =
#pto.layout<nz>`. A `host_transpose` weight becomes an argument passed [K, N]
(`npu.host_transpose`), an in-place reshape of a loaded tensor a GM view
(`npu.reshape`); a reshape of a computed tile a view of its UB buffer. Not supported
(rejected): split-K with an i32 accumulator, kL1 not a multiple of kL0, a_trans,
rank-3 tiles other than a reshape or transpose in UB. A K or N that its tile does not
divide ends in a ragged tile (`cube.py`). Vector tiles narrower than a row are
column-tiled when the phase allows it, else processed as whole rows (with a warning).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    LocationAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
    UnknownLoc,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError
from pto.dialects import npu, tile
from pto.dialects.common import Layout, LayoutAttr
from pto.dialects.npu import BufferType, Space, buf
from pto.dialects.pto import tensor_type
from pto.lowering.npu_build import index_const, unsupported
from pto.lowering.tile_to_npu import successors
from pto.lowering.tile_to_npu.cube import CubeStage
from pto.lowering.tile_to_npu.vector import VectorPhase, emit_sum_group
from pto.lowering.tile_to_npu.weights import emit_weight_groups, emit_weight_stage, wait_for_weight_stages
from pto.planning.vector import feeding, gm_views, post_phases, reads, stage_of
from pto.targets import Target, target_of


def gm_type(t: Attribute) -> BufferType:
    assert isinstance(t, TensorType)
    return BufferType(list(t.get_shape()), t.element_type, Space.GM)


def _transposed(t: TensorType) -> TensorType:
    return TensorType(t.element_type, list(reversed(t.get_shape())))


def _check_token_axis(stages: list[tile.StageBase]) -> None:
    """Weight-only work (`tile.weight_only`) is done in the vector stage that reads it,
    in buffers of its own static shape; a stage that yields such a value would hand a
    token-shaped workspace a weight-shaped buffer."""
    for st in stages:
        yielded = st.body.block.last_op
        assert yielded is not None
        for v in yielded.operands:
            if isinstance(st, tile.VecStageOp) and tile.weight_only(v):
                raise unsupported(
                    v.owner if isinstance(v.owner, Operation) else st,
                    f"'{v.owner.name if isinstance(v.owner, Operation) else 'a value'}' of tensors without a token "
                    "axis as a result of a vector stage (weight-only work stays in the stage that reads it)",
                )


@dataclass(frozen=True)
class TileToNpuPass(ModulePass):
    __doc__ = (
        __doc__
        + """
    Options: `l1-buffers` (1 or 2) and `l0-buffers` (1 or 2), the copies of the cube
    tasks' L1 and L0A/L0B tiles when they fit. With 2, a K slice loads while the one
    before it is consumed (if two copies of the weight slice do not fit beside them,
    only the activation slices get two). The defaults are PyPTO's: its cube tasks copy
    slice after slice into L1 without waiting for the cube (2) and overlap the L0 loads
    with the cube (2)."""
    )

    name = "tile-to-npu"

    l1_buffers: int = 2
    l0_buffers: int = 2

    def __post_init__(self) -> None:
        for name in ("l1_buffers", "l0_buffers"):  # (checked here: a bad option is a bad command line)
            if getattr(self, name) not in (1, 2):
                raise ValueError(f"tile-to-npu: {name.replace('_', '-')} must be 1 or 2, got {getattr(self, name)}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and any(isinstance(o, tile.TokenLoopOp) for o in f.walk()):
                Lowering(f, target_of(f), self.l1_buffers, self.l0_buffers).run()


@dataclass
class Body:
    """The bodies of one token loop: `count` of `rows` tokens from `lb`, the last one
    ending at `ub`."""

    rows: int
    lb: SSAValue
    ub: SSAValue
    count: SSAValue

    def bounds(self, b: SSAValue) -> tuple[SSAValue, SSAValue]:
        start = arith.AddiOp(self.lb, arith.MuliOp(b, index_const(self.rows))).result
        start.name_hint = "start"
        end = arith.MinUIOp(arith.AddiOp(start, index_const(self.rows)), self.ub).result
        end.name_hint = "end"
        return start, end


class Lowering:
    def __init__(self, f: func.FuncOp, target: Target, l1_buffers: int = 2, l0_buffers: int = 2):
        self.f, self.target = f, target
        self.l1_buffers, self.l0_buffers = l1_buffers, l0_buffers
        self.gm: dict[SSAValue, SSAValue] = {}  # tile-level tensor value -> GM buffer
        self.views: set[Operation] = set()
        self.labels: set[str] = set()
        self.tokens: SSAValue | None = None
        self.workspaces: dict[tuple, SSAValue] = {}
        self.windows: dict[tuple, SSAValue] = {}  # column windows of outputs (`columns`)
        self.cascade = 0
        self.last_upper: SSAValue | None = None
        self.graph: npu.GraphOp | None = None
        self.weight_tasks: dict[SSAValue, str] = {}  # weight argument -> its weight task's group (`weights`)
        self.weight_stages: dict[SSAValue, str] = {}  # a weight stage's GM workspace -> its group (`weights`)

    def run(self) -> None:
        f, old = self.f, self.f.body.block
        new = Block(arg_types=self.arg_types(old))
        for a, b in zip(old.args, new.args, strict=True):
            b.name_hint = a.name_hint
            self.gm[a] = b
        # The builder must be left even when a loop is rejected: an ImplicitBuilder left
        # entered would take every op created later in the process (the parser's too).
        with ExitStack() as scope:
            scope.enter_context(ImplicitBuilder(new))
            for op in list(old.ops):
                if isinstance(op, tile.TokenLoopOp) or tile.is_weight_stage(op):
                    if self.graph is None:  # everything from the first loop on is one graph
                        scope.close()
                        self.graph = self.new_graph(new, op)
                        scope.enter_context(ImplicitBuilder(self.graph.body.block))
                    if isinstance(op, tile.VecStageOp):
                        emit_weight_stage(self, op)
                    else:
                        self.loop(op)  # type: ignore[arg-type]
                elif isinstance(op, tile.LoadOp):  # a weight a weight stage reads whole
                    self.gm[op.result] = self.gm[op.source]
                elif isinstance(op, func.ReturnOp):
                    scope.close()
                    with ImplicitBuilder(new):
                        func.ReturnOp()
                else:
                    self.clone(op)
        f.body.detach_block(old)
        f.body.add_block(new)
        f.function_type = func.FunctionType.from_lists([a.type for a in new.args], [])

    def arg_types(self, old: Block) -> list[Attribute]:
        """GM buffers of the arguments; a weight the host transposes once (tile.load
        host_transpose) is passed [K, N], one stored in fractals (tile.load layout nz) is
        marked `npu.layout = #pto.layout<nz>` for the model's addresses."""
        f = self.f
        loads = [o for o in f.walk() if isinstance(o, tile.LoadOp)]
        host_t = {o.source for o in loads if o.host_transpose is not None}
        nz = {o.source for o in loads if o.layout is not None and o.layout.data == Layout.NZ}
        for v in host_t:
            if isinstance(v, OpResult):
                raise unsupported(v.owner, "host-transposing a computed value")
        if host_t or nz:
            attrs = list(f.arg_attrs.data) if f.arg_attrs is not None else [DictionaryAttr({})] * len(old.args)
            for a in old.args:
                if a in host_t:
                    attrs[a.index] = DictionaryAttr({**attrs[a.index].data, "npu.host_transpose": UnitAttr()})
                if a in nz:
                    attrs[a.index] = DictionaryAttr({**attrs[a.index].data, "npu.layout": LayoutAttr(Layout.NZ)})
            f.arg_attrs = ArrayAttr(attrs)
        return [gm_type(_transposed(tensor_type(a))) if a in host_t else gm_type(a.type) for a in old.args]

    def new_graph(self, block: Block, first: Operation) -> npu.GraphOp:
        runtime = self.f.attributes.get("pto.runtime")
        stitch = runtime.data.get("stitch_function_max_num") if isinstance(runtime, DictionaryAttr) else None
        g = npu.GraphOp(
            self.target.cube_cores,
            self.target.vector_cores,
            Region(Block()),
            stitch.value.data if isinstance(stitch, IntegerAttr) else None,
        )
        g.location = first.location
        block.add_op(g)
        return g

    def clone(self, op: Operation) -> None:
        if isinstance(op, tensor.DimOp):
            d = npu.DimOp(self.gm[op.source], 0)
            d.result.name_hint = op.result.name_hint
            self.gm[op.result] = d.result
            self.tokens = d.result
            return
        cl = op.clone(value_mapper=self.gm)  # the builder inserts it
        for r, nr in zip(op.results, cl.results, strict=True):
            self.gm[r] = nr

    def token_count(self, loop: tile.TokenLoopOp) -> SSAValue:
        """The token count (for sizing GM workspaces): from the kernel's tensor.dim, else
        the dim 0 of its first dynamic argument."""
        if self.tokens is None:
            arg = next(
                (
                    a
                    for a in self.f.body.block.args
                    if isinstance(a.type, TensorType) and a.type.get_shape()[0] == DYNAMIC_INDEX
                ),
                None,
            )
            if arg is None:
                raise DiagnosticError(loop, "tile-to-npu needs a token axis: an argument with a dynamic dim 0")
            self.tokens = npu.DimOp(self.gm[arg], 0).result
            self.tokens.name_hint = "tokens"
        return self.tokens

    def workspace(
        self, key: tuple, t: BufferType, rows: Callable[[], SSAValue], name: str, loc: LocationAttr | None = None
    ) -> SSAValue:
        """A GM workspace (dim 0 dynamic) shared by every factor loop of the cascade under
        the same `key`: the loops cover disjoint token rows, so GM holds one copy of each
        intermediate however many factors the unroll list has. Loops that do not continue
        a cascade (their lower bound is not the previous loop's upper one) may cover the
        same rows at the same time: they get their own."""
        key = (self.cascade, *key)
        if key not in self.workspaces:
            ws = npu.AllocOp(t, None, [rows()])
            ws.result.name_hint = name
            if loc is not None:
                ws.location = loc
            self.workspaces[key] = ws.result
        return self.workspaces[key]

    def label(self, st: tile.StageBase, rows: int) -> str:
        base, n = f"{st.label.data}.{rows}", 1
        name = base
        while name in self.labels:
            name, n = f"{base}.{n}", n + 1
        self.labels.add(name)
        return name

    # ---------------------------------------------------------------- one loop

    def loop(self, loop: tile.TokenLoopOp) -> None:
        if loop.lower is not self.last_upper:
            self.cascade += 1
        self.last_upper = loop.upper
        lb, ub = self.gm[loop.lower], self.gm[loop.upper]
        count = arith.CeilDivUIOp(arith.SubiOp(ub, lb), index_const(loop.rows)).result
        count.name_hint = f"bodies{loop.rows}"
        body = Body(loop.rows, lb, ub, count)
        stages = [o for o in loop.body.block.ops if isinstance(o, tile.StageBase)]
        cube = next(o for o in stages if isinstance(o, tile.CubeStageOp))
        pre, post = stages[: stages.index(cube)], stages[stages.index(cube) + 1 :]
        self.map_loads(loop, stages)
        _check_token_axis(stages)
        feed, side = feeding(pre, cube)
        posts = post_phases(post)
        dests = self.destinations(loop, stages, [feed, side, [cube], *posts])  # type: ignore[list-item]
        self.map_slices(stages)
        first = len(self.graph.body.block.ops) if self.graph else 0
        after: list[str] = []
        chunked = False
        fed: successors.Footprints = []  # what a column-chunked first vector group's tasks write
        if feed:
            after = [self.label(feed[0], loop.rows)]
            phase = VectorPhase(self, feed, body)
            r = phase.emit(after[0], [], dests)
            chunked = phase.chunks() > 1
            if chunked and phase.plan is not None:
                copies = feed[0].phase.copies.data  # (emit checked the phase plan)
                fed = successors.vector_writes(body.rows, r, copies, phase.chunks(), phase.plan.k)
        after_feed = list(after)
        beside: list[str] = []
        if side:  # vector stages the cube does not wait for: they run beside it
            beside = [self.label(side[0], loop.rows)]
            VectorPhase(self, side, body).emit(beside[0], after if reads(side, feed) else [], dests)
        cs = CubeStage(self, cube, body, dests)
        label = self.label(cube, loop.rows)
        cs.emit(label, after)
        # A split-K run reads only its K range (the column tiles of a chunked phase in it);
        # a task adding partial sums only its output tile's runs.
        partial = {label} if chunked and cs.t.splits > 1 else set()
        counts: dict[tuple[str, str], list[int]] = {}
        needs: dict[tuple[str, str], list[list[int]]] = {}  # (the tasks each consumer waits for)
        if partial and fed:
            runs = successors.cube_tasks(cs, reads=True)
            counts[(after[0], label)] = successors.overlaps(fed, runs)
            needs[(after[0], label)] = successors.needs(fed, runs)
        after = [label]
        out = successors.cube_tasks(cs, reads=False)  # what the cube stage's tasks write
        if cs.psum is not None:
            r = emit_sum_group(self, cs, label + ".sum", after, dests[cube.results[0]], cs.round_mode())
            sums = successors.sum_reads(body.rows, r, cs.t.n1, -(-cs.t.n // cs.t.n1))
            counts[(label, label + ".sum")] = successors.overlaps(out, sums)
            needs[(label, label + ".sum")] = successors.needs(out, sums)
            after = [label + ".sum"]
            partial.add(after[0])
            out = sums
        done: list[tuple[str, list]] = []  # (several when tile-assign-shapes cut the phase)
        places: dict[str, list[int]] = {}  # per group after the cube: its tasks' places behind a HUB
        for part in posts:  # each waits for the cube, the side stages and the parts it reads
            label = self.label(part[0], loop.rows)
            own = [name for name, p in done if reads(part, p)]
            phase = VectorPhase(self, part, body)  # type: ignore[arg-type]
            r = phase.emit(label, after + beside + own, dests)
            done.append((label, part))
            plan = part[0].phase  # (emit checked it)
            if not beside and not own and plan is not None:  # it reads the output tiles of its rows and columns
                width, starts = self.cube_reads(part, cube, cs.t.n)
                width = phase.plan.k if phase.plan is not None else width
                tasks = successors.vector_writes(body.rows, r, plan.copies.data, phase.chunks(), width, starts)
                places[label] = successors.hub_places(out, tasks)
        self.close_loop(loop, first, partial, places, counts, {*after_feed, *beside}, needs)

    def close_loop(
        self,
        loop: tile.TokenLoopOp,
        first: int,
        partial: set[str],
        places: dict[str, list[int]],
        counts: dict[tuple[str, str], list[int]],
        ahead: set[str],
        needs: dict[tuple[str, str], list[list[int]]],
    ) -> None:
        """The loop's groups (the graph's ops from `first`): their HUBs and the order
        behind them, successor counts, the weight groups in front of the vector groups
        `ahead` of the cube (a calibration's), and the loop's location."""
        assert self.graph is not None
        self.mark_hubs(list(self.graph.body.block.ops)[first:], partial)
        for t in list(self.graph.body.block.ops)[first:]:
            if isinstance(t, npu.TasksOp) and t.hub is not None and t.label.data in places:
                if places[t.label.data] != list(range(t.per_body.value.data)):
                    t.hub_order = ArrayAttr([IntegerAttr(k, i64) for k in places[t.label.data]])
        groups = [o for o in list(self.graph.body.block.ops)[first:] if isinstance(o, npu.TasksOp)]
        successors.record(groups, counts)
        successors.record_needs(groups, needs)
        wait_for_weight_stages(self, groups)  # (after the HUBs: a once-per-launch wait is none)
        if self.target.model.weight_task:  # (last: it puts its groups in front of the graph)
            ops = list(self.graph.body.block.ops)[first:]
            emit_weight_groups(self, [o for o in ops if isinstance(o, npu.TasksOp) and o.label.data in ahead])
        # Generated ops take the loop's location, so an error in them points at the source.
        for op in list(self.graph.body.block.ops)[first:]:
            for o in op.walk():
                if isinstance(o.location, UnknownLoc):
                    o.location = loop.location

    def mark_hubs(self, ops: list[Operation], partial: set[str]) -> None:
        """Mark `hub` the groups whose every task needs every task of the body's producers,
        more than `model.hub_pairs` pairs of them and more than one on each side (a HUB
        saves no edge to or from a single task): PyPTO's runtime routes such a dependence
        through a HUB task (measured, bench/fidelity/PYPTO_NOTES.md (f)). `partial`
        groups need only some of their producers' tasks."""
        per_body = {
            t.label.data: t.per_body.value.data
            for t in self.graph.body.block.ops  # type: ignore[union-attr]
            if isinstance(t, npu.TasksOp)
        }
        limit = self.target.model.hub_pairs
        for t in ops:
            if isinstance(t, npu.TasksOp) and t.after.data and t.label.data not in partial:
                producers, consumers = sum(per_body[a] for a in t.deps()), t.per_body.value.data
                if producers * consumers > limit and min(producers, consumers) > 1:
                    t.hub = UnitAttr()

    def map_loads(self, loop: tile.TokenLoopOp, stages: list[tile.StageBase]) -> None:
        """Loads read their GM buffer; an in-place reshape of a loaded tensor, or a window
        of a loaded weight, is a view of it."""
        loads = {o.result: o for o in loop.body.walk() if isinstance(o, tile.LoadOp)}  # stages may load too
        for ld in loads.values():
            self.gm[ld.result] = self.gm[ld.source]
        self.views = gm_views(stages)
        for o in (o for st in stages for o in st.body.block.ops if o in self.views):
            if isinstance(o, tile.ViewOp):  # its verifier: of a whole load
                window = npu.ViewOp(self.gm[o.input], o.starts, gm_type(o.result.type))
                window.location = o.location
                self.gm[o.result] = window.result
            elif isinstance(o, tile.ReshapeOp):  # (a slice's source may be a cube stage's result: map_slices)
                if isinstance(w := self.gm[o.input].owner, npu.ViewOp) and not w.contiguous():
                    raise unsupported(
                        o, "an in-place reshape of a weight window that is not contiguous (columns of a wider weight)"
                    )
                t = o.result.type
                assert isinstance(t, TensorType)
                src = self.gm[o.input]
                dyn = DYNAMIC_INDEX in npu.buf(src).get_shape()
                shape = [DYNAMIC_INDEX, *t.get_shape()[1:]] if dyn else list(t.get_shape())
                view = npu.ReshapeOp(src, BufferType(shape, t.element_type, Space.GM))
                view.location = o.location
                self.gm[o.result] = view.result

    def cube_reads(self, part: Sequence[tile.StageBase], cube: tile.CubeStageOp, n: int) -> tuple[int, list[int]]:
        """The columns of the cube's `n`-column result a phase after it reads: all, or the
        column slices it reads (their width, their starts)."""
        slices = [o for o in self.views if isinstance(o, tile.SliceOp) and o.input is cube.results[0]]
        slices = [o for o in slices if stage_of(o) in part]
        if not slices:
            return n, [0]
        return max(o.width for o in slices), sorted({o.start for o in slices})

    def map_slices(self, stages: list[tile.StageBase]) -> None:
        """Column slices of a token tile in global memory (`slice_in_gm`: a load, or a cube
        stage's result, whose workspace `destinations` made) are views of its columns."""
        for o in (o for st in stages for o in st.body.block.ops if o in self.views):
            if isinstance(o, tile.SliceOp):
                src = self.gm[o.input]
                t = o.result.type
                assert isinstance(t, TensorType)
                shape = [npu.buf(src).get_shape()[0], *t.get_shape()[1:]]
                window = npu.ViewOp(src, [0, o.start], BufferType(shape, t.element_type, Space.GM))
                window.location = o.location
                self.gm[o.result] = window.result

    def destinations(
        self, loop: tile.TokenLoopOp, stages: list[tile.StageBase], phases: list[list[tile.StageBase]]
    ) -> dict[SSAValue, list[SSAValue]]:
        """GM destinations of every stage result: the outputs it is stored to, and a
        workspace if a stage of another phase (another group of tasks) reads it; within
        a phase a result stays in UB."""
        stores: dict[SSAValue, list[SSAValue]] = {}
        for store in (o for o in loop.body.block.ops if isinstance(o, tile.StoreOp)):
            stores.setdefault(store.value, []).append(self.columns(store))
        phase = {st: i for i, ph in enumerate(phases) for st in ph}
        dests: dict[SSAValue, list[SSAValue]] = {}
        n = 0
        for st in stages:
            for r in st.results:
                dests[r] = list(stores.get(r, []))
                readers = {stage_of(u.operation) for u in r.uses if not isinstance(u.operation, tile.StoreOp)}
                if any(s is None or phase.get(s) != phase[st] for s in readers):
                    t = r.type
                    assert isinstance(t, TensorType)
                    bt = BufferType([DYNAMIC_INDEX, *t.get_shape()[1:]], t.element_type, Space.GM)
                    ws = self.workspace(("ws", n, bt), bt, lambda: self.token_count(loop), "ws", st.location)
                    n += 1
                    self.gm[r] = ws
                    dests[r].append(ws)
                elif dests[r]:
                    self.gm[r] = dests[r][0]
        return dests

    def columns(self, store: tile.StoreOp) -> SSAValue:
        """Where a store writes: its output, or for a column window (`%out[%i, 448]`) an
        `npu.view` of the output's columns, whose addresses (and L2 lines) are the
        output's. Every writer of the result then stores into the view at [row, 0] as
        it would into an output of that width: the fixpipe, a vector phase's MTE3, the
        split-K sum. One view per window serves every loop of the kernel."""
        out = self.gm[store.dest]
        if store.column is None:
            return out
        t = store.value.type
        assert isinstance(t, TensorType)
        key = ("columns", out, store.col, t.get_shape()[-1])
        if key not in self.windows and len(gm_shape := list(buf(out).get_shape())) > 2:
            # a rank-3 output's columns are those of each token's flattened row
            flat_key = ("rows", out)
            if flat_key not in self.windows:
                flat = BufferType([gm_shape[0], math.prod(gm_shape[1:])], t.element_type, Space.GM)
                reshape = npu.ReshapeOp(out, flat)
                reshape.location = store.location
                reshape.result.name_hint = f"{out.name_hint or 'out'}_rows"
                self.windows[flat_key] = reshape.result
            out = self.windows[flat_key]
        if key not in self.windows:
            shape = [DYNAMIC_INDEX, t.get_shape()[-1]]
            view = npu.ViewOp(out, [0, store.col], BufferType(shape, t.element_type, Space.GM))
            view.location = store.location
            view.result.name_hint = f"{out.name_hint or 'out'}_cols{store.col}"
            self.windows[key] = view.result
        return self.windows[key]

    def cache_of(self, v: SSAValue):
        """The L2 policy of the load that `v` is (or views)."""
        ld = v.owner
        while isinstance(ld, tile.ViewOp | tile.ReshapeOp) and ld in self.views:
            ld = ld.input.owner
        if isinstance(ld, tile.LoadOp) and ld.cache is not None:
            return ld.cache.data
        return None
