"""`pto-fuse-stages`: rewrite SK-03 stages written from primitives into the fused ops.

Real kernels spell RMSNorm, quant and dequant out by hand; classification, staging and
the vector lowering only know `pto.rms_norm`, `pto.quant` and `pto.dequant`. Each
pattern below recognises one stage by what it computes, in each spelling PyPTO authors
write (as `pto.pypto` traces it), and replaces it; anything else is left alone. Every
intermediate of a matched stage must have no use outside it (a value read elsewhere
would have to be kept, and the stage would be computed twice).

Exactness. The fused op computes what the chain computes, bit for bit, except for the
roundings this pass has always accepted and documents below (Numerics): an f32
immediate stands for the constant it rounds (1/K, 1/127), and `x * rsqrt(e)` and
`(y / amax) * 127` stand for the divisions. A spelling that rounds differently in
another way is not fused: gamma multiplied before the normalisation (rms_norm has no
such order), the scales' product multiplied into a dequant. The weight scale first is
fused: pto.dequant carries that order (`w_scale_first`) and computes it. Two values are
the same when they are one SSA value or two casts of one value alike (a helper that
casts the tile it is given casts it at each call; a cast repeats exactly), and max(|y|)
computed twice is one amax.

RMSNorm (the result is f32, the type of the value replaced; K = the static last dim):

    [%xf = pto.cast %x none]                       bf16/f16 -> f32 (once, or at each use);
                                                    else %xf is f32 already
    %sq = pto.mul %xf, %xf
    %m  = pto.reduce mean %sq                       or: pto.reduce sum %sq + pto.muls 1/K,
                                                    or: pto.reduce sum (pto.muls %sq, 1/K)
    %e  = pto.adds %m, eps                          eps > 0
    %n  = pto.mul %xf, (pto.rsqrt %e)               either order; or pto.div %xf, (pto.sqrt %e),
                                                    or pto.mul %xf, (pto.reciprocal (pto.sqrt %e))
    [%o = pto.mul %n, %g]                           either order; %g is [K] or [1, K]
      -> pto.rms_norm %x [, %gamma] eps = eps

(`pto.pypto` traces `sum / K` as the muls by 1/K, `x * reciprocal(s)`, `x * (1 / s)` and
`x * (full(1) / s)` as `x / s`, and an eps added as a `full` as the adds.)

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

Casts and reshapes that only the replaced ops read (the casts of x, a gamma's cast and
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
    %a = pto.mul %f, %ws, %b = pto.mul %a, %s       the weight scale first (either order each)
      -> pto.dequant %acc, %s, %w_scale w_scale_first

`%w_scale` is %ws, or the [N, 1] / [N] tensor behind it through in-place reshapes.

Quant (AT-11; %y f32):

    %am = pto.reduce absmax %y                      or: pto.reduce max (pto.abs %y);
                                                    computed once, or again for the scale
    %s  = pto.muls %am, 1/127
    %yq = pto.muls (pto.div %y, %am), 127.0         or: pto.div (pto.muls %y, 127.0), %am
    %q  = pto.cast (pto.cast (pto.cast %yq rint -> i32) round -> f16) trunc sat -> i8
      -> %q, %s = pto.quant %y
    (the last cast without sat, as DeepSeek's quant writes it: pto.quant %y wrap)

(The f32 -> i32 cast may carry `sat`: the interpreter saturates to i32 either way. A
direct f32 -> i8 cast does not verify: the hardware has none. `pto.pypto` traces
`y * (127 / amax)`, `y * (127 * reciprocal(amax))` and `y * (full(127) / amax)` as
`(y * 127) / amax`, and `amax / 127` as the muls by 1/127.)

Remarks. A chain that looks like a stage but does not match gets a remark at the op
that broke the match, naming the fused op and what the form expected there: an
RMSNorm (a sqrt or rsqrt of a mean of squares dividing the value squared, or gamma
times it), a quant (a cast to i8), a dequant (an i32 -> f32 cast of a matmul result).
The ops then run as written; an int8 matmul left without a dequant is refused by
pto-classify-skeleton.

Numerics (interp/numerics.py) of the fused ops against the primitive chains: the
`reduce mean` + `sqrt` + `div` norm (and `sum * 1/K` for K a power of two) and every
dequant form are bit-exact. A sum times the f32 immediate 1/K differs from the mean (a
division by K) in the last bit unless K is a power of two; `x * rsqrt(e)` (and
`x * reciprocal(sqrt(e))`, the same bits) differs from rms_norm's `x / sqrt(e)` in the
last bit. pto.quant computes `x * 127 / amax` (bit-exact with the `muls` then `div`
chain) and the scale `amax / 127`; `(x / amax) * 127` can differ in the last bit, which
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

from pto.diagnostics import remark
from pto.dialects import pto
from pto.dialects.common import ReduceKind, RoundMode, elem_name
from pto.dialects.pto import check_hint

# ------------------------------------------------------------------ helpers

_Op = TypeVar("_Op", bound=Operation)


class Miss(Exception):
    """A chain that is not the stage's form: `op` is the op found where the form needs
    `expected`; `found` says what it is (by default its name). A pattern leaves such a
    chain alone; for a chain that looks like the stage, the pass remarks on it."""

    def __init__(self, op: Operation, expected: str, found: str | None = None):
        super().__init__(expected)
        self.op, self.expected, self.found = op, expected, found or f"'{op.name}'"


def _need(ok: bool, op: Operation, expected: str, found: str | None = None) -> None:
    if not ok:
        raise Miss(op, expected, found)


def _elem(v: SSAValue) -> str:
    return elem_name(v.type.element_type) if isinstance(v.type, TensorType) else ""


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _found(v: SSAValue) -> str:
    """What defines `v`, as a Miss reports it."""
    if isinstance(v.owner, Operation):
        return f"'{v.owner.name}'"
    return f"the argument %{v.name_hint}" if v.name_hint else "an argument"


def _def(v: SSAValue, cls: type[_Op], expected: str, reader: Operation) -> _Op:
    """The op of type `cls` defining `v`, when only `reader` reads `v` (so the op can go
    with the chain); else a Miss at the op found (the definition, or another reader)."""
    op = v.owner
    if not isinstance(op, cls):
        raise Miss(op if isinstance(op, Operation) else reader, expected, _found(v))
    if (other := next((u.operation for u in v.uses if u.operation is not reader), None)) is not None:
        raise Miss(other, f"{expected} read by the stage only", f"'{other.name}' reading it too")
    return op


def _same(a: SSAValue, b: SSAValue) -> bool:
    """`a` and `b` hold the same values: one value, or two casts of one value alike (a
    helper that casts the tile it is given casts it again at each call: a cast is exact
    to repeat, the same bits each time)."""
    if a is b:
        return True
    ca, cb = a.owner, b.owner
    if not (isinstance(ca, pto.CastOp) and isinstance(cb, pto.CastOp)):
        return False
    return ca.input is cb.input and a.type == b.type and ca.round == cb.round and ca.sat == cb.sat


def _scalar(op: pto.ScalarBase) -> float:
    return op.scalar.value.data


def _imm(op: pto.ScalarBase) -> str:
    """The op and its immediate, as the IR spells it (f32), as a Miss reports it."""
    with np.errstate(over="ignore"):
        return f"'{op.name}' {np.float32(_scalar(op))!s}"


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


def _one_block(ops: list[Operation]) -> list[Operation]:
    _need(_same_block(ops), ops[-1], "the stage's ops in one block", "ops in several")
    return ops


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
    out: list[Operation] = []
    dead = set(ops)
    while v is not src and all(u.operation in dead for u in v.uses):
        op = v.owner  # one of the casts and reshapes `src` was found through
        assert isinstance(op, pto.CastOp | pto.ReshapeOp)
        out.append(op)
        dead.add(op)
        v = op.operands[0]
    return out


def _fuse(rewriter: PatternRewriter, ops: Sequence[Operation], new: Operation, old: Sequence[SSAValue]) -> None:
    """Replace the values `old` of the chain `ops` (in one block) by the results of `new`
    and erase the chain. `new` goes before the first op defining an `old` value: every
    use of those comes later, and every operand of `new` is read by an op of the chain
    before it."""
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


def _cast(v: SSAValue, src: str, dst: str, mode: RoundMode, reader: Operation) -> pto.CastOp:
    expected = f"a '{mode}' cast {src} -> {dst}"
    op = _def(v, pto.CastOp, expected, reader)
    found = f"a '{op.round.data}' cast {_elem(op.input)} -> {_elem(v)}"
    _need((_elem(op.input), _elem(v)) == (src, dst) and op.round.data == mode, op, expected, found)
    return op


def _ratio(v: SSAValue, reader: Operation) -> tuple[SSAValue, SSAValue, list[Operation]]:
    """(y, amax, ops) of `y / amax * 127` or `y * 127 / amax`."""
    expected = "y * 127 / amax (or y / amax * 127)"
    if isinstance(v.owner, pto.MulsOp):
        s = _def(v, pto.MulsOp, expected, reader)
        _need(_scalar(s) == 127.0, s, "a multiply by 127", _imm(s))
        d = _def(s.input, pto.DivOp, "y / amax", s)
        return d.lhs, d.rhs, [d, s]
    d = _def(v, pto.DivOp, expected, reader)
    by = d.rhs.owner
    if not isinstance(d.lhs.owner, pto.MulsOp) and isinstance(by, pto.MulsOp) and _is_f32(_scalar(by), 1 / 127):
        # (y / (amax / 127) rounds differently from y * 127 / amax: it runs as written)
        raise Miss(d, expected, "y divided by the scale amax * 1/127")
    s = _def(d.lhs, pto.MulsOp, "y * 127 divided by amax", d)
    _need(_scalar(s) == 127.0, s, "a multiply by 127", _imm(s))
    return s.input, d.rhs, [s, d]


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


def _quant(q: pto.CastOp) -> tuple[list[Operation], SSAValue, pto.MulsOp]:
    """(the ops, y, the scale op) of the quant chain ending in the i8 cast `q`."""
    expected = "the quant's last cast: f16 -> i8 'trunc' (saturating or not)"
    found = f"a '{q.round.data}{' sat' if q.sat else ''}' cast {_elem(q.input)} -> {_elem(q.result)}"
    _need(_elem(q.result) == "i8", q, expected, found)
    _need(_elem(q.input) == "f16" and q.round.data == RoundMode.TRUNC, q, expected, found)
    h = _cast(q.input, "i32", "f16", RoundMode.ROUND, q)
    i = _cast(h.input, "f32", "i32", RoundMode.RINT, h)
    y, am, ratio = _ratio(i.input, i)
    div = next(op for op in ratio if isinstance(op, pto.DivOp))
    ab_y, ab = _absmax(am, div)
    _need(ab_y is y, ab[0], "the amax of the value quantised", "the amax of another value")
    _need(_elem(y) == "f32", div, "y in f32", f"{_elem(y)} y")
    _need(_shape(am) == (*_shape(y)[:-1], 1) and _shape(div.result) == _shape(y), div, "a [..., 1] amax over y")
    scale, scale_ops = _scale(y, am, div)
    return _one_block([*ab, *ratio, *scale_ops, scale, i, h, q]), y, scale


class QuantPattern(RewritePattern):
    """absmax, x * 127 / amax, the RINT -> ROUND -> TRUNC(sat) casts -> pto.quant
    (anchored on the last cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pto.CastOp, rewriter: PatternRewriter) -> None:
        try:
            ops, y, scale = _quant(op)
        except Miss:
            return
        _fuse(rewriter, ops, pto.QuantOp(y, wrap=op.sat is None), [op.result, scale.result])


