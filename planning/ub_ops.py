"""The UB buffers of one vector task copy, op by op, in the order tile-to-npu allocates
and frees them (`lowering/tile_to_npu/vector.py`, `vector_ops.py`, `columns.py`): each
op's result buffers and the temporaries that die with it; a loaded or computed value
is freed after its last reader unless it is stored. The agreement test
(test_vector_plan.py) checks that the two put every buffer at the same offset."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from xdsl.ir import Attribute, Operation, SSAValue

from pto.dialects import pto, tile
from pto.dialects.common import ELEM_BYTES, ReduceKind, elem_name
from pto.dialects.pto import tensor_type
from pto.planning import columns
from pto.planning.columns import Plan
from pto.planning.ub import Arena

Shape = list[int]
Largest = tuple[int, str]


class Copy:
    """One task copy's buffers in the arena: value -> (offset, size), or None for a view
    of another buffer (never freed: the other name may still read it)."""

    def __init__(self, arena: Arena, alias: dict[SSAValue, SSAValue] | None = None):
        self.arena = arena
        self.alias = alias or {}  # a stage's result -> the value its stage yields
        self.bufs: dict[SSAValue, tuple[int, int] | None] = {}
        self.shapes: dict[SSAValue, tuple[Shape, str]] = {}
        self.largest: Largest = (0, "")
        self.weight_only: dict[SSAValue, bool] = {}  # (the IR does not change while a task is measured)

    def key(self, v: SSAValue) -> SSAValue:
        return self.alias.get(v, v)

    def alloc(self, shape: Shape, elem: str, what: str) -> tuple[int, int]:
        n = ELEM_BYTES[elem]
        for d in shape:
            n *= d
        at = self.arena.alloc(n, (elem, tuple(shape)))
        self.largest = max(self.largest, (at[1], f"[{', '.join(map(str, shape))}] {elem} ({what})"))
        return at

    def put(self, v: SSAValue, shape: Shape, elem: str, what: str) -> None:
        self.bufs[v] = self.alloc(shape, elem, what)
        self.shapes[v] = (shape, elem)

    def free(self, v: SSAValue) -> None:
        at = self.bufs.get(self.key(v))
        if at is not None:
            self.arena.free(*at)
            self.bufs[self.key(v)] = None

    def temp(self, shape: Shape, elem: str, what: str) -> tuple[tuple[int, int], tuple]:
        """A chunk loop's temporary: its place and the kind of slot it frees to."""
        return self.alloc(shape, elem, what), (elem, tuple(shape))

    def release(self, temps: list[tuple[tuple[int, int], tuple]]) -> None:
        """Free temporaries for later buffers of their kinds, in order (as
        `lowering.tile_to_npu.columns._release`)."""
        for (off, _), kind in temps:
            self.arena.free_slot(off, kind)

    def free_slot(self, v: SSAValue) -> None:
        """Free `v` for a later buffer of its element type and shape only (as
        `lowering.tile_to_npu.ub.UbAllocator.free_slot`)."""
        at = self.bufs.get(self.key(v))
        if at is not None:
            shape, elem = self.shapes[self.key(v)]
            self.arena.free_slot(at[0], (elem, tuple(shape)))
            self.bufs[self.key(v)] = None


# Ops whose one vector instruction over the tile reads every element before it writes it
# (a reciprocal and `c / x` divide a one-element constant by it): their result may take
# the buffer of an operand of the same type that dies at them (the device's element-wise
# instructions allow dst == src, and PyPTO's UB plans reuse buffers so). Not a cast
# (another type).
IN_PLACE = (pto.BinaryBase, pto.UnaryBase, pto.ScalarBase)


def in_place(op: Operation, dying: Iterable[SSAValue]) -> SSAValue | None:
    """The value among `dying` (op's operands, as their buffers are named, that no later
    op reads) whose buffer `op`'s result takes, freed before the result is allocated."""
    if not isinstance(op, IN_PLACE):
        return None
    return next((v for v in dying if v.type == op.results[0].type), None)


