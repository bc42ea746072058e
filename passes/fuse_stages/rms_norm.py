"""RMSNorm written from primitives -> `pto.rms_norm` (the forms: passes/pto_fuse_stages.py)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from pto.dialects import pto
from pto.dialects.common import ReduceKind
from pto.passes.fuse_stages.match import (
    Miss,
    _def,
    _elem,
    _feeders,
    _fuse,
    _imm,
    _is_f32,
    _need,
    _one_block,
    _other,
    _same,
    _same_block,
    _scalar,
    _shape,
)

_MEAN = "the mean of squares ('pto.reduce mean', or 'pto.reduce sum' and a multiply by 1/K)"


def _one_over_k(scale: pto.MulsOp, v: SSAValue, red: pto.ReduceOp) -> None:
    """`scale` multiplies by 1/K, K the static last dim of `v` (at f32 precision)."""
    k = _shape(v)[-1]
    _need(k >= 1, red, "a mean over a static last dim K", f"'{red.name}' over a dynamic one")
    _need(_is_f32(_scalar(scale), 1 / k), scale, f"a multiply by 1/{k} = {np.float32(1 / k)!s}", _imm(scale))


def _mean_square(m: SSAValue, reader: Operation) -> tuple[SSAValue, list[Operation]]:
    """(x, ops) when `m` (read by `reader`) is the mean of x * x over the last axis:
    `reduce mean`, `reduce sum` then `muls 1/K`, or PyPTO's own `reduce sum(muls ., 1/K)`."""
    if isinstance(m.owner, pto.MulsOp):
        scale = _def(m, pto.MulsOp, _MEAN, reader)
        red = _def(scale.input, pto.ReduceOp, "a 'pto.reduce sum' under the multiply by 1/K", scale)
        _need(red.kind.data == ReduceKind.SUM, red, "a 'pto.reduce sum' under the multiply by 1/K")
        _one_over_k(scale, red.input, red)
        ops: list[Operation] = [red, scale]
    else:
        red = _def(m, pto.ReduceOp, _MEAN, reader)
        _need(red.kind.data in (ReduceKind.MEAN, ReduceKind.SUM), red, _MEAN, f"'pto.reduce {red.kind.data}'")
        ops = [red]
        if red.kind.data == ReduceKind.SUM:  # PyPTO's own rms_norm: sum(x * x * (1/K))
            scale = _def(red.input, pto.MulsOp, f"{_MEAN}, or the sum of the squares times 1/K", red)
            _one_over_k(scale, red.input, red)
            ops = [scale, red]
    sq = _def(ops[0].operands[0], pto.MulOp, "the squares x * x", ops[0])
    _need(_same(sq.lhs, sq.rhs), sq, "the squares x * x", "a product of two values")
    return sq.lhs, [sq, *ops]


def _roots(op: pto.MulOp | pto.DivOp) -> Iterator[tuple[SSAValue, SSAValue]]:
    """(x, r) of `x / r` or `x * r` (either order), r looking like a root to divide by."""
    if isinstance(op, pto.DivOp):
        yield op.lhs, op.rhs
        return
    for x, r in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if isinstance(r.owner, pto.RsqrtOp | pto.ReciprocalOp):
            yield x, r


