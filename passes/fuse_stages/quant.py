"""Quant and dequant written from primitives -> `pto.quant`, `pto.dequant` (the forms:
passes/pto_fuse_stages.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from pto.dialects import pto
from pto.dialects.common import ReduceKind, RoundMode
from pto.passes.fuse_stages.match import (
    Miss,
    _def,
    _elem,
    _feeders,
    _found,
    _fuse,
    _imm,
    _is_f32,
    _need,
    _one_block,
    _other,
    _scalar,
    _shape,
)

# ------------------------------------------------------------------ dequant


def _scaled(v: SSAValue, fits: Callable[[tuple[int, ...]], bool], expected: str) -> tuple[pto.MulOp, SSAValue]:
    """(the multiply, the scale) when the only reader of `v` multiplies it by an f32
    scale whose shape `fits` and that broadcasts without widening `v`."""

    def scale(op: Operation) -> SSAValue | None:
        if not isinstance(op, pto.MulOp) or _shape(op.result) != _shape(v):
            return None
        s = _other(op, v)
        return s if s is not v and _elem(s) == "f32" and fits(_shape(s)) else None

    readers = [u.operation for u in v.uses]
    mul = next((op for op in readers if scale(op) is not None), None)
    if mul is None:
        at = readers[0] if readers else v.owner
        assert isinstance(at, Operation)
        found = f"'{at.name}'" + (f" by a {_other(at, v).type}" if isinstance(at, pto.MulOp) else "")
        raise Miss(at, expected, found if readers else "no reader")
    if (other := next((op for op in readers if op is not mul), None)) is not None:
        raise Miss(other, f"{expected}, the only reader", f"'{other.name}' reading it too")
    s = scale(mul)
    assert s is not None
    return mul, s


def _w_scale_source(ws: SSAValue, n: int) -> SSAValue:
    """The [N, 1] or [N] tensor an in-place reshape made `ws` from, else `ws`."""
    while isinstance(op := ws.owner, pto.ReshapeOp) and op.inplace is not None:
        if _shape(op.input) not in ((n, 1), (1, n), (n,)):
            break
        ws = op.input
    return ws


_Dequant = tuple[list[Operation], SSAValue, SSAValue, SSAValue | None, bool, bool, SSAValue]


def by_a_number(v: SSAValue) -> bool:
    """`v` (an int8 matmul's result cast to f32) read only by one multiply by a number, a
    ReLU (`maxs` 0) before it or not: a matmul's fixpipe dequant (PyPTO's `extend_params`
    scale and relu_type), which runs as written, not an attempt at the AT-11 dequant."""
    use = v.get_user_of_unique_use() if v.has_one_use() else None
    if isinstance(use, pto.MaxsOp) and use.scalar.value.data == 0.0:
        use = use.result.get_user_of_unique_use() if use.result.has_one_use() else None
    return isinstance(use, pto.MulsOp)


def _dequant(cast: pto.CastOp) -> _Dequant:
    """(the ops, acc, act scale, weight scale, weight scale first, scales' product, the
    value replaced) of `f32(acc) * act scale [* weight scale]`, with the weight scale
    first, or `f32(acc) * (act scale * weight scale)`: pto.dequant then keeps that order
    (f32 products round differently in another)."""
    acc = cast.input
    _need((_elem(acc), _elem(cast.result)) == ("i32", "f32") and len(_shape(acc)) == 2, cast, "an i32 -> f32 cast")
    mode = f"{cast.round.data}" + (" sat" if cast.sat else "")
    rint = cast.round.data == RoundMode.RINT and cast.sat is None
    _need(rint, cast, "a 'rint' cast of the i32 accumulator to f32", f"a '{mode}' cast")
    m, n = _shape(acc)

    def act(s: tuple[int, ...]) -> bool:
        return s == (m, 1)

    def weight(s: tuple[int, ...]) -> bool:
        return s in ((1, n), (n,))

    if (product := _scales_product(cast.result, act, weight)) is not None:
        mul, prod, act_s, ws = product
        w = _w_scale_source(ws, n)
        ops = [cast, prod, mul]
        return _one_block([*ops, *_feeders(ws, w, ops)]), acc, act_s, w, False, True, mul.result
    a, s = _scaled(cast.result, lambda s: act(s) or weight(s), "a multiply by the [M, 1] activation scale")
    if act(_shape(s)):
        try:
            b, ws = _scaled(a.result, weight, "")
        except Miss:  # no weight scale: an activation scale alone
            return _one_block([cast, a]), acc, s, None, False, False, a.result
        act_s, first = s, False
    else:
        b, act_s = _scaled(a.result, act, "the [M, 1] activation scale multiplied in after the weight scale")
        ws, first = s, True
    w = _w_scale_source(ws, n)
    ops = [cast, a, b]
    return _one_block([*ops, *_feeders(ws, w, ops)]), acc, act_s, w, first, False, b.result


def _scales_product(
    v: SSAValue, act: Callable[[tuple[int, ...]], bool], weight: Callable[[tuple[int, ...]], bool]
) -> tuple[pto.MulOp, pto.MulOp, SSAValue, SSAValue] | None:
    """(the multiply, the product, act scale, weight scale) when the only reader of `v`
    multiplies it by `act scale * weight scale` (either order) that nothing else reads."""
    readers = [u.operation for u in v.uses]
    if len(readers) != 1 or not isinstance(mul := readers[0], pto.MulOp):
        return None
    prod = _other(mul, v).owner
    if not isinstance(prod, pto.MulOp) or len(list(prod.result.uses)) != 1 or _shape(prod.result) != _shape(v):
        return None
    a, w = (prod.lhs, prod.rhs) if act(_shape(prod.lhs)) else (prod.rhs, prod.lhs)
    if not (act(_shape(a)) and weight(_shape(w)) and _elem(a) == _elem(w) == "f32"):
        return None
    return mul, prod, a, w


class DequantPattern(RewritePattern):
    """cast i32 -> f32, * act scale [* weight scale] (or the weight scale first) ->
    pto.dequant (anchored on the cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.CastOp, rewriter: PatternRewriter) -> None:
        try:
            ops, acc, act, w, first, product, out = _dequant(op)
        except Miss:
            return
        _fuse(rewriter, ops, pto.DequantOp(acc, act, w, first, product), [out])