def select_constants(op: pto.SelectBase) -> list[Attribute | None]:
    """The element type of each of `op`'s immediates (None for a tensor operand): the
    compared values' for `rhs`, the result's for `on_true` and `on_false`."""
    compared = tensor_type(op.inputs[0]).element_type
    selected = tensor_type(op.result).element_type
    return [None if isinstance(x, SSAValue) else (compared if i < 2 else selected) for i, x in enumerate(op.items())]


def _elem(v: SSAValue) -> str:
    return elem_name(tensor_type(v).element_type)


def _rows(v: SSAValue, r: int, c: Copy, chunk: tuple[int, int] | None = None) -> Shape:
    """A value's buffer: `[r, ...]` for a token tile, its own shape when weight-only; with
    `chunk` (K, cw), a K-wide one is cw wide."""
    s = list(tensor_type(v).get_shape())
    shape = s if tile.weight_only(v, c.weight_only) else [r, *s[1:]]
    if chunk is not None and shape[-1] == chunk[0]:
        shape[-1] = chunk[1]
    return shape


def op_buffers(op: Operation, r: int, c: Copy, chunk: tuple[int, int] | None = None) -> None:
    """The buffers `vector_ops.emit_op` allocates for `op`: results kept, temporaries freed."""
    tmps: list[tuple[int, int]] = []

    def tmp(shape: Shape, elem: str) -> None:
        tmps.append(c.alloc(shape, elem, op.name))

    def out(v: SSAValue) -> None:
        c.put(v, _rows(v, r, c, chunk), _elem(v), op.name)

    def shape_of(v: SSAValue) -> Shape:
        return c.shapes[c.key(v)][0] if c.key(v) in c.shapes else _rows(v, r, c, chunk)

    if isinstance(op, tile.ReshapeOp):
        c.bufs[op.result] = None
        if c.key(op.input) in c.bufs:  # neither name is freed before the copy ends
            c.bufs[c.key(op.input)] = None
        c.shapes[op.result] = (_rows(op.result, r, c), _elem(op.result))
        return
    if isinstance(op, tile.ReduceOp):
        out(op.result)
        if op.kind.data == ReduceKind.MEAN:
            tmp(_rows(op.result, r, c, chunk), "f32")
    elif isinstance(op, tile.RmsNormOp):
        cols = tensor_type(op.input).get_shape()[-1]
        if _elem(op.input) != "f32":
            tmp(shape_of(op.input), "f32")
        tmp([r, cols], "f32")
        sq = tmps[-1]
        tmp([r, 1], "f32")
        tmp([r, 1], "f32")
        tmps.remove(sq)
        c.arena.free(*sq)  # (vector_ops._rms_norm releases the squares early)
        res_f32 = _elem(op.result) == "f32"
        if res_f32:
            out(op.result)
        else:
            tmp([r, cols], "f32")
        if op.gamma is not None and _elem(op.gamma) != "f32":
            tmp(shape_of(op.gamma), "f32")
        if not res_f32:
            out(op.result)
    elif isinstance(op, tile.QuantOp):
        cols = tensor_type(op.input).get_shape()[-1]
        if _elem(op.input) != "f32":
            tmp([r, cols], "f32")
        tmp([r, 1], "f32")
        tmp([r, 1], "f32")
        out(op.scale)
        # (vector_ops._quant: the quotient, 127 / amax for a scale-first order, then each
        # cast's source released as the next is made)
        tmp([r, cols], "f32")
        t = tmps[-1]
        if op.scale_row:
            tmp([r, 1], "f32")
        for elem in ("i32", "f16"):
            tmp([r, cols], elem)
            tmps.remove(t)
            c.arena.free(*t)
            t = tmps[-1]
        out(op.quantized)
    elif isinstance(op, tile.DequantOp) and op.scales_product is not None:
        out(op.result)
        tmp(shape_of(op.result), "f32")  # (the scales' product, as wide as the result)
    elif isinstance(op, tile.SelectOp):
        out(op.result)
        for const in select_constants(op):  # (each immediate a one-element vdup)
            if const is not None:
                tmp([1] * len(tensor_type(op.result).get_shape()), elem_name(const))
    elif isinstance(op, tile.ReciprocalOp | tile.RdivsOp):
        out(op.result)
        tmp([1] * len(tensor_type(op.result).get_shape()), _elem(op.result))  # (the constant it divides)
    else:  # one result buffer: elementwise, cast, dequant, slice, concat, transpose
        for v in op.results:
            out(v)
    for at in tmps:
        c.arena.free(*at)