# ------------------------------------------------------------------ remarks


def _squared(v: SSAValue) -> SSAValue | None:
    """The x of the x * x reduced under `v` (through the adds, muls and reduction a mean
    of squares is made of), found loosely: a root of it is an RMSNorm attempt."""
    reduced = False
    while isinstance(op := v.owner, pto.AddsOp | pto.MulsOp | pto.ReduceOp):
        reduced |= isinstance(op, pto.ReduceOp)
        v = op.operands[0]
    return op.lhs if reduced and isinstance(op, pto.MulOp) and _same(op.lhs, op.rhs) else None


def _norm_attempts(root: pto.SqrtOp | pto.RsqrtOp) -> Iterator[pto.MulOp | pto.DivOp]:
    """The ops dividing the value squared under `root` (or gamma times it) by the root
    (or a value made from it): RMSNorm attempts. A root dividing another value (hc_pre's
    matmul result) is none."""
    if (xs := _squared(root.input)) is None:
        return
    rs: list[SSAValue] = [root.result]  # and what the root becomes through scalar and unary ops (eps added late, ...)
    for r in rs:
        rs += [u.operation.results[0] for u in r.uses if isinstance(u.operation, pto.ScalarBase | pto.UnaryBase)]
        for u in r.uses:
            op = u.operation
            if not isinstance(op, pto.MulOp | pto.DivOp) or (isinstance(op, pto.DivOp) and op.rhs is not r):
                continue
            x = _other(op, r)
            g = x.owner
            if _same(x, xs) or (isinstance(g, pto.MulOp) and (_same(g.lhs, xs) or _same(g.rhs, xs))):
                yield op


