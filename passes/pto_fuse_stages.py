"""`pto-fuse-stages`: rewrite SK-03 stages written from primitives into the fused ops.

Real kernels spell RMSNorm, quant and dequant out by hand; classification, staging and
the vector lowering only know `pto.rms_norm`, `pto.quant` and `pto.dequant`. Each
pattern below recognises one stage, exactly, and replaces it; anything else is left
alone. Every intermediate of a matched stage must have no use outside it (a value read
elsewhere would have to be kept, and the stage would be computed twice).

RMSNorm (the result is f32, the type of the value replaced; K = the static last dim):

    [%xf = pto.cast %x none]                       bf16/f16 -> f32; else %xf is f32 already
    %sq = pto.mul %xf, %xf
    %m  = pto.reduce mean %sq                       or: pto.reduce sum %sq + pto.muls 1/K,
                                                    or: pto.reduce sum (pto.muls %sq, 1/K)
    %e  = pto.adds %m, eps                          eps > 0
    %n  = pto.mul %xf, (pto.rsqrt %e)               either order; or pto.div %xf, (pto.sqrt %e)
    [%o = pto.mul %n, %g]                           either order; %g is [K] or [1, K]
      -> pto.rms_norm %x [, %gamma] eps = eps

`%gamma` is the [K] tensor behind %g, found through in-place reshapes between [K] and
[1, K] and exact casts to f32 (rms_norm casts gamma itself); when there is none (a
[1, K] argument) the gamma multiply is left as it is after the fused norm: rms_norm
takes only a [K] gamma, and reshaping the argument would be weight-only work that
pto-to-tile rejects. The fused op reads the cast's bf16/f16 source %x (rms_norm casts
exactly, like the cast did); a cast that is also read elsewhere (a matmul of %xf) stays
for those readers, and the norm is still fused: reading %x instead of %xf moves half
the bytes and does not tie the norm to the cast's stage. hc_pre's
`div(matmul, sqrt(mean(x^2) + eps))` divides another value than the one squared: not
an RMSNorm of a tensor, so it does not match.

Casts and reshapes that only the replaced ops read (the cast of x, a gamma's cast and
reshape, a weight scale's reshape) are erased with them.

A `pto.rms_norm` of exact casts to f32 (its input, or its gamma, also through in-place
reshapes: SK03.md's template casts gamma before the loop) reads the uncast values, as
rms_norm casts both itself; an f32 `pto.rms_norm` without gamma whose only use is a
multiply by a gamma ([K] or [1, K], found as above) takes that gamma.

Dequant (acc [M, N] i32):

    %f = pto.cast %acc rint                         i32 -> f32
    %a = pto.mul %f, %s                             either order; %s [M, 1] f32
    [%b = pto.mul %a, %ws]                          either order; %ws [1, N] or [N] f32
      -> pto.dequant %acc, %s [, %w_scale]

`%w_scale` is %ws, or the [N, 1] / [N] tensor behind it through in-place reshapes.
The weight scale applied before the activation scale is not recognised: pto.dequant
multiplies by the activation scale first, and the other order rounds differently.

Quant (AT-11; %y f32):

    %am = pto.reduce absmax %y                      or: pto.reduce max (pto.abs %y)
    %s  = pto.muls %am, 1/127
    %yq = pto.muls (pto.div %y, %am), 127.0         or: pto.div (pto.muls %y, 127.0), %am
    %q  = pto.cast (pto.cast (pto.cast %yq rint -> i32) round -> f16) trunc sat -> i8
      -> %q, %s = pto.quant %y

(The f32 -> i32 cast may carry `sat`: the interpreter saturates to i32 either way. A
direct f32 -> i8 cast does not verify: the hardware has none.)

Numerics (interp/numerics.py) of the fused ops against the primitive chains: the
`reduce mean` + `sqrt` + `div` norm and both dequant forms are bit-exact. A sum times
the f32 immediate 1/K differs from the mean (a division by K) in the last bit unless K
is a power of two; `x * rsqrt(e)` differs from rms_norm's `x / sqrt(e)` in the last
bit. pto.quant computes `x * 127 / amax` (bit-exact with the `muls` then `div` chain)
and the scale `amax / 127`; `(x / amax) * 127` can differ in the last bit, which
moves an int8 value by one where it lands on a rint tie, and `amax * (1/127)` differs
from `amax / 127` in the last bit. An int8 value off by one counts against SK03.md's
acceptance rule (at most 0.5% of the elements), but ties are rare; the f32 and bf16
differences are far inside it.

Hints (`pto.label`, `pto.vec_tile`, any discardable attribute) of the replaced ops
move to the fused op: per attribute, the last op's (in program order) wins, else the
first op's that has one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pto.dialects import pto
from pto.dialects.common import ReduceKind, RoundMode, elem_name
from pto.dialects.pto import check_hint

# ------------------------------------------------------------------ helpers

_Op = TypeVar("_Op", bound=Operation)


def _elem(v: SSAValue) -> str:
    return elem_name(v.type.element_type) if isinstance(v.type, TensorType) else ""


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _def(v: SSAValue, cls: type[_Op]) -> _Op | None:
    """The op of type `cls` defining `v`, if `v` has no other use (so the op can go)."""
    op = v.owner
    return op if isinstance(op, cls) and v.has_one_use() else None


def _scalar(op: pto.ScalarBase) -> float:
    return op.scalar.value.data


def _is_f32(value: float, want: float) -> bool:
    """Immediates are f32: 1/K and 1/127 are equal when they round to the same f32."""
    with np.errstate(over="ignore"):  # a huge immediate is inf in f32: not equal, no warning
        return bool(np.float32(value) == np.float32(want))


def _other(op: pto.BinaryBase, v: SSAValue) -> SSAValue:
    return op.rhs if op.lhs is v else op.lhs


def _in_order(ops: Sequence[Operation]) -> list[Operation]:
    block = ops[0].parent_block()
    assert block is not None
    return sorted(ops, key=block.get_operation_index)


def _same_block(ops: Sequence[Operation]) -> bool:
    """The chains are within one block, so program order is dominance order."""
    return len({op.parent_block() for op in ops}) == 1


def _hints(ops: Sequence[Operation], new: Operation) -> dict[str, Attribute]:
    """Per attribute: the last op's, else the first op's that has one (and fits `new`:
    a vec_tile of another rank would not verify there)."""
    out: dict[str, Attribute] = {}
    for name in dict.fromkeys(n for op in ops for n in op.attributes):  # in a fixed order
        for op in (ops[-1], *ops):
            attr = op.attributes.get(name)
            if attr is not None and check_hint(new, name, attr) is None:
                out[name] = attr
                break
    return out


def _feeders(v: SSAValue, src: SSAValue, ops: Sequence[Operation]) -> list[Operation]:
    """The casts and reshapes from `src` (which the fused op reads) to `v` (which the
    chain read) that nothing else reads: they go with the chain."""
    out, dead = [], set(ops)
    while v is not src and all(u.operation in dead for u in v.uses):
        op = v.owner  # one of the casts and reshapes `src` was found through
        assert isinstance(op, Operation)
        out.append(op)
        dead.add(op)
        v = op.operands[0]
    return out


def _fuse(rewriter: PatternRewriter, ops: Sequence[Operation], new: Operation, old: Sequence[SSAValue]) -> None:
    """Replace the values `old` of the chain `ops` by the results of `new` and erase the
    chain. `new` goes before the first op defining an `old` value: every use of those
    comes later, and every operand of `new` is read by an op of the chain before it."""
    if not _same_block(ops):
        return
    ops = _in_order(ops)
    at = next(op for op in ops if any(r is o for r in op.results for o in old))
    new.attributes.update(_hints(ops, new))
    new.location = ops[-1].location
    rewriter.insert(new, InsertPoint.before(at))
    for o, n in zip(old, new.results, strict=True):
        n.name_hint = o.name_hint
        rewriter.replace_all_uses_with(o, n)
    for op in reversed(ops):
        rewriter.erase(op)


# ------------------------------------------------------------------ RMSNorm


def _mean_square(m: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """(x, ops) when `m` is the mean of x * x over the last axis."""
    if (scale := _def(m, pto.MulsOp)) is not None:
        red = _def(scale.input, pto.ReduceOp)
        if red is None or red.kind.data != ReduceKind.SUM:
            return None
        k = _shape(red.input)[-1]
        if k < 1 or not _is_f32(_scalar(scale), 1 / k):  # also a dynamic K (-1)
            return None
        ops: list[Operation] = [red, scale]
    else:
        red = _def(m, pto.ReduceOp)
        if red is None or red.kind.data not in (ReduceKind.MEAN, ReduceKind.SUM):
            return None
        ops = [red]
        if red.kind.data == ReduceKind.SUM:  # PyPTO's own rms_norm: sum(x * x * (1/K))
            scale = _def(red.input, pto.MulsOp)
            k = _shape(red.input)[-1]
            if scale is None or k < 1 or not _is_f32(_scalar(scale), 1 / k):
                return None
            ops, red = [scale, red], scale  # type: ignore[assignment]
    sq = _def(red.input, pto.MulOp)
    if sq is None or sq.lhs is not sq.rhs:
        return None
    return sq.lhs, [sq, *ops]


def _roots(op: pto.MulOp | pto.DivOp) -> Iterator[tuple[SSAValue, Operation]]:
    """(x, root op) of `x * rsqrt(e)` (either order) or `x / sqrt(e)`."""
    if isinstance(op, pto.DivOp):
        if (root := _def(op.rhs, pto.SqrtOp)) is not None:
            yield op.lhs, root
        return
    for x, r in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if (rsqrt := _def(r, pto.RsqrtOp)) is not None:
            yield x, rsqrt


def _norm(op: pto.MulOp | pto.DivOp) -> tuple[SSAValue, float, list[Operation]] | None:
    """(x, eps, the ops) when `op` normalises x by sqrt(mean(x^2, last axis) + eps), all in f32."""
    for x, root in _roots(op):
        shape = _shape(x)
        if _elem(x) != "f32" or not shape or shape[-1] < 1 or _shape(op.result) != shape:
            continue
        add = _def(root.operands[0], pto.AddsOp)  # the root's input
        ms = _mean_square(add.input) if add is not None else None
        if add is None or ms is None or ms[0] is not x or not 0 < _scalar(add) < math.inf:
            continue
        if _shape(root.results[0]) != (*shape[:-1], 1):
            continue
        return x, _scalar(add), [*ms[1], add, root, op]
    return None


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


class RmsNormPattern(RewritePattern):
    """Primitive RMSNorm [* gamma] -> pto.rms_norm (anchored on the normalising op)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.MulOp | pto.DivOp, rewriter: PatternRewriter) -> None:
        if (m := _norm(op)) is None:
            return
        x, eps, ops = m
        gamma = None
        if (g := _gamma(op.result, _shape(x)[-1])) is not None:
            gamma = g[1]
            ops += [g[0], *_feeders(_other(g[0], op.result), gamma, [*ops, g[0]])]
        ops += _feeders(x, src := _norm_input(x), ops)
        out = (g[0] if g else op).result
        _fuse(rewriter, ops, pto.RmsNormOp(src, gamma, eps, out.type), [out])


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
        out = op.result if mul is None else mul.result
        _fuse(rewriter, [*ops, *feeders], pto.RmsNormOp(x, src, op.eps.value.data, out.type), [out])


