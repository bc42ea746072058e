"""The vector side of `tile-to-npu`: one `npu.tasks` group per vector phase.

A phase is the vector stages on one side of the cube stage, fused in UB
(`planning.vector.phases`). A task covers `merge` vector tiles of `r` rows of one loop
body (PyPTO's `vec_nbuffer_setting`: that many identical vector subgraphs merged into
one task), each in its own UB copy with its own events, column-chunked or not: all as
the phase plan that tile-assign-shapes recorded (`#tile.phase`) says. (Each tile still
waits for the previous one's store before loading: the copies do not overlap yet.)"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType, UnknownLoc, f32
from xdsl.ir import Block, Operation, Region, SSAValue

from pto.diagnostics import DiagnosticError
from pto.dialects import npu, tile
from pto.dialects.common import ELEM_BYTES, elem_name
from pto.dialects.npu import BufferType, Pipe, Space
from pto.lowering.npu_build import index_const, sync, unrolled, unsupported, valid_rows
from pto.lowering.tile_to_npu import columns, events
from pto.lowering.tile_to_npu.ub import UbAllocator
from pto.lowering.tile_to_npu.vector_ops import emit_op
from pto.planning.columns import Plan
from pto.planning.columns import plan as columns_plan
from pto.planning.ub_ops import in_place
from pto.planning.vector import chunk_tasks

idx = IndexType()


def _yielded(st: tile.StageBase) -> Sequence[SSAValue]:
    """What the stage yields (its verifier requires the terminator)."""
    y = st.body.block.last_op
    assert isinstance(y, tile.YieldOp)
    return y.operands


class VectorPhase:
    def __init__(self, lowering, stages: list[tile.StageBase], body):
        vec = [st for st in stages if isinstance(st, tile.VecStageOp)]
        assert len(vec) == len(stages), "a vector phase is vector stages only (the cube stage is its own phase)"
        self.lowering, self.stages, self.body = lowering, vec, body  # body: the loop's Body
        self.target = lowering.target
        self.plan: Plan | None = None
        self.gm = lowering.gm
        self.refill_after_store = True  # each copy's loads wait for its store (set per task)

    # Used by the column tiling.
    def vector_op(self, op: Operation, r: int, ub: UbAllocator, chunk=None) -> None:
        emit_op(op, r, ub, chunk)

    def emit(self, label: str, after: list[str], dests) -> int:
        """Emit the group as the phase plan (`#tile.phase` on the first stage) says;
        returns the tile rows r."""
        ph = self.stages[0].phase
        if ph is None:
            raise DiagnosticError(self.stages[0], "tile-to-npu needs a vector phase plan: run tile-assign-shapes first")
        r, merge = ph.rows.data, ph.copies.data
        if ph.columns is not None:
            plan = columns_plan(self.stages, self.lowering.views, *ph.columns)
            if isinstance(plan, str):
                raise DiagnosticError(self.stages[0], f"tile-to-npu: the phase plan's column chunks: {plan}")
            self.plan = plan
        tiles = -(-self.body.rows // r) * self.chunks()
        region = Region(Block(arg_types=[idx, idx]))
        ub = UbAllocator(self.target)
        with ImplicitBuilder(region.block):
            self.task(region.block.args, r, merge, ub, dests)
        if ub.offset > self.target.capacity("ub"):
            # tile-assign-shapes checks every plan it keeps, so this is a plan that did not
            # pass through it (written by hand), or the planner and this emitter disagree.
            raise DiagnosticError(
                self.stages[0],
                f"vector stage '{self.stages[0].label.data}': its phase plan <{r} rows, {merge} copies> needs "
                f"{ub.offset} bytes of ub, but {self.target.name} has {self.target.capacity('ub')} "
                "(tile-assign-shapes checks a plan before tile-to-npu)",
            )
        npu.TasksOp(label, "vector", self.body.count, -(-tiles // merge), after, region)
        return r

    def chunks(self) -> int:
        return chunk_tasks(self.plan)

    def task(self, args, r: int, merge: int, ub: UbAllocator, dests) -> None:
        b, i = args
        b.name_hint, i.name_hint = "body", "task"
        start, end = self.body.bounds(b)
        tiles = -(-self.body.rows // r) * self.chunks()
        # The copies of a task are in UB of their own: a copy's loads need not wait for the
        # one before it to be stored (PyPTO: the second tile's copy-in follows the first's),
        # only the next task's loads wait for all of them (`refill_after_store`).
        self.refill_after_store = merge == 1 or self.plan is not None
        unrolled(
            merge,
            lambda q: (
                arith.AddiOp(arith.MuliOp(i, index_const(merge)).result, index_const(q)).result if merge > 1 else i
            ),
            index_const(tiles) if tiles % merge else None,
            lambda j, q: self.copy(j, r, start, end, ub, dests, q),
        )
        if not self.refill_after_store:
            sync(Pipe.MTE3, Pipe.MTE2, events.VEC_STORED)

    def copy(self, j: SSAValue, r: int, start: SSAValue, end: SSAValue, ub: UbAllocator, dests, q: int) -> None:
        """Vector tile j of the body: rows [row, row + valid) (and, for chunk tasks,
        column chunk j mod chunks of rows j div chunks), in UB copy q."""
        n, chunk = self.chunks(), None
        if n > 1:
            j, chunk = arith.DivUIOp(j, index_const(n)).result, arith.RemUIOp(j, index_const(n)).result
        row = arith.AddiOp(start, arith.MuliOp(j, index_const(r))).result
        row.name_hint = "row"
        valid = valid_rows(row, end, r)
        ub.new_copy()
        event = q * events.VEC_EVENTS_PER_COPY
        if self.plan is not None:
            columns.task(self, self.plan, r, row, valid, ub, dests, event, chunk)
        else:
            self.whole_rows(r, row, valid, ub, dests, event)

    # -- one tile of whole rows --------------------------------------------------------

    def whole_rows(self, r: int, row, valid, ub: UbAllocator, dests, event: int) -> None:
        if self.load_inputs(r, row, valid, ub):
            sync(Pipe.MTE2, Pipe.VECTOR, event + events.VEC_LOADED)
        self.compute(r, ub, dests)
        sync(Pipe.VECTOR, Pipe.MTE3, event + events.VEC_COMPUTED)
        for res in (res for st in self.stages for res in st.results):
            for dst in dests.get(res, []):
                buf = ub.bufs[res]
                shape = npu.buf(buf).get_shape()
                if len(shape) > 2:
                    buf, dst = self.rows_of(buf, dst)
                    shape = npu.buf(buf).get_shape()
                npu.DmaOp(Pipe.MTE3, buf, [0] * len(shape), dst, [row] + [0] * (len(shape) - 1), rows=valid)
        if self.refill_after_store:
            sync(Pipe.MTE3, Pipe.MTE2, event + events.VEC_STORED)

    def rows_of(self, buf: SSAValue, dst: SSAValue) -> tuple[SSAValue, SSAValue]:
        """A rank-3 tile `[r, A, B]` stored into a `[T, A, B]` output: both are rows of
        A * B contiguous elements, so the store is the rank-2 one of those rows."""
        src_t, dst_t = npu.buf(buf), npu.buf(dst)
        shape = list(src_t.get_shape())
        if len(shape) != 3 or list(dst_t.get_shape())[1:] != shape[1:]:
            raise unsupported(self.stages[0], f"a rank-{len(shape)} tile {shape} stored to {dst_t}")
        width = shape[1] * shape[2]
        flat = npu.ReshapeOp(buf, BufferType([shape[0], width], src_t.element_type, Space.UB)).result
        rows = npu.ReshapeOp(dst, BufferType([dst_t.get_shape()[0], width], dst_t.element_type, Space.GM)).result
        return flat, rows

    def load_inputs(self, r: int, row, valid, ub: UbAllocator) -> bool:
        """Every value the phase reads that it does not compute, into UB."""
        inside = {o for st in self.stages for o in st.body.block.ops} - self.lowering.views
        inside |= set(self.stages)  # a result of an earlier stage of the phase is in UB
        loaded = False
        for op in (o for st in self.stages for o in st.body.block.ops if o not in self.lowering.views):
            for v in op.operands:
                if v in ub.bufs or (isinstance(v.owner, Operation) and v.owner in inside):
                    continue
                ub.bufs[v] = self.load(op, v, r, row, valid, ub)
                loaded = True
        return loaded

    def load(self, op: Operation, v: SSAValue, r: int, row, valid, ub: UbAllocator) -> SSAValue:
        t = v.type
        assert isinstance(t, TensorType)
        src = self.gm[v]
        token = isinstance(src.type, BufferType) and DYNAMIC_INDEX in src.type.get_shape()
        shape = [r, *t.get_shape()[1:]] if token else list(t.get_shape())
        if len(shape) > 2:  # rank 3 is only a view or transpose of a tile in UB (vector_ops)
            raise unsupported(op, f"rank-{len(shape)} tiles loaded from global memory")
        if not token and len(shape) == 2 and shape[1] == 1 and isinstance(op, tile.DequantOp) and v is op.w_scale:
            # A [N, 1] weight scale broadcast along rows is loaded transposed as [1, N].
            buf = ub.alloc([1, shape[0]], t.element_type, op.location)
            npu.DmaOp(Pipe.MTE2, src, [0, 0], buf, [0, 0], transpose=True)
            return buf
        buf = ub.alloc(shape, t.element_type, op.location)
        npu.DmaOp(
            Pipe.MTE2,
            src,
            [row if token else 0] + [0] * (len(shape) - 1),
            buf,
            [0] * len(shape),
            rows=valid if token else None,
        )
        return buf

    def compute(self, r: int, ub: UbAllocator, dests) -> None:
        """The phase's ops in order; a buffer is freed after the last op that reads it,
        unless it is a result to store."""
        stages, views = self.stages, self.lowering.views
        alias = {outer: inner for st in stages for inner, outer in zip(_yielded(st), st.results, strict=True)}
        ops = [o for st in stages for o in st.body.block.ops if o not in views and not isinstance(o, tile.YieldOp)]
        last = {alias.get(v, v): i for i, o in enumerate(ops) for v in o.operands}
        keep = {alias.get(v, v) for st in stages for v in st.results if dests.get(v)}
        for st in stages:
            for op in st.body.block.ops:
                if isinstance(op, tile.YieldOp):
                    for inner, outer in zip(op.values, st.results, strict=True):
                        ub.bufs[outer] = ub.bufs[inner]
                    continue
                if op in views:
                    continue
                i = ops.index(op)
                dying = [v for v in dict.fromkeys(alias.get(u, u) for u in op.operands) if last.get(v) == i]
                dying = [v for v in dying if v not in keep and ub.bufs.get(v) in ub.sizes]
                if (v := in_place(op, dying)) is not None:  # (planning.ub_ops.whole_rows_task frees it so)
                    ub.free(ub.bufs[v])
                emit_op(op, r, ub)
                for v in dying:
                    if ub.bufs.get(v) in ub.sizes:
                        ub.free(ub.bufs[v])


def emit_sum_group(lowering, cs, label: str, after: list[str], dsts: list[SSAValue], rnd) -> int:
    """The vector group that adds the split-K partial sums (`cs.psum`, one [tokens, N]
    block per run) into each of `dsts`, as PyPTO does: a task per output tile of the
    cube (fewer rows if the tile does not fit UB twice), copying in the runs' partials
    one after another. Returns the rows of a task."""
    t, body, runs = cs.t, cs.body, cs.t.splits
    out_row = sum(BufferType([1, t.n1], npu.buf(d).element_type, Space.UB).nbytes() for d in dsts)
    per_row = 2 * t.n1 * ELEM_BYTES["f32"] + out_row
    r = min(t.m1, lowering.target.capacity("ub") // per_row)
    if r < 1:
        raise DiagnosticError(lowering.f, f"tile-to-npu: a row of the split-K sum ({per_row} bytes) does not fit in ub")
    row_tiles, col_tiles = -(-body.rows // r), -(-t.n // t.n1)
    region = Region(Block(arg_types=[idx, idx]))
    with ImplicitBuilder(region.block):
        b, i = region.block.args
        b.name_hint, i.name_hint = "body", "task"
        start, end = body.bounds(b)
        row = arith.AddiOp(start, arith.MuliOp(arith.DivUIOp(i, index_const(col_tiles)), index_const(r))).result
        row.name_hint = "row"
        col = arith.MuliOp(arith.RemUIOp(i, index_const(col_tiles)), index_const(t.n1)).result
        col.name_hint = "col"
        valid = valid_rows(row, end, r)
        ncols = cs.valid_n(col)  # (a ragged N's last column tile)
        ub = UbAllocator(lowering.target)
        acc = ub.alloc([r, t.n1], f32, UnknownLoc())
        part = ub.alloc([r, t.n1], f32, UnknownLoc())
        npu.DmaOp(Pipe.MTE2, cs.psum, [row, col], acc, [0, 0], rows=valid, cols=ncols)
        for run in range(1, runs):
            at = arith.AddiOp(arith.MuliOp(cs.tokens, index_const(run)), row).result
            npu.DmaOp(Pipe.MTE2, cs.psum, [at, col], part, [0, 0], rows=valid, cols=ncols)
            sync(Pipe.MTE2, Pipe.VECTOR, events.VEC_LOADED)
            npu.VAddOp(acc, part, acc)
            sync(Pipe.VECTOR, Pipe.MTE2, events.VEC_STORED)  # the next partial may overwrite `part`
        outs = []
        for d in dsts:
            out = ub.alloc([r, t.n1], npu.buf(d).element_type, UnknownLoc())
            if elem_name(npu.buf(d).element_type) == "f32":
                npu.VMulsOp(acc, 1.0, out)
            else:
                npu.VCastOp(acc, out, rnd)
            outs.append(out)
        sync(Pipe.VECTOR, Pipe.MTE3, events.VEC_COMPUTED)
        for d, out in zip(dsts, outs, strict=True):
            npu.DmaOp(Pipe.MTE3, out, [0, 0], d, [row, col], rows=valid, cols=ncols)
    npu.TasksOp(label, "vector", body.count, row_tiles * col_tiles, after, region)
    return r
