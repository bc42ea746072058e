"""The column plan of a vector phase whose vector tile is narrower than its rows (the
mhc_pre variant's long reductions, a pinned `(4, 64)` tile on 512-wide rows): which
values are computed in which pass over the column chunks (see
`lowering/tile_to_npu/columns.py`, which emits it), or why the phase cannot be
column-tiled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from pto.dialects import tile
from pto.dialects.pto import tensor_type

_ELEMENTWISE = (
    tile.AddOp,
    tile.SubOp,
    tile.MulOp,
    tile.DivOp,
    tile.MaxOp,
    tile.MinOp,
    tile.SqrtOp,
    tile.RsqrtOp,
    tile.AbsOp,
    tile.ExpOp,
    tile.ReciprocalOp,
    tile.MulsOp,
    tile.AddsOp,
    tile.MaxsOp,
    tile.MinsOp,
    tile.CastOp,
)


@dataclass
class Plan:
    k: int  # the row width
    cw: int  # the chunk width (the vector tile's last dim)
    ops: list[Operation]
    late: set[SSAValue] = field(default_factory=set)  # wide values that need a reduction first
    chunk: SSAValue | None = None  # the one column chunk of the task being emitted, if any
    alias: dict[SSAValue, SSAValue] = field(default_factory=dict)  # a stage's result -> the value it yields
    outer: dict[SSAValue, list[SSAValue]] = field(default_factory=dict)  # the reverse

    def wide(self, v: SSAValue) -> bool:
        s = tensor_type(v).get_shape()
        # (a dequant's [N, 1] weight scale is loaded transposed: its rows are the columns)
        return s[-1] == self.k and len(s) in (1, 2) or list(s) == [self.k, 1] and tile.weight_only(v)

    def value(self, v: SSAValue) -> SSAValue:
        return self.alias.get(v, v)


def plan(stages: Sequence[tile.StageBase], views: set[Operation], k: int, cw: int) -> Plan | str:
    """A column-tiling plan for the phase (rows `k` wide, chunks `cw`), or why it
    cannot have one. Values of other widths (`[rows, 1]`, a matmul result) are narrow."""
    ops = [o for st in stages for o in st.body.block.ops if o not in views and not isinstance(o, tile.YieldOp)]
    if k % cw:
        return f"the tile width {cw} does not divide the row width {k}"
    p = Plan(k, cw, ops)
    for st in stages:
        y = st.body.block.last_op
        assert isinstance(y, tile.YieldOp)
        for inner, outer in zip(y.values, st.results, strict=True):
            p.alias[outer] = inner
            p.outer.setdefault(inner, []).append(outer)
    inside = {r for o in ops for r in o.results}
    post_narrow: set[SSAValue] = set()  # narrow values computed from reductions
    for o in ops:
        if isinstance(o, tile.ReduceOp):
            if p.value(o.input) in p.late or not p.wide(o.input):
                return (
                    "a reduction needs a value that itself needs a reduction"
                    if p.wide(o.input)
                    else "a reduction of a narrow value"
                )
            post_narrow.add(o.result)
        elif isinstance(o, tile.RmsNormOp):
            if p.value(o.input) in p.late:
                return "a reduction needs a value that itself needs a reduction"
            p.late.add(o.result)
        elif isinstance(o, (*_ELEMENTWISE, tile.DequantOp)):
            deps = [p.value(v) for v in o.operands if p.value(v) in inside]
            if p.wide(o.results[0]):
                if any(v in p.late or v in post_narrow for v in deps):
                    p.late.add(o.results[0])
            elif any(p.wide(v) for v in o.operands):
                return f"'{o.name}' turns a wide value into a narrow one"
            else:
                post_narrow.add(o.results[0])
        else:
            return f"'{o.name}' is not column-tiled"
    return p


def elementwise(p: Plan) -> bool:
    """No reduction: every column chunk is independent of the others (PyPTO makes each
    vector tile of such a phase, rows x chunk, a task of its own)."""
    return not any(isinstance(o, tile.ReduceOp | tile.RmsNormOp) for o in p.ops) and not p.late


def loop_need(p: Plan, targets: Sequence[SSAValue]) -> set[SSAValue]:
    """The wide values a column-chunk loop computes or loads to make `targets`."""
    producer: dict[SSAValue, Operation] = {res: o for o in p.ops for res in o.results}
    need: set[SSAValue] = set()
    stack = list(targets)
    while stack:
        v = stack.pop()
        if v not in need:
            need.add(v)
            if v in producer:
                stack += [p.value(u) for u in producer[v].operands if p.wide(u)]
    return need


def loop_frees(
    p: Plan, need: set[SSAValue], stores: Sequence[SSAValue], accumulate: bool
) -> dict[Operation, list[SSAValue]]:
    """The chunk values each op of a loop reads last, freed after it so that the ops after
    it in the same pass reuse their space; what the loop stores at its end stays. A loop
    that accumulates reads each reduction's input at the reduction."""
    computed = {res for o in p.ops for res in o.results}
    last: dict[SSAValue, Operation] = {}
    for o in p.ops:
        if o.results[0] in need and o.results[0] in computed:
            reads = [p.value(u) for u in o.operands]
        elif accumulate and isinstance(o, tile.ReduceOp | tile.RmsNormOp):
            reads = [p.value(o.input)]
        else:
            continue
        for v in reads:
            if v in need:
                last[v] = o
    frees: dict[Operation, list[SSAValue]] = {}
    for v, o in last.items():
        if v not in stores:
            frees.setdefault(o, []).append(v)
    return frees