def whole_rows_task(
    phase: Sequence[tile.VecStageOp],
    views: set[Operation],
    r: int,
    arena: Arena,
    leaves: Callable[[SSAValue], bool],
    only: set[Operation] | None = None,
) -> Largest:
    """One copy of a whole-rows task (`VectorPhase.whole_rows`): the inputs loaded, then
    the ops in order, each value freed after its last reader unless it `leaves` UB.
    With `only`, of those ops alone (a part the phase may be cut into): what they read
    from the other ops is loaded."""
    alias: dict[SSAValue, SSAValue] = {
        outer: inner
        for st in phase
        for inner, outer in zip(st.body.block.last_op.operands, st.results, strict=True)  # type: ignore[union-attr]
    }
    c = Copy(arena, alias)
    inside: set[Operation] = {o for st in phase for o in st.body.block.ops} - views
    inside |= set(phase)
    if only is not None:  # a stage's result is inside if the op that yields it is
        inside = set(only)
        alias_in = {v: u for v, u in alias.items() if isinstance(u.owner, Operation) and u.owner in only}
    mine = [o for st in phase for o in st.body.block.ops if o not in views and (only is None or o in only)]
    ops = [o for o in mine if not isinstance(o, tile.YieldOp)]
    for op in mine:  # (a yield may load a value)
        for v in op.operands:
            if v in c.bufs or isinstance(v.owner, Operation) and v.owner in inside:
                continue
            if only is not None and v in alias_in:
                continue
            shape, elem = _rows(v, r, c), _elem(v)
            if (
                tile.weight_only(v)
                and len(shape) == 2
                and shape[1] == 1
                and isinstance(op, tile.DequantOp)
                and v is op.w_scale
            ):
                shape = [1, shape[0]]  # a [N, 1] weight scale is loaded transposed
            c.put(v, shape, elem, f"input of {op.name}")
    last = {alias.get(v, v): i for i, o in enumerate(ops) for v in o.operands}
    keep = {alias.get(v, v) for st in phase for v in st.results if leaves(v)}
    if only is not None:  # a part's values read by the ops after it are stored for them
        keep |= {r for o in ops for r in o.results if any(u.operation not in only for u in r.uses)}
    for i, op in enumerate(ops):
        dying = [v for v in dict.fromkeys(alias.get(u, u) for u in op.operands) if last.get(v) == i and v not in keep]
        if (v := in_place(op, [v for v in dying if c.bufs.get(v) is not None])) is not None:
            c.free(v)
        op_buffers(op, r, c)
        for v in dying:
            c.free(v)
    return c.largest


def column_task(p: Plan, r: int, arena: Arena, leaves: Callable[[SSAValue], bool]) -> Largest:
    """One copy of a column-tiled task (`columns.task`): narrow inputs and accumulators,
    then each loop's chunk buffers (loaded, computed, accumulated)."""
    c = Copy(arena, p.alias)
    inside = {res for o in p.ops for res in o.results}
    stored_in = lambda v: any(leaves(u) for u in p.outer.get(v, []))  # noqa: E731
    for o in p.ops:
        for v in o.operands:
            if p.value(v) not in inside and v not in c.bufs and not p.wide(v):
                c.put(v, _rows(v, r, c), _elem(v), f"input of {o.name}")
    accs = [o for o in p.ops if isinstance(o, columns.REDUCTIONS)]
    for o in accs:
        c.alloc([r, 1], "f32", f"accumulator of {o.name}")
    for ps in columns.schedule(p, stored_in):
        if ps.targets(p):
            _chunk_loop(p, r, c, ps.targets(p), ps.stores, ps.folds)
        for o in ps.after:
            if isinstance(o, tile.ReduceOp) and o.kind.data == ReduceKind.MEAN or isinstance(o, tile.RmsNormOp):
                c.alloc([r, 1], "f32", o.name)
            elif isinstance(o, tile.QuantOp):  # (columns.task: the divisor, then the scale)
                c.alloc([r, 1], "f32", o.name)
                c.put(o.scale, [r, 1], "f32", o.name)
            elif not isinstance(o, tile.ReduceOp):
                op_buffers(o, r, c)
    return c.largest


