"""`pto-fuse-stages`: rewrite SK-03 stages written from primitives into the fused ops.

Real kernels spell RMSNorm, quant and dequant out by hand; classification, staging and
the vector lowering only know `pto.rms_norm`, `pto.quant` and `pto.dequant`. Each
pattern (in passes/fuse_stages/: rms_norm.py, quant.py) recognises one stage by what
it computes, in each spelling PyPTO authors write (as `pto.pypto` traces it), and
replaces it; anything else is left alone. Every
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
    %q  = pto.cast (pto.cast (pto.cast %yq rint -> i32) -> f16) trunc sat -> i8
                                                    (the f16 cast in any mode: exact for codes)
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

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from pto.diagnostics import remark
from pto.dialects import pto
from pto.dialects.common import ReduceKind
from pto.passes.fuse_stages.match import Miss, _elem, _other, _same
from pto.passes.fuse_stages.quant import DequantPattern, QuantPattern, _dequant, _quant, by_a_number
from pto.passes.fuse_stages.rms_norm import RmsNormOperandsPattern, RmsNormPattern, _rms_norm

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


def _after_max(op: Operation, depth: int = 12) -> bool:
    """A row max (an amax) among the ops `depth` steps before `op`: a dynamic quant's
    attempt. A static quant (a constant scale and offset, GLM-4.5's) is none."""
    seen, todo = set(), [op]
    for _ in range(depth):
        todo = [v.owner for o in todo for v in o.operands if isinstance(v.owner, Operation) and v.owner not in seen]
        seen.update(todo)
        if any(isinstance(o, pto.ReduceOp) and o.kind.data in (ReduceKind.MAX, ReduceKind.ABSMAX) for o in todo):
            return True
    return False


def _misses(op: Operation) -> Iterator[tuple[str, Callable[[], object]]]:
    """(the fused op, its matcher) of each stage `op` is the heart of: the root of an
    RMSNorm attempt, the i8 cast of a quant, the f32 cast of an int8 matmul's result."""
    if isinstance(op, pto.SqrtOp | pto.RsqrtOp):
        for n in _norm_attempts(op):
            yield "pto.rms_norm", lambda n=n: _rms_norm(n)  # type: ignore[misc]
    elif isinstance(op, pto.CastOp) and _elem(op.result) == "i8" and _after_max(op):
        yield "pto.quant", lambda: _quant(op)
    elif isinstance(op, pto.CastOp) and _elem(op.input) == "i32" and isinstance(op.input.owner, pto.MatmulOp):
        if not by_a_number(op.result):
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