# ------------------------------------------------------------------ quant


def _cast(v: SSAValue, src: str, dst: str, mode: RoundMode | None, reader: Operation) -> pto.CastOp:
    """The cast `src -> dst` that makes `v`, in round `mode` (None: any, the cast being
    exact for the values it takes)."""
    expected = f"a '{mode}' cast {src} -> {dst}" if mode is not None else f"a cast {src} -> {dst}"
    op = _def(v, pto.CastOp, expected, reader)
    found = f"a '{op.round.data}' cast {_elem(op.input)} -> {_elem(v)}"
    same_mode = mode is None or op.round.data == mode
    _need((_elem(op.input), _elem(v)) == (src, dst) and same_mode, op, expected, found)
    return op


def _scaled_by(m: pto.MulOp, kind: type[Operation], c: float | None) -> tuple[SSAValue, SSAValue, list[Operation]]:
    """(y, amax, [the op of amax, m]) of `m` = y * (c / amax) (a `pto.rdivs` of c, or a
    `pto.reciprocal` for c None), that op read by `m` only."""
    what = "y * (1 / amax)" if c is None else f"y * ({c:g} / amax)"
    r = next((x.owner for x in (m.rhs, m.lhs) if isinstance(x.owner, kind)), None)
    _need(r is not None, m, what, "a multiply by another value")
    assert isinstance(r, pto.RdivsOp | pto.ReciprocalOp)
    _need(
        (c is None or isinstance(r, pto.RdivsOp) and _scalar(r) == c) and r.result.has_one_use(),
        r,
        f"{what[4:]}, read by the multiply only",
    )
    return _other(m, r.result), r.input, [r, m]


def _ratio(v: SSAValue, reader: Operation) -> tuple[SSAValue, SSAValue, list[Operation], str | None]:
    """(y, amax, ops, order) of `y * 127 / amax`, `y / amax * 127` (order
    "divide_first") or `y * (127 / amax)` ("scale_first"); the op reading amax is the
    first of `ops`."""
    expected = "y * 127 / amax (or y / amax * 127, y * (127 / amax))"
    if isinstance(v.owner, pto.MulsOp):
        s = _def(v, pto.MulsOp, expected, reader)
        _need(_scalar(s) == 127.0, s, "a multiply by 127", _imm(s))
        if isinstance(m := s.input.owner, pto.MulOp):  # y * (1 / amax) * 127
            y, am, ops = _scaled_by(m, pto.ReciprocalOp, None)
            return y, am, [*ops, s], "reciprocal_first"
        d = _def(s.input, pto.DivOp, "y / amax", s)
        return d.lhs, d.rhs, [d, s], "divide_first"
    if isinstance(m := v.owner, pto.MulOp):
        s127 = next((x.owner for x in (m.rhs, m.lhs) if isinstance(x.owner, pto.MulsOp)), None)
        if s127 is not None and _scalar(s127) == 127.0 and isinstance(s127.input.owner, pto.ReciprocalOp):
            # y * ((1 / amax) * 127)
            _need(s127.result.has_one_use(), s127, "(1 / amax) * 127, read by the multiply only")
            r = s127.input.owner
            _need(r.result.has_one_use(), r, "1 / amax, read by the multiply by 127 only")
            return _other(m, s127.result), r.input, [r, s127, m], "reciprocal_scale_first"
        y, am, ops = _scaled_by(m, pto.RdivsOp, 127.0)
        return y, am, ops, "scale_first"
    d = _def(v, pto.DivOp, expected, reader)
    by = d.rhs.owner
    if not isinstance(d.lhs.owner, pto.MulsOp) and isinstance(by, pto.MulsOp) and _is_f32(_scalar(by), 1 / 127):
        # (y / (amax / 127) rounds differently from y * 127 / amax: it runs as written)
        raise Miss(d, expected, "y divided by the scale amax * 1/127")
    s = _def(d.lhs, pto.MulsOp, "y * 127 divided by amax", d)
    _need(_scalar(s) == 127.0, s, "a multiply by 127", _imm(s))
    return s.input, d.rhs, [d, s], None