def _misses(op: Operation) -> Iterator[tuple[str, Callable[[], object]]]:
    """(the fused op, its matcher) of each stage `op` is the heart of: the root of an
    RMSNorm attempt, the i8 cast of a quant, the f32 cast of an int8 matmul's result."""
    if isinstance(op, pto.SqrtOp | pto.RsqrtOp):
        for n in _norm_attempts(op):
            yield "pto.rms_norm", lambda n=n: _rms_norm(n)  # type: ignore[misc]
    elif isinstance(op, pto.CastOp) and _elem(op.result) == "i8":
        yield "pto.quant", lambda: _quant(op)
    elif isinstance(op, pto.CastOp) and _elem(op.input) == "i32" and isinstance(op.input.owner, pto.MatmulOp):
        yield "pto.dequant", lambda: _dequant(op)


def remark_misses(module: ModuleOp) -> None:
    """A remark at the op that broke the match, for each stage attempt left unfused."""
    for op in module.walk():
        for fused, match in _misses(op):
            try:
                match()
            except Miss as m:
                remark(m.op, f"not fused into {fused}: expected {m.expected}, found {m.found}")


# ------------------------------------------------------------------ the pass


@dataclass(frozen=True)
class PtoFuseStagesPass(ModulePass):
    """Rewrite RMSNorm, quant and dequant written from primitives into the fused pto ops.

    Exact matches only (shapes, the last axis, the 1/K, eps and 1/127 immediates, the
    dtypes and casts, no other use of an intermediate); everything else is left alone,
    with a remark where it looks like a stage.
    """

    name = "pto-fuse-stages"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [RmsNormPattern(), RmsNormOperandsPattern(), DequantPattern(), QuantPattern()]
        # No DCE: an unused op the user wrote is not ours to delete.
        applier = GreedyRewritePatternApplier(patterns, ctx, dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(op)
        remark_misses(op)
