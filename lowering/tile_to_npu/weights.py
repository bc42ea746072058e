"""Weight-only work in tasks of its own, in no token loop.

A weight stage (`tile.is_weight_stage`: W8A16's weight cast, which the matmul reads)
is a vector group of one task per tile of its result (`emit_weight_stage`): MTE2 brings
each weight's part into UB, the vector unit runs the stage's element-wise ops, MTE3
stores the part into a GM workspace; the groups that read the workspace wait for every
task of it, once per launch.

RMSNorm's gamma widened in the stage that reads it is, under `model.weight_task`, a
task of its own too, as PyPTO 0.2.0 runs an op
written before its token loop: RMSNorm's gamma widened to f32 is one vector task at the
start of the graph (measured: task 0, 1.8-2.1k cycles, every RMSNorm task its
successor, bench/fidelity/PYPTO_NOTES.md (h)).

A vector group before the cube that copies a weight argument (no token axis) into UB
and widens it (`npu.vcast`) gets a group `<weight>.cast` of one task in front of it:
MTE2 brings the weight into UB, the vector unit casts it, MTE3 stores it to a GM
workspace of its own. The group is in no token loop: every body of the groups after it
waits for its task (docs/model.md "The task graph"). *Approximation*: the tasks after
it still load the narrow weight and widen it themselves (their numerics, and the cost of a
small copy and cast either way), where PyPTO's load the widened copy.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IndexType, IntegerAttr, StringAttr
from xdsl.ir import Block, Region, SSAValue

from pto.dialects import npu, tile
from pto.dialects.npu import BufferType, Pipe, RoundMode, Space, buf
from pto.dialects.pto import tensor_type
from pto.lowering.npu_build import index_const, sync, unsupported
from pto.lowering.tile_to_npu.ub import UbAllocator
from pto.lowering.tile_to_npu.vector_ops import ELEMENTWISE, emit_op
from pto.planning.weights import tiled

if TYPE_CHECKING:
    from pto.lowering.tile_to_npu import Lowering

UB_ALIGN = 32  # bytes: UB buffers start on 32-byte blocks


def widened_weights(group: npu.TasksOp, args: tuple[SSAValue, ...]) -> list[tuple[SSAValue, BufferType]]:
    """The weight arguments (static shape) the group's tasks copy into UB and widen, with
    the widened UB buffer type, in order of first copy."""
    found: dict[SSAValue, BufferType] = {}
    for op in group.body.walk():
        if not (isinstance(op, npu.DmaOp) and op.pipe.data == Pipe.MTE2):
            continue
        src = op.src
        if src not in args or DYNAMIC_INDEX in buf(src).get_shape() or src in found:
            continue
        for use in op.dst.uses:
            c = use.operation
            if isinstance(c, npu.VCastOp) and c.src is op.dst:
                d, s = buf(c.dst), buf(c.src)
                if d.element_type.bitwidth > s.element_type.bitwidth:  # type: ignore[attr-defined]
                    found[src] = d
                break
    return list(found.items())


def emit_weight_groups(low: Lowering, groups: list[npu.TasksOp]) -> None:
    """Put a weight task in front of each of `groups` that widens a weight argument
    (one task per weight for the whole kernel)."""
    graph = low.graph
    assert graph is not None
    block = graph.body.block
    top = graph.parent_block()  # the kernel's block: its arguments are the kernel's GM buffers
    assert top is not None
    args = tuple(top.args)
    for g in groups:
        for w, wide in widened_weights(g, args):
            label = low.weight_tasks.get(w)
            if label is None:
                label = low.weight_tasks[w] = _emit(low, block, w, wide, g)
            if label not in g.deps():
                g.after = ArrayAttr([*g.after.data, StringAttr(label)])


def _emit(low: Lowering, block: Block, w: SSAValue, wide: BufferType, before: npu.TasksOp) -> str:
    base = f"{w.name_hint or 'weight'}.cast"
    label, n = base, 1
    while label in low.labels:
        label, n = f"{base}.{n}", n + 1
    low.labels.add(label)
    src = buf(w)
    shape = list(src.get_shape())
    zeros = [0] * len(shape)
    # (tile-to-npu builds into the graph's block: these go to blocks of their own, then
    # in front of the graph)
    scratch, body = Block(), Block(arg_types=[IndexType(), IndexType()])
    with ImplicitBuilder(body):
        narrow_bytes = src.element_type.bitwidth // 8  # type: ignore[attr-defined]
        size = -(-narrow_bytes * math.prod(shape) // UB_ALIGN) * UB_ALIGN
        a = npu.AllocOp(BufferType(shape, src.element_type, Space.UB), 0).result
        npu.DmaOp(Pipe.MTE2, w, zeros, a, zeros)
        npu.SetFlagOp(Pipe.MTE2, Pipe.VECTOR, 0)
        npu.WaitFlagOp(Pipe.MTE2, Pipe.VECTOR, 0)
        b = npu.AllocOp(BufferType(shape, wide.element_type, Space.UB), size).result
        npu.VCastOp(a, b, RoundMode.NONE)
        npu.SetFlagOp(Pipe.VECTOR, Pipe.MTE3, 0)
        npu.WaitFlagOp(Pipe.VECTOR, Pipe.MTE3, 0)
    with ImplicitBuilder(scratch):
        one = arith.ConstantOp(IntegerAttr(1, IndexType()))
        ws = npu.AllocOp(BufferType(shape, wide.element_type, Space.GM))
        ws.result.name_hint = f"{w.name_hint or 'weight'}_wide"
    with ImplicitBuilder(body):
        npu.DmaOp(Pipe.MTE3, b, zeros, ws.result, zeros)
    with ImplicitBuilder(scratch):
        tasks = npu.TasksOp(label, "vector", one.result, 1, [], Region(body))
    for op in (one, ws, *tasks.walk()):
        op.location = before.location
    first = block.first_op
    assert first is not None
    for op in list(scratch.ops):
        op.detach()
        block.insert_op_before(op, first)
    return label


def emit_weight_stage(low: Lowering, st: tile.VecStageOp) -> None:
    """The weight stage's group (into the graph's block, the current builder): one task
    per `[r, c]` tile of its result (tile-assign-shapes' `tile`), writing a GM workspace
    that `low.gm` maps the result to."""
    assert st.vec_tile is not None  # (tile-assign-shapes)
    res = tensor_type(st.results[0])
    whole = (res.get_shape()[0], res.get_shape()[1])
    r, c = st.vec_tile.get_values()
    ncols = whole[1] // c
    for op in st.body.block.ops:
        if not isinstance(op, (*ELEMENTWISE, tile.YieldOp)):
            raise unsupported(op, f"'{op.name}' in a weight stage (element-wise ops only)")
    ws = npu.AllocOp(BufferType(list(whole), res.element_type, Space.GM))
    ws.result.name_hint = st.results[0].name_hint or "weight_ws"
    label = st.label.data
    n = 1
    while label in low.labels:
        label, n = f"{st.label.data}.{n}", n + 1
    low.labels.add(label)
    body = Block(arg_types=[IndexType(), IndexType()])
    with ImplicitBuilder(body):
        i = body.args[1]
        row = arith.MuliOp(arith.DivUIOp(i, index_const(ncols)), index_const(r)).result
        col = arith.MuliOp(arith.RemUIOp(i, index_const(ncols)), index_const(c)).result
        row.name_hint, col.name_hint = "row", "col"

        def part(shape: list[int]) -> list[int]:
            return tiled(tuple(shape), whole, (r, c))

        def at(shape: list[int]) -> list[SSAValue | int]:
            if len(shape) == 1:  # a rank-1 weight along the last axis (a gamma): the task's columns
                return [col if shape[0] == whole[1] else 0]
            return [row if shape[0] == whole[0] else 0, col if shape[1] == whole[1] else 0]

        ub = UbAllocator(low.target)
        inputs = [v for op in st.body.block.ops for v in op.operands if v.owner not in st.body.block.ops]
        for v in dict.fromkeys(inputs):
            shape = list(tensor_type(v).get_shape())
            if len(shape) not in (1, 2):
                raise unsupported(st, f"a weight stage reading a rank-{len(shape)} weight (rank 1 or 2 only)")
            ub.bufs[v] = ub.alloc(part(shape), tensor_type(v).element_type, st.location)
            npu.DmaOp(Pipe.MTE2, low.gm[v], at(shape), ub.bufs[v], [0] * len(shape))
        sync(Pipe.MTE2, Pipe.VECTOR)
        yielded = st.body.block.last_op
        assert isinstance(yielded, tile.YieldOp)
        for op in st.body.block.ops:
            if op is not yielded:
                emit_op(op, r, ub, part=part)
        sync(Pipe.VECTOR, Pipe.MTE3)
        npu.DmaOp(Pipe.MTE3, ub.bufs[yielded.values[0]], [0, 0], ws.result, at(list(whole)))
    one = index_const(1)
    npu.TasksOp(label, "vector", one, (whole[0] // r) * ncols, [], Region(body))
    low.gm[st.results[0]] = ws.result
    low.weight_stages[ws.result] = label


def wait_for_weight_stages(low: Lowering, groups: list[npu.TasksOp]) -> None:
    """Each of `groups` that reads a weight stage's workspace (or a view of it) waits
    for its group."""
    for ws, label in low.weight_stages.items():
        todo, readers = [ws], set()
        while todo:
            for use in todo.pop().uses:
                op = use.operation
                if isinstance(op, npu.ViewOp | npu.ReshapeOp) and op.parent_op() is low.graph:
                    todo.append(op.result)
                while op is not None and not isinstance(op, npu.TasksOp):
                    op = op.parent_op()
                if op is not None:
                    readers.add(op)
        for g in groups:
            if g in readers and label not in g.deps():
                g.after = ArrayAttr([*g.after.data, StringAttr(label)])