def _root(op: pto.MulOp | pto.DivOp, r: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """(e, ops) of `op` dividing by sqrt(e): `x / sqrt(e)`, `x * rsqrt(e)` or
    `x * reciprocal(sqrt(e))`. The last is an rsqrt computed alike (1 / sqrt, each
    rounded), so it fuses as the rsqrt form does."""
    if isinstance(op, pto.DivOp):
        root = _def(r, pto.SqrtOp, "x divided by sqrt(mean(x^2) + eps): a 'pto.sqrt'", op)
        return root.input, [root]
    if isinstance(r.owner, pto.RsqrtOp):
        rs = _def(r, pto.RsqrtOp, "x * rsqrt(mean(x^2) + eps)", op)
        return rs.input, [rs]
    rc = _def(r, pto.ReciprocalOp, "x * reciprocal(sqrt(mean(x^2) + eps))", op)
    root = _def(rc.input, pto.SqrtOp, "the reciprocal of a 'pto.sqrt'", rc)
    return root.input, [root, rc]


def _normalises(op: Operation, x: SSAValue, xs: SSAValue) -> None:
    """`op` normalises `x`, the value squared: not gamma * x, whose normalisation rounds
    differently from pto.rms_norm's gamma multiply after it, nor another value."""
    if _same(x, xs):
        return
    g = x.owner
    if isinstance(g, pto.MulOp) and (_same(g.lhs, xs) or _same(g.rhs, xs)):
        raise Miss(
            g,
            "gamma multiplied after the normalisation, as pto.rms_norm does (normalising x * gamma rounds differently)",
            "this multiply of x by gamma before it",
        )
    raise Miss(op, "the squared value normalised", f"'{op.name}' of another value")


def _norm_of(op: pto.MulOp | pto.DivOp, x: SSAValue, r: SSAValue) -> tuple[SSAValue, float, list[Operation]]:
    """`_norm` for one choice of x and the root operand r."""
    e, root = _root(op, r)
    add = _def(e, pto.AddsOp, "mean(x^2) + eps: a 'pto.adds' under the root", root[0])
    _need(0 < (eps := _scalar(add)) < math.inf, add, "a 'pto.adds' of eps > 0", _imm(add))
    xs, ms = _mean_square(add.input, add)
    _normalises(op, x, xs)
    shape = _shape(x)
    _need(_elem(x) == "f32", op, "the math in f32, as pto.rms_norm's", f"{_elem(x)} math")
    _need(shape[-1] >= 1, op, "a static last dim", "a dynamic one")
    _need(_shape(op.result) == shape and _shape(e) == (*shape[:-1], 1), op, "a [..., 1] root broadcast over x")
    return x, eps, [*ms, add, *root, op]


def _norm(op: pto.MulOp | pto.DivOp) -> tuple[SSAValue, float, list[Operation]]:
    """(x, eps, the ops, the squares' multiply first) when `op` normalises x by
    sqrt(mean(x^2, last axis) + eps), all in f32; else the Miss of the first root tried."""
    misses = []
    for x, r in _roots(op):
        try:
            return _norm_of(op, x, r)
        except Miss as m:
            misses.append(m)
    raise misses[0] if misses else Miss(op, "x / sqrt(mean(x^2) + eps), x * rsqrt(...) or x * reciprocal(sqrt(...))")


def _gamma_source(g: SSAValue, k: int) -> SSAValue | None:
    """The [K] float tensor behind `g` ([K] or [1, K]), through exact casts to f32 and
    in-place reshapes; the deepest one, as the ops between are weight-only work."""
    found = None
    while True:
        if _shape(g) == (k,):
            found = g
        op = g.owner
        if isinstance(op, pto.CastOp) and _elem(op.input) in ("bf16", "f16") and _elem(g) == "f32":
            g = op.input
        elif isinstance(op, pto.ReshapeOp) and op.inplace is not None and _shape(op.input) in ((k,), (1, k)):
            g = op.input
        else:
            return found


def _gamma(n: SSAValue, k: int) -> tuple[pto.MulOp, SSAValue] | None:
    """(the multiply, the [K] gamma) when the only use of `n` is `n * gamma`."""
    mul = n.get_user_of_unique_use()
    if not isinstance(mul, pto.MulOp) or _shape(mul.result) != _shape(n):
        return None
    g = _other(mul, n)
    if _shape(g) not in ((k,), (1, k)) or (src := _gamma_source(g, k)) is None:
        return None
    return mul, src


def _norm_input(x: SSAValue) -> SSAValue:
    """rms_norm casts its input to f32 exactly: read the bf16/f16 source of such a cast."""
    cast = x.owner
    if isinstance(cast, pto.CastOp) and _elem(cast.input) in ("bf16", "f16"):
        return cast.input
    return x


def _rms_norm(op: pto.MulOp | pto.DivOp) -> tuple[list[Operation], SSAValue, SSAValue | None, float, SSAValue]:
    """(the ops, x, gamma, eps, the value replaced) of the RMSNorm [* gamma] normalising at `op`."""
    x, eps, ops = _norm(op)
    gamma, out = None, op.result
    if (g := _gamma(op.result, _shape(x)[-1])) is not None:
        mul, gamma = g
        ops += [mul, *_feeders(_other(mul, op.result), gamma, [*ops, mul])]
        out = mul.result
    src, squares = _norm_input(x), ops[0]
    for v in dict.fromkeys([x, *squares.operands]):  # x, and x again or x cast again
        ops += _feeders(v, src, ops)
    return _one_block(ops), src, gamma, eps, out


class RmsNormPattern(RewritePattern):
    """Primitive RMSNorm [* gamma] -> pto.rms_norm (anchored on the normalising op)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.MulOp | pto.DivOp, rewriter: PatternRewriter) -> None:
        try:
            ops, x, gamma, eps, out = _rms_norm(op)
        except Miss:
            return
        _fuse(rewriter, ops, pto.RmsNormOp(x, gamma, eps, out.type), [out])


class RmsNormOperandsPattern(RewritePattern):
    """A `pto.rms_norm` reads its operands before their exact casts to f32: its gamma
    (SK03.md's template casts gamma before the loop: weight-only work pto-to-tile would
    reject) and its input (as the fused primitive form does); rms_norm casts both."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.RmsNormOp, rewriter: PatternRewriter) -> None:
        g, x, k = op.gamma, _norm_input(op.input), _shape(op.input)[-1]
        src = _gamma_source(g, k) if g is not None else None
        mul = None
        if g is None and _elem(op.result) == "f32" and (found := _gamma(op.result, k)) is not None:
            mul, src = found  # rms_norm(x) * gamma, the gamma multiply in f32 as rms_norm's own
        if (src is None or src is g) and x is op.input:
            return
        src = g if src is None else src
        ops: list[Operation] = [op] if mul is None else [op, mul]
        g_read = g if mul is None else _other(mul, op.result)
        feeders = (_feeders(g_read, src, ops) if g_read is not None and src is not None else []) + _feeders(
            op.input, x, ops
        )
        if not _same_block([*ops, *feeders]):
            return
        out = op.result if mul is None else mul.result
        _fuse(rewriter, [*ops, *feeders], pto.RmsNormOp(x, src, op.eps.value.data, out.type), [out])