# ------------------------------------------------------------------ dequant


def _scale_mul(v: SSAValue, fits: Callable[[tuple[int, ...]], bool]) -> tuple[pto.MulOp, SSAValue] | None:
    """(the multiply, the scale) when the only use of `v` is `v * scale`, an f32 scale
    whose shape `fits` and that broadcasts without widening `v`."""
    mul = v.get_user_of_unique_use()
    if not isinstance(mul, pto.MulOp) or _shape(mul.result) != _shape(v):
        return None
    s = _other(mul, v)
    return (mul, s) if s is not v and _elem(s) == "f32" and fits(_shape(s)) else None


def _w_scale_source(ws: SSAValue, n: int) -> SSAValue:
    """The [N, 1] or [N] tensor an in-place reshape made `ws` from, else `ws`."""
    while isinstance(op := ws.owner, pto.ReshapeOp) and op.inplace is not None:
        if _shape(op.input) not in ((n, 1), (1, n), (n,)):
            break
        ws = op.input
    return ws


class DequantPattern(RewritePattern):
    """cast i32 -> f32, * act scale [* weight scale] -> pto.dequant (anchored on the cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.CastOp, rewriter: PatternRewriter) -> None:
        acc = op.input
        if (_elem(acc), _elem(op.result)) != ("i32", "f32") or op.round.data != RoundMode.RINT or op.sat:
            return
        if len(shape := _shape(acc)) != 2:
            return
        m, n = shape
        if (a := _scale_mul(op.result, lambda s: s == (m, 1))) is None:
            return
        ops: list[Operation] = [op, a[0]]
        w = None
        if (b := _scale_mul(a[0].result, lambda s: s in ((1, n), (n,)))) is not None:
            w = _w_scale_source(b[1], n)
            ops += [b[0], *_feeders(b[1], w, [*ops, b[0]])]
        _fuse(rewriter, ops, pto.DequantOp(acc, a[1], w), [(b or a)[0].result])


# ------------------------------------------------------------------ quant


def _cast(v: SSAValue, src: str, dst: str, mode: RoundMode) -> pto.CastOp | None:
    op = _def(v, pto.CastOp)
    if op is None or (_elem(op.input), _elem(v)) != (src, dst) or op.round.data != mode:
        return None
    return op


def _ratio(v: SSAValue) -> tuple[SSAValue, SSAValue, list[Operation]] | None:
    """(y, amax, ops) of `y / amax * 127` or `y * 127 / amax`."""
    if (s := _def(v, pto.MulsOp)) is not None and (d := _def(s.input, pto.DivOp)) is not None:
        return (d.lhs, d.rhs, [d, s]) if _scalar(s) == 127.0 else None
    if (d := _def(v, pto.DivOp)) is not None and (s := _def(d.lhs, pto.MulsOp)) is not None:
        return (s.input, d.rhs, [s, d]) if _scalar(s) == 127.0 else None
    return None


def _absmax(am: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """(y, ops) when `am` is max(|y|) over the last axis."""
    red = am.owner
    if not isinstance(red, pto.ReduceOp):
        return None
    if red.kind.data == ReduceKind.ABSMAX:
        return red.input, [red]
    if red.kind.data == ReduceKind.MAX and (ab := _def(red.input, pto.AbsOp)) is not None:
        return ab.input, [ab, red]
    return None


def _scale(am: SSAValue, div: Operation) -> pto.MulsOp | None:
    """`amax * 1/127`, when it and `div` are the only uses of `am`."""
    users = [u.operation for u in am.uses]
    rest = [op for op in users if op is not div]
    if len(users) != 2 or len(rest) != 1 or not isinstance(s := rest[0], pto.MulsOp):
        return None
    return s if _is_f32(_scalar(s), 1 / 127) else None


def _quant_chain(q: pto.CastOp) -> tuple[SSAValue, pto.MulsOp, list[Operation]] | None:
    """(y, the scale op, the ops) of the AT-11 chain ending in the i8 cast `q`."""
    h = _cast(q.input, "i32", "f16", RoundMode.ROUND)
    if h is None or h.sat:
        return None
    i = _cast(h.input, "f32", "i32", RoundMode.RINT)
    r = _ratio(i.input) if i is not None else None
    if i is None or r is None:
        return None
    y, am, ratio = r
    a = _absmax(am)
    div = next(op for op in ratio if isinstance(op, pto.DivOp))
    if a is None or a[0] is not y or _elem(y) != "f32" or (scale := _scale(am, div)) is None:
        return None
    if _shape(am) != (*_shape(y)[:-1], 1) or _shape(div.result) != _shape(y):
        return None
    return y, scale, [*a[1], *ratio, scale, i, h, q]


class QuantPattern(RewritePattern):
    """absmax, x * 127 / amax, the RINT -> ROUND -> TRUNC(sat) casts -> pto.quant
    (anchored on the last cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.CastOp, rewriter: PatternRewriter) -> None:
        if (_elem(op.input), _elem(op.result)) != ("f16", "i8") or op.round.data != RoundMode.TRUNC or not op.sat:
            return
        if (c := _quant_chain(op)) is None:
            return
        y, scale, ops = c
        _fuse(rewriter, ops, pto.QuantOp(y), [op.result, scale.result])


# ------------------------------------------------------------------ the pass


@dataclass(frozen=True)
class PtoFuseStagesPass(ModulePass):
    """Rewrite RMSNorm, quant and dequant written from primitives into the fused pto ops.

    Exact matches only (shapes, the last axis, the 1/K, eps and 1/127 immediates, the
    dtypes and casts, no other use of an intermediate); everything else is left alone.
    """

    name = "pto-fuse-stages"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [RmsNormPattern(), RmsNormOperandsPattern(), DequantPattern(), QuantPattern()]
        # No DCE: an unused op the user wrote is not ours to delete.
        applier = GreedyRewritePatternApplier(patterns, ctx, dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(op)