def _absmax(am: SSAValue, reader: Operation) -> tuple[SSAValue, list[Operation]]:
    """(y, ops) when `am` is max(|y|) over the last axis."""
    expected = "amax: 'pto.reduce absmax' of y, or 'pto.reduce max' of 'pto.abs' y"
    red = am.owner
    if not isinstance(red, pto.ReduceOp):
        raise Miss(red if isinstance(red, Operation) else reader, expected, _found(am))
    if red.kind.data == ReduceKind.ABSMAX:
        return red.input, [red]
    _need(red.kind.data == ReduceKind.MAX, red, expected, f"'pto.reduce {red.kind.data}'")
    ab = _def(red.input, pto.AbsOp, expected, red)
    return ab.input, [ab, red]


def _amaxes(y: SSAValue) -> Iterator[SSAValue]:
    """The max(|y|) computed from `y` (a helper called twice computes it twice)."""
    for u in y.uses:
        op = u.operation
        if isinstance(op, pto.ReduceOp) and op.kind.data == ReduceKind.ABSMAX:
            yield op.result
        if isinstance(op, pto.AbsOp):
            for w in op.result.uses:
                if isinstance(w.operation, pto.ReduceOp) and w.operation.kind.data == ReduceKind.MAX:
                    yield w.operation.result


def _scale(y: SSAValue, am: SSAValue, div: Operation) -> tuple[pto.MulsOp, list[Operation]]:
    """The scale `amax * 1/127` and the ops that go with it: of `am` itself (then its only
    reader besides `div`), or of max(|y|) computed again (an exact repeat)."""
    expected = "the scale amax * 1/127 (amax / 127)"

    def scale(op: Operation | None) -> pto.MulsOp | None:
        return op if isinstance(op, pto.MulsOp) and _is_f32(_scalar(op), 1 / 127) else None

    readers = [u.operation for u in am.uses if u.operation is not div]
    if readers:  # the scale reads `am` itself: nothing else may
        s = next((op for op in readers if scale(op)), None)
        if s is None:
            found = _imm(readers[0]) if isinstance(readers[0], pto.MulsOp) else None
            raise Miss(readers[0], expected, found)
        if (other := next((op for op in readers if op is not s), None)) is not None:
            raise Miss(other, "amax read by the division and the scale only", f"'{other.name}' reading it too")
        return s, []
    for a in _amaxes(y):
        if a is not am and (s := scale(a.get_user_of_unique_use())) is not None:
            try:
                return s, _absmax(a, s)[1]
            except Miss:
                continue
    raise Miss(div, f"{expected} beside y / amax", "no scale")


def _quant(q: pto.CastOp) -> tuple[list[Operation], SSAValue, pto.MulsOp, str | None]:
    """(the ops, y, the scale op, the quotient's order) of the quant chain ending in the
    i8 cast `q`."""
    expected = "the quant's last cast: f16 -> i8 'trunc' (saturating or not)"
    found = f"a '{q.round.data}{' sat' if q.sat else ''}' cast {_elem(q.input)} -> {_elem(q.result)}"
    _need(_elem(q.result) == "i8", q, expected, found)
    _need(_elem(q.input) == "f16" and q.round.data == RoundMode.TRUNC, q, expected, found)
    h = _cast(q.input, "i32", "f16", None, q)  # (exact in any mode: the codes are at most 128 in size)
    i = _cast(h.input, "f32", "i32", RoundMode.RINT, h)
    y, am, ratio, order = _ratio(i.input, i)
    div = ratio[0]  # (the op reading amax)
    ab_y, ab = _absmax(am, div)
    _need(ab_y is y, ab[0], "the amax of the value quantised", "the amax of another value")
    _need(_elem(y) == "f32", div, "y in f32", f"{_elem(y)} y")
    _need(_shape(am) == (*_shape(y)[:-1], 1) and _shape(i.input) == _shape(y), div, "a [..., 1] amax over y")
    scale, scale_ops = _scale(y, am, div)
    return _one_block([*ab, *ratio, *scale_ops, scale, i, h, q]), y, scale, order


class QuantPattern(RewritePattern):
    """absmax, x * 127 / amax, the RINT -> ROUND -> TRUNC(sat) casts -> pto.quant
    (anchored on the last cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.CastOp, rewriter: PatternRewriter) -> None:
        try:
            ops, y, scale, order = _quant(op)
        except Miss:
            return
        _fuse(rewriter, ops, pto.QuantOp(y, wrap=op.sat is None, order=order), [op.result, scale.result])
