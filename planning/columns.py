"""The column plan of a vector phase whose vector tile is narrower than its rows (the
mhc_pre variant's long reductions, a pinned `(4, 64)` tile on 512-wide rows): which
values are computed in which pass over the column chunks (see
`lowering/tile_to_npu/columns.py`, which emits it), or why the phase cannot be
column-tiled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from pto.dialects import tile
from pto.dialects.common import elem_name
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
    tile.LogOp,
    tile.ReciprocalOp,
    tile.MulsOp,
    tile.AddsOp,
    tile.MaxsOp,
    tile.MinsOp,
    tile.RdivsOp,
    tile.SelectOp,
    tile.CastOp,
)


# How a refusal names the ops kernels write that a column plan does not cut.
_KINDS: dict[type[Operation], str] = {
    tile.SliceOp: "a column slice of a value computed in the phase",
    tile.ConcatOp: "a concatenation",
    tile.ReshapeOp: "a reshape of a token tile",
    tile.TransposeOp: "a transpose of a token tile",
}
# Ops that fold their input's chunks into a per-row accumulator: a reduction, the sum of
# squares of an rms_norm, the amax of a quant.
REDUCTIONS = (tile.ReduceOp, tile.RmsNormOp, tile.QuantOp)


@dataclass
class Plan:
    k: int  # the row width
    cw: int  # the chunk width (the vector tile's last dim)
    ops: list[Operation]
    late: set[SSAValue] = field(default_factory=set)  # wide values that need a reduction first
    # The pass over the chunks that computes each value (wide), or after which it is
    # known (narrow): a reduction's result is one pass after its input's.
    level: dict[SSAValue, int] = field(default_factory=dict)
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
    for o in ops:
        deps = max((p.level.get(p.value(v), 0) for v in o.operands), default=0)
        if isinstance(o, REDUCTIONS):
            if not p.wide(o.input):
                return "a reduction of a narrow value"
            if isinstance(o, tile.ReduceOp) and (e := elem_name(tensor_type(o.input).element_type)) != "f32":
                # (its chunks' partials would be f32: the whole row's sum rounds as the device's)
                return f"a reduction of {e} values (the device reduces them in {e}, a row at a time)"
            # (one pass more than its input: the reduction is known when that pass ends; a
            # quant's rows are quantised in that pass, by the amax of the one before)
            for res in o.results:
                p.level[res] = max(deps, p.level.get(p.value(o.input), 0) + 1)
        elif isinstance(o, (*_ELEMENTWISE, tile.DequantOp)):
            if p.wide(o.results[0]):
                p.level[o.results[0]] = deps
            elif any(p.wide(v) for v in o.operands):
                return f"'{o.name}' turns a wide value into a narrow one"
            else:  # narrow work runs between passes: after the first at the earliest
                p.level[o.results[0]] = max(deps, 1)
        else:
            return f"{_KINDS.get(type(o), repr(o.name))} is not cut into column chunks"
    p.late = {v for v, n in p.level.items() if n > 0 and p.wide(v)}
    return p


def elementwise(p: Plan) -> bool:
    """No reduction: every column chunk is independent of the others (PyPTO makes each
    vector tile of such a phase, rows x chunk, a task of its own)."""
    return not any(isinstance(o, REDUCTIONS) for o in p.ops) and not p.late


@dataclass
class Pass:
    """One loop over the column chunks: it folds the chunks of `folds`' inputs into their
    accumulators and stores `stores`; then `after` runs once on `[rows, 1]` (the
    reductions it finished, the narrow ops that needed them), in program order."""

    folds: list[Operation]
    stores: list[SSAValue]
    after: list[Operation]

    def targets(self, p: Plan) -> list[SSAValue]:
        return [p.value(o.operands[0]) for o in self.folds] + self.stores


def schedule(p: Plan, stored: Callable[[SSAValue], bool]) -> list[Pass]:
    """The passes of a task, one per level (an RMSNorm then the amax of its result: three,
    the sum of squares, the amax of the normalised rows, the quantised rows); `stored`
    says which values the task stores."""
    reductions: list[Operation] = [o for o in p.ops if isinstance(o, REDUCTIONS)]
    wide = [v for o in p.ops for v in o.results if p.wide(v)]
    last = max(
        [p.level.get(v, 0) for v in wide if stored(v)]
        + [p.level.get(p.value(o.operands[0]), 0) for o in reductions]
        + [0]
    )
    passes = []
    for n in range(last + 1):
        folds = [o for o in reductions if p.level.get(p.value(o.operands[0]), 0) == n]
        after = [
            o
            for o in p.ops
            if o in folds or not p.wide(o.results[0]) and o not in reductions and p.level[o.results[0]] == n + 1
        ]
        passes.append(Pass(folds, [v for v in wide if p.level.get(v, 0) == n and stored(v)], after))
    return passes


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
    p: Plan, need: set[SSAValue], stores: Sequence[SSAValue], folds: Sequence[Operation]
) -> dict[Operation, list[SSAValue]]:
    """The chunk values each op of a loop reads last, freed after it so that the ops after
    it in the same pass reuse their space; what the loop stores at its end stays. A loop
    reads each reduction's input it folds at the reduction."""
    computed = {res for o in p.ops for res in o.results}
    last: dict[SSAValue, Operation] = {}
    for o in p.ops:
        if o.results[0] in need and o.results[0] in computed:
            reads = [p.value(u) for u in o.operands]
        elif o in folds:
            reads = [p.value(o.operands[0])]
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