def _chunk_loop(
    p: Plan, r: int, c: Copy, targets: Sequence[SSAValue], keep: Sequence[SSAValue], folds: Sequence[Operation]
) -> None:
    producer: dict[SSAValue, Operation] = {res: o for o in p.ops for res in o.results}
    need = columns.loop_need(p, targets)
    frees = columns.loop_frees(p, need, keep, folds)
    loaded: set[SSAValue] = set()
    for o in p.ops:
        for v in o.operands:
            if p.value(v) in need and p.value(v) not in producer and v not in loaded:
                loaded.add(v)
                s = list(tensor_type(v).get_shape())
                shape = [p.cw] if len(s) == 1 else [1, p.cw] if tile.weight_only(v) else [r, p.cw]
                c.put(v, shape, _elem(v), f"chunk of an input of {o.name}")
    for o in p.ops:
        res = o.results[0]
        if res in need and res in producer:
            if isinstance(o, tile.RmsNormOp):
                _normalise(o, r, p.cw, c)
            elif isinstance(o, tile.QuantOp):
                _quantise(o, r, p.cw, c)
            else:
                dead = in_place(o, [v for v in frees.get(o, []) if c.bufs.get(v) is not None])
                if dead is not None:
                    c.free_slot(dead)
                op_buffers(o, r, c, (p.k, p.cw))
            for u in p.outer.get(res, []):
                c.shapes[u] = c.shapes.get(res, ([r, p.cw], _elem(res)))
        if o in folds:
            temps = [c.temp([r, 1], "f32", f"partial {o.name}")]
            if isinstance(o, tile.QuantOp | tile.RmsNormOp):
                shape, elem = c.shapes.get(o.input, ([r, p.cw], _elem(o.input)))
                if elem != "f32":
                    temps.append(c.temp(shape, "f32", o.name))
                if isinstance(o, tile.RmsNormOp):
                    temps.append(c.temp(shape, "f32", o.name))
            c.release(temps)
        for v in frees.get(o, []):
            c.free_slot(v)


def _quantise(o: tile.QuantOp, r: int, cw: int, c: Copy) -> None:
    shape, elem = c.shapes.get(o.input, ([r, cw], _elem(o.input)))
    temps = [c.temp(shape, "f32", o.name)] if elem != "f32" else []
    for e in ("f32", "i32", "f16"):  # (columns._quantise keeps each step's source)
        temps.append(c.temp([r, cw], e, o.name))
        if e == "f32" and o.scale_row:
            temps.append(c.temp([r, 1], "f32", o.name))
    c.put(o.quantized, [r, cw], "i8", o.name)
    c.release(temps)


def _normalise(o: tile.RmsNormOp, r: int, cw: int, c: Copy) -> None:
    shape, elem = c.shapes.get(o.input, ([r, cw], _elem(o.input)))
    temps = [c.temp(shape, "f32", o.name)] if elem != "f32" else []
    y = c.temp([r, cw], "f32", o.name)
    if o.gamma is not None:
        g_shape, g_elem = c.shapes.get(o.gamma, ([cw], _elem(o.gamma)))
        if g_elem != "f32":
            temps.append(c.temp(g_shape, "f32", o.name))
    if _elem(o.result) != "f32":
        c.put(o.result, [r, cw], _elem(o.result), o.name)
        temps.append(y)
    else:  # (the f32 quotient is the result: a later pass's chunk loop may free it)
        c.bufs[o.result], c.shapes[o.result] = y[0], ([r, cw], "f32")
    c.release(temps)
