"""PyPTO's tensor operations, each traced into the `pto` op that computes it.

A scalar operand becomes `pto.muls`/`pto.adds` (`x - c` is `x + (-c)`, `x / c` is
`x * (1 / c)`, which may differ from a division in the last bit). `pypto.full(c) / a`
and `pypto.reciprocal(a)` are kept aside until used (`c / (c2 / a)` is `a * (c / c2)`,
AT-11's dequant scale), then are `pto.rdivs` (`c / a`) or `pto.reciprocal`, computed as
written (`y * (127 / amax)` is not `y * 127 / amax`, nor `reciprocal(amax) * 127` one
division: each f32 step rounds, and an int8 quant's rounding shows the difference).
"""

from __future__ import annotations

import builtins
import dataclasses
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from pto.frontend import builder as b
from pto.frontend import views
from pto.pypto import expand, heads, perm, row_loops, same_ops, scratch, split_k, tcols
from pto.pypto.errors import refuse
from pto.pypto.sym import Sym
from pto.pypto.tensor import Pinned, Tensor, Trace, current
from pto.pypto.types import CastMode, DataType, SaturationMode, cast_steps, elem, from_elem


def _tensor(x: object, what: str) -> Tensor:
    if not isinstance(x, Tensor) or x._shape is None or x._dtype is None:
        current(what.split("'")[0])  # (outside a kernel, that is what to say)
        got = f"a {type(x).__module__}.{type(x).__name__}" if hasattr(x, "shape") else repr(x)
        refuse(f"{what} must be a tensor of the kernel, got {got}")
    if x._lazy is not None:
        if x._lazy[0] in ("heads", "perm", "expand", "tcol", "row"):
            return x  # a per-head view, a grid, a permuted value, a row: the op that reads it runs on its parts
        if x._lazy[0] == "scratch":
            return scratch.read(x, concat)
        if x._lazy[0] == "partial":  # the matmul, made once: each further use reads it (a norm's x * x and x)
            from pto.pypto.cube import matmul  # (the cube's op builds on this module)

            y = split_k.materialize(x, matmul)
            x._lazy, x._val, x._tok, x._body = None, y._val, y._tok, y._body
            return x
        if x._lazy[0] == "cols":
            return _slice(x)
        if x._lazy[0] == "castcols":  # a cast of a column view, used as a tensor of its own:
            return split_k.cast_now(x, cast, _tensor)
        if x._lazy[0] == "rows":
            return _rows(x)
        if x._lazy[0] == "T":
            refuse(
                f"a pypto.transpose is supported only as an operand of a matmul (its a_trans / b_trans), not as {what}"
            )
        if x._lazy[0] == "output":
            refuse(f"output parameter '{x.name}' is written by pypto.assemble only, not read as {what}")
        if x._lazy[0] == "heads_first":
            refuse(
                "a transpose of the tokens to dim 1 is written only by pypto.assemble into an [H, T, D] output "
                f"(at [0, i, 0]), not read as {what}"
            )
        if x._lazy[0] == "cmp":
            refuse(
                f"a comparison is read only as pypto.where's condition (or logical_not's, logical_and's), not as {what}"
            )
        if x._lazy[0] == "recip":  # used as a tensor: c / a
            a, c = x._lazy[1]
            return _rdivs(a, c)
        refuse(f"pypto.full's result is supported only as an operand of mul, div, add or sub, not as {what}")
    return x


def weight_view(w: Tensor, shape: list, offsets: list) -> Tensor:
    """A window of a weight parameter, read in place (`pto.view`)."""
    return _result("view", [w], list(shape), w.known_dtype, lambda v: views.window(v, shape, offsets))


def _rows(x: Tensor) -> Tensor:
    """A weight's row window used by anything but a hand-written split-K matmul: its
    `pto.view`, made where it is first used; each further use reads the same view."""
    _, w, r0, _ = x._lazy  # type: ignore[misc]
    y = weight_view(w, x.shape, [r0, *[0] * (len(x.shape) - 1)])
    x._lazy, x._val, x._tok, x._body = None, y._val, y._tok, y._body
    return x


def _slice(x: Tensor) -> Tensor:
    """A column view used by anything but a hand-written split-K matmul: `pto.slice` of
    a computed tensor, `pto.view` of a weight parameter. The view becomes that value (in
    place), so each further use reads the same slice."""
    _, src, c0, c1 = x._lazy  # type: ignore[misc]
    src = _tensor(src, "a column view's tensor")
    if src._param is not None and src._param not in current("pypto.view").token:
        y = weight_view(src, x.shape, [0] * (len(x.shape) - 1) + [c0])
    else:
        y = _result("slice", [src], x.shape, src.known_dtype, lambda v: views.slice(v, c0, c1 - c0))
    x._lazy, x._val, x._tok, x._body = None, y._val, y._tok, y._body
    return x


def _result(
    kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, build: Callable[..., b.Tensor]
) -> Tensor:
    """A traced result; in the emitting run, `build` makes its pto op from the inputs' values."""
    if any(row_loops.is_row(i) for i in inputs):
        return row_loops.each(kind, inputs, shape, dtype, lambda k, ins, s, d: _result(k, ins, s, d, build))
    if any(heads.is_heads(i) for i in inputs):
        return heads.per_head(kind, inputs, shape, dtype, lambda k, ins, s, d: _result(k, ins, s, d, build))
    if any(expand.is_expand(i) for i in inputs):
        refuse(f"pypto.{kind} of pypto.expand_clone's result: it is read only by an elementwise op it broadcasts in")
    if any(tcols.is_tcol(i) for i in inputs):
        if len(inputs) != 1:
            refuse(f"pypto.{kind} of a tensor whose tokens are not dim 0: transpose them back to dim 0 first")
        return tcols.each(kind, inputs[0], shape, dtype, lambda k, ins, s, d: _result(k, ins, s, d, build))
    if any(perm.is_perm(i) for i in inputs):
        return _per_row(kind, inputs, shape, dtype, build)
    tr = current(f"pypto.{kind}")
    key = same_ops.key(tr, kind, inputs, shape, dtype, build)
    if (hit := tr.same_ops.get(key)) is not None and hit[1] == same_ops.state(hit[0]):
        return hit[0]
    pinned = b._pinned[-1]
    b._pinned[-1] = _vec_tile_of(kind, shape, pinned)  # what the op is recorded and built with
    try:
        val = _build(tr, kind, inputs, build)
    finally:
        b._pinned[-1] = pinned
    t = Tensor.traced(shape, dtype, val, any(i._tok for i in inputs))
    t._body = tr.iteration
    tr.same_ops[key] = (t, same_ops.state(t), list(inputs))  # (the inputs kept: their ids are in the key)
    return t


def _per_row(kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, build) -> Tensor:
    """`kind` on a rank-3 grid, once per row: each row's op takes the vector tile's
    first and last sizes (the rows and the columns of a row)."""
    b._pinned.append(_vec_tile_of(kind, shape, b._pinned[-1]))  # (PyPTO's rule: a size per dim)
    try:
        with perm.row_tiles(shape):
            return perm.per_row(kind, inputs, shape, dtype, lambda k, ins, s, d: _result(k, ins, s, d, build))
    finally:
        b._pinned.pop()


def _build(tr: Trace, kind: str, inputs: Sequence[Tensor], build: Callable[..., b.Tensor]) -> b.Tensor | None:
    """Record the op in the trace; in the emitting run, build its pto op."""
    tr.record(kind)
    if any(i._body >= 0 and i._body != tr.iteration for i in inputs):
        where = "another unroll factor" if tr.iteration >= 0 else "after the loop"
        refuse(f"pypto.{kind} uses a value computed in the loop body for {where}")
    if not tr.emit:
        return None
    if any(i._val is None for i in inputs):  # (each way to get here is refused earlier, by name)
        refuse(f"pypto.{kind} reads a tensor that has no value in this kernel")
    block = tr.kernel.block  # type: ignore[union-attr]
    last = block.last_op
    val = build(*(i._val for i in inputs))
    built = _ops_after(block, last)
    if (same := row_loops.reuse(tr, built, val, not any(i._tok for i in inputs))) is not val:
        return same  # type: ignore[return-value]
    if tr.iteration >= 0:
        tr.body_ops[tr.iteration] += built
    if tr.iteration == 0:
        tr.emitted.append(val.value.owner)
    if tr.iteration <= 0:  # the ops the kernel keeps: where their tile shapes were set
        p = b._pinned[-1]
        assert isinstance(p, Pinned)
        tr.tiles_at |= {op: (p.vec_tile_at, p.cube_tile_at) for op in built}
    return val


# Ops that set_vec_tile_shapes does not tile: the cube's, and views of other tensors.
_NOT_VECTOR = ("matmul", "reshape", "view")


def _vec_tile_of(kind: str, shape: list, pinned: b.Pinned) -> b.Pinned:
    """The hints with the vector tile PyPTO 0.2.0 gives the op: one size per dimension of
    its result, so the leading sizes of a longer tile (PyPTO ignores the rest); a shorter
    tile is refused, as PyPTO fails on it ("Tile shape size 1 is not matched the output
    shape size 2", when it compiles the kernel)."""
    tile = pinned.vec_tile
    if tile is None or kind in _NOT_VECTOR or len(tile) == len(shape):
        return pinned
    if len(tile) < len(shape):
        refuse(
            f"pypto.{kind}'s result {shape} has {len(shape)} dimensions, but the vector tile of "
            f"set_vec_tile_shapes({', '.join(map(str, tile))}) has {len(tile)}: give one size per dimension"
        )
    return dataclasses.replace(pinned, vec_tile=tile[: len(shape)])


def _ops_after(block, last) -> list:
    """The ops of the kernel's block after `last` (None: all): what one build appended."""
    out, op = [], block.first_op if last is None else last.next_op
    while op is not None:
        out.append(op)
        op = op.next_op
    return out


def _scalar(v: object) -> TypeGuard[float]:  # any real but bool; float in the numeric tower
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _broadcast(a: list, c: list) -> list:
    """numpy's (and PyPTO's) trailing-aligned broadcasting: a missing leading dim is 1."""
    n = builtins.max(len(a), len(c))
    out = []
    for x, y in zip([1] * (n - len(a)) + list(a), [1] * (n - len(c)) + list(c), strict=True):
        if x != y and 1 not in (x, y):
            refuse(f"shapes {a} and {c} do not broadcast")
        out.append(y if x == 1 else x)
    return out


# ------------------------------------------------------------------ element-wise


def _binary(kind: str, x: Tensor, y: Tensor) -> Tensor:
    if tcols.is_tcol(x) or tcols.is_tcol(y):
        return tcols.binary(kind, x, y, _binary, _broadcast)
    build = {"add": b.add, "sub": b.sub, "mul": b.mul, "div": b.div, "max": b.maximum, "min": b.minimum}[kind]
    x, y = expand.operand(x, y, _broadcast, f"pypto.{kind}"), expand.operand(y, x, _broadcast, f"pypto.{kind}")
    x, y = _tensor(x, f"pypto.{kind}'s input"), _tensor(y, f"pypto.{kind}'s other")  # (an expanded window's rows)
    if x._dtype is not y._dtype:
        refuse(f"pypto.{kind} of {x.known_dtype.name} and {y.known_dtype.name}: cast one first")
    return _result(kind, [x, y], _broadcast(x.shape, y.shape), x.known_dtype, build)


def _muls(x: Tensor, c: float) -> Tensor:
    return x if c == 1 else _result("mul", [x], x.shape, x.known_dtype, lambda v: b.muls(v, float(c)))


def _adds(x: Tensor, c: float) -> Tensor:
    return x if c == 0 else _result("add", [x], x.shape, x.known_dtype, lambda v: b.adds(v, float(c)))


def _const(full: object, partner: object, what: str) -> float | None:
    """The value of a `pypto.full` operand, folded into the scalar op on `partner`: its
    shape must broadcast to the partner's (the result keeps that) and its dtype match."""
    c = _lazy(full, "const")
    if c is None or not isinstance(partner, Tensor) or partner._shape is None:
        return c
    fs, ps = full.shape, partner.shape  # type: ignore[attr-defined]
    if len(fs) != len(ps) or any(f != 1 and f != d for f, d in zip(fs, ps, strict=True)):
        refuse(f"{what} of pypto.full({fs}) and a {ps} tensor: the full's shape does not broadcast to it")
    if full._dtype is not partner._dtype:  # type: ignore[attr-defined]
        refuse(f"{what} of a {full.dtype.name} pypto.full and a {partner.known_dtype.name} tensor: cast one first")  # type: ignore[attr-defined]
    return c


def _lazy(x: object, kind: str) -> Any:  # the payload's type depends on `kind`
    return x._lazy[1] if isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == kind else None


def add(input: Tensor, other: Tensor | float, *, alpha: float = 1) -> Tensor:  # noqa: A002
    if not _scalar(alpha):
        refuse(f"pypto.add's alpha must be a number, got {alpha!r}")
    if (c := _const(other, input, "pypto.add")) is not None:
        other = c
    elif (c := _const(input, other, "pypto.add")) is not None:
        if c == 0 and alpha == 1 and _lazy(other, "partial") is not None:
            return other  # type: ignore[return-value]  # (a split-K summed onto zeros, as GLM-4.5 MoE: the sum so far)
        return _adds(_muls(_tensor(other, "pypto.add's other"), alpha), c)  # c + alpha * other
    if _lazy(input, "partial") is not None and _lazy(other, "partial") is not None and alpha == 1:
        if (both := split_k.merge(input, other)) is not None:  # type: ignore[arg-type]
            return both
    if _scalar(other):
        return _adds(_tensor(input, "pypto.add's input"), alpha * other)
    y = _tensor(other, "pypto.add's other")
    return _binary("add", _tensor(input, "pypto.add's input"), y if alpha == 1 else _muls(y, alpha))


def sub(input: Tensor, other: Tensor | float, *, alpha: float = 1) -> Tensor:  # noqa: A002
    if (c := _const(other, input, "pypto.sub")) is not None:
        other = c
    if (c := _const(input, other, "pypto.sub")) is not None and _scalar(alpha):
        return rsub(_muls(_tensor(other, "pypto.sub's other"), alpha), c)  # c - alpha * other
    if _scalar(other) and _scalar(alpha):
        return _adds(_tensor(input, "pypto.sub's input"), -alpha * other)
    if not _scalar(alpha):
        refuse(f"pypto.sub's alpha must be a number, got {alpha!r}")
    y = _tensor(other, "pypto.sub's other")
    return _binary("sub", _tensor(input, "pypto.sub's input"), y if alpha == 1 else _muls(y, alpha))


def rsub(x: Tensor, c: object) -> Tensor:
    """`c - x` for a scalar c."""
    if not _scalar(c):
        refuse(f"cannot subtract a tensor from {c!r}")
    return _adds(_muls(_tensor(x, "the subtrahend"), -1.0), c)


def mul(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    for a, o in ((input, other), (other, input)):
        if (c := _const(o, a, "pypto.mul")) is not None:
            o = c
        if (r := _lazy(a, "recip")) is not None and _scalar(o):
            return _muls(_rdivs(*r), o)  # ((1 / a) * 127 rounds twice: GLM-4.5's quant scale, corpus16's k141)
        if _scalar(o):
            return _muls(_tensor(a, "pypto.mul's input"), o)
        if (k := _k_slice(a, o, mul)) is not None:
            return k
    return _binary("mul", _tensor(input, "pypto.mul's input"), _tensor(other, "pypto.mul's other"))


def _k_slice(cols: object, row: object, op: Callable[[Tensor, Tensor], Tensor]) -> Tensor | None:
    """`op` of a K slice (columns [c0, c1) of a token tile, kept aside) and a per-row
    `[rows, 1]` tensor: those columns of `op` on the whole tile, made once (the same op
    traced again is the first), so that a hand-written split-K's slices quantised chunk by
    chunk (GLM-4.5's MoE: `x[:, k:k + KC] * (127 / amax)`) stay slices of one value."""
    if not isinstance(cols, Tensor) or _lazy(cols, "cols") is None or not isinstance(row, Tensor):
        return None
    if row._lazy is not None and row._lazy[0] != "recip":
        return None
    base, c0, c1 = cols._lazy[1:]  # type: ignore[index]
    if not base._tok or len(base.shape) != 2 or list(row.shape) != [base.shape[0], 1]:
        return None
    return split_k.column_view(op(base, _tensor(row, "a per-row operand")), c0, c1)


def div(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    if (c := _const(other, input, "pypto.div")) is not None:
        other = c
    if _scalar(other):
        if other == 0:
            refuse("pypto.div by the scalar 0")
        return _muls(_tensor(input, "pypto.div's input"), 1.0 / other)
    if (c := _const(input, other, "pypto.div")) is not None:
        return rdiv(other, c)  # type: ignore[arg-type]
    return _binary("div", _tensor(input, "pypto.div's input"), _tensor(other, "pypto.div's other"))


def rdiv(x: Tensor, c: object) -> Tensor:
    """`c / x`, kept as a scaled reciprocal for the mul that uses it."""
    if not _scalar(c) or c == 0:
        refuse(f"{c!r} / tensor is not supported (a non-zero number / x, as an operand of a mul)")
    if (r := _lazy(x, "recip")) is not None:  # c / (c2 / a) is a * (c / c2): AT-11's `1 / (127 / amax)`
        return _muls(_tensor(r[0], "the divisor"), float(c) / r[1])
    return _recip(_tensor(x, "the divisor"), float(c))


def reciprocal(a: Tensor) -> Tensor:
    return rdiv(a, 1.0)


def _recip(x: Tensor, c: float) -> Tensor:
    """`c / x`, kept aside until used (`rdiv` folds `c / (c2 / x)`)."""
    return Tensor.traced(x.shape, x.known_dtype, None, x._tok, ("recip", (x, c)))


def _rdivs(x: Tensor, c: float) -> Tensor:
    if c == 1:
        return _result("reciprocal", [x], x.shape, x.known_dtype, b.reciprocal)
    return _result("rdivs", [x], x.shape, x.known_dtype, lambda v: b.rdivs(v, c))


def _unary(kind: str, build, x: Tensor) -> Tensor:
    x = _tensor(x, f"pypto.{kind}'s input")
    return _result(kind, [x], x.shape, x.known_dtype, build)


def sqrt(input: Tensor) -> Tensor:  # noqa: A002
    return _unary("sqrt", b.sqrt, input)


def rsqrt(input: Tensor) -> Tensor:  # noqa: A002
    return _unary("rsqrt", b.rsqrt, input)


def exp(input: Tensor) -> Tensor:  # noqa: A002
    return _unary("exp", b.exp, input)


def log(input: Tensor) -> Tensor:  # noqa: A002
    """The natural logarithm: `pto.log` (ln(0) = -inf, a negative x gives NaN)."""
    return _unary("log", b.log, input)


def log1p(input: Tensor) -> Tensor:  # noqa: A002
    """`log(x + 1)`: the add and the ln, as the device computes it (for |x| below about
    1e-7 the f32 sum rounds to 1, where torch.log1p keeps x)."""
    return _unary("log", b.log, _adds(_tensor(input, "pypto.log1p's input"), 1.0))


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """`1 / (1 + exp(-x))`: exp(-x) overflows to inf for x < -88, and 1 / inf is 0."""
    x = _tensor(input, "pypto.sigmoid's input")
    return _unary("reciprocal", b.reciprocal, _adds(exp(_muls(x, -1.0)), 1.0))


def abs(a: Tensor) -> Tensor:  # noqa: A001
    return _unary("abs", b.abs, a)


def full(size: Sequence[int], fill_value: float, dtype: DataType, *, valid_shape=None) -> Tensor:
    """A constant tensor, folded into the mul/div/add/sub that uses it."""
    if not _scalar(fill_value):
        refuse(f"pypto.full's fill_value must be a number, got {fill_value!r}")
    return Tensor.traced(list(size), dtype, None, False, ("const", float(fill_value)))


def zeros(*size, dtype: DataType | None = None) -> Tensor:
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], list | tuple) else list(size)
    return full(shape, 0.0, dtype or DataType.DT_FP32)


# ------------------------------------------------------------------ the others


# The modes modelled: `pto.cast`'s round modes of their values' names (CAST_NONE: the
# builder's default for the conversion).
_MODES = tuple(m for m in CastMode if m is not CastMode.CAST_ODD)


def cast(
    input: Tensor,
    dtype: DataType,
    mode: CastMode = CastMode.CAST_NONE,  # noqa: A002
    satmode: SaturationMode = SaturationMode.OFF,
) -> Tensor:
    cc = _lazy(input, "castcols")
    if cc is not None and cc._lazy is not None and cc._lazy[0] == "cols" and cc._lazy[1]._tok:
        # a cast of a cast K slice of a token tile (a quant's cast chain, chunk by chunk):
        # the columns of the whole tile's casts
        return cast(split_k.cast_columns(input, cast), dtype, mode, satmode)
    if _lazy(input, "cols") is not None:  # kept aside: a split-K slice cast just in time, or a cast of a slice
        elem(dtype, "pypto.cast's dtype")
        hints = dataclasses.replace(b._pinned[-1])  # (the cast's, wherever it is made)
        return Tensor.traced(input.shape, dtype, None, input._tok, ("castcols", input, dtype, mode, satmode, hints))
    if perm.is_perm(input) and (run := perm.lazy_block(input)) is not None:  # a run of columns seen rank-3
        with perm.row_tiles(input.shape):  # (its hints, kept with it, as a row's ops take them)
            return perm.make([cast(run, dtype, mode, satmode)], input._lazy[2])  # type: ignore[index]
    if _unit_lead(input):  # a [1, 1, D] weight (a gamma reshaped for heads): cast as [1, D]
        flat = reshape(input, [1, input.shape[-1]], inplace=input._param is not None or input._view_of is not None)
        return expand.expand_clone(cast(flat, dtype, mode, satmode), input.shape, _broadcast)
    x = _tensor(input, "pypto.cast's input")
    to = elem(dtype, "pypto.cast's dtype")
    if mode not in _MODES:
        refuse(f"pypto.cast mode {mode!r} is not modelled (known: {', '.join(m.name for m in _MODES)})")
    if not isinstance(satmode, SaturationMode):
        refuse(f"pypto.cast's satmode must be a pypto.SaturationMode, got {satmode!r}")
    if dtype is x._dtype:
        return x  # as PyPTO: a cast to the same type does nothing
    if to == "i8" and x._dtype in (DataType.DT_FP32, DataType.DT_BF16):
        return _quantize(x, mode, satmode)
    sat, rounds = satmode is SaturationMode.ON, None if mode is CastMode.CAST_NONE else mode.value
    for step in cast_steps(elem(x._dtype, "pypto.cast's input"), to, bool(rounds) or sat):  # (no such instruction)
        x = cast(x, step)
    return _result("cast", [x], x.shape, dtype, lambda v: b.cast(v, to, rounds, sat))


def _unit_lead(x: object) -> bool:
    """A weight `[1, ..., 1, D]` of rank 3 or more: vector tiles are rank 2, and it is the
    `[1, D]` row broadcast (kept as an expand_clone of it)."""
    return isinstance(x, Tensor) and not x._tok and x._lazy is None and len(x.shape) > 2 and set(x.shape[:-1]) == {1}


def _quantize(x: Tensor, mode: CastMode, satmode: SaturationMode) -> Tensor:
    """A float -> int8 cast, which the hardware has only from f16: the chain the device's
    compiler emits, to i32 in the cast's round mode (rint for CAST_NONE), to f16 (exact
    for the int8 range), to i8 in the cast's saturation mode. pto-fuse-stages reads the
    chain of a quant as the fused stage."""
    i = cast(x, DataType.DT_INT32, CastMode.CAST_RINT if mode is CastMode.CAST_NONE else mode)
    return cast(cast(i, DataType.DT_FP16, CastMode.CAST_ROUND), DataType.DT_INT8, CastMode.CAST_TRUNC, satmode)


def rms_norm(input: Tensor, gamma: Tensor | None = None, epsilon: float = 1e-6) -> Tensor:  # noqa: A002
    """RMSNorm over the last axis; the result has the input's dtype, as PyPTO's."""
    x = _tensor(input, "pypto.rms_norm's input")
    ins = [x] if gamma is None else [x, _tensor(gamma, "pypto.rms_norm's gamma")]
    if not _scalar(epsilon):
        refuse(f"pypto.rms_norm's epsilon must be a number, got {epsilon!r}")
    to = elem(x._dtype, "pypto.rms_norm's input")
    return _result("rms_norm", ins, x.shape, x.known_dtype, lambda v, g=None: b.rms_norm(v, g, float(epsilon), to))


def _reduce(kind: str, input: Tensor, dim: int, keepdim: bool) -> Tensor:  # noqa: A002
    x = _tensor(input, f"pypto.{kind}'s input")
    if tcols.is_tcol(x):
        return tcols.reduce(kind, x, dim, bool(keepdim), _reduce)
    rank = len(x.shape)
    if perm.is_perm(x) and isinstance(dim, int) and not isinstance(dim, bool) and -rank <= dim < rank:
        red = {"sum": "sum", "amax": "max", "amin": "min"}[kind]
        from pto.pypto.extras import maximum, minimum  # (extras builds on this module)

        combine = {"sum": add, "amax": maximum, "amin": minimum}[kind]
        one = lambda t: _result(kind, [t], [*t.shape[:-1], 1], t.known_dtype, lambda v: b.reduce(v, red))  # noqa: E731
        return perm.reduce(kind, x, dim, bool(keepdim), one, combine)
    if not isinstance(dim, int) or dim not in (-1, rank - 1):
        refuse(f"pypto.{kind} over dim {dim!r}: only the last axis (-1) is supported")
    if keepdim is not True:
        refuse(f"pypto.{kind} with keepdim=False is not supported (SK-03 keeps a [rows, 1] column)")
    red = {"sum": "sum", "amax": "max", "amin": "min"}[kind]
    return _result(kind, [x], [*x.shape[:-1], 1], x.known_dtype, lambda v: b.reduce(v, red))


def sum(input: Tensor, dim: int, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    return _reduce("sum", input, dim, keepdim)


def amax(input: Tensor, dim: int, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _reduce("amax", input, dim, keepdim)


def amin(input: Tensor, dim: int, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _reduce("amin", input, dim, keepdim)


def reshape(input: Tensor, shape: Sequence[int], *, valid_shape=None, inplace: bool = False) -> Tensor:  # noqa: A002
    x = _tensor(input, "pypto.reshape's input")
    if row_loops.is_row(x):
        refuse(f"pypto.reshape of a row of a tile (a view [1, K] at [r, 0]): {row_loops.ROWWISE}")
    moved = tcols.is_tcol(x) or (x._tok and x._lazy is None and len(x.shape) == 2)
    if moved and isinstance(shape, list | tuple) and (r := tcols.reshape(x, list(shape), reshape)) is not None:
        return r
    if perm.is_perm(x):
        return perm.reshape(x, list(shape))
    if expand.is_expand(x):
        if not isinstance(shape, list | tuple) or (e := expand.reshape(x, list(shape))) is None:
            refuse(f"pypto.reshape of pypto.expand_clone's {x.shape} to {shape}: only leading 1s may come or go")
        return e
    if isinstance(shape, list | tuple) and (g := perm.split(x, list(shape))) is not None:
        return g
    if heads.is_heads(x):
        return heads.join(x, list(shape), concat)
    if isinstance(shape, list | tuple) and (h := heads.split(x, list(shape), split_k.column_view, _slice)):
        return h
    rows_kept = x._tok and len(shape or []) > 0 and isinstance(shape[0], Sym) and shape[0] == x.shape[0]  # T itself
    if not isinstance(shape, list | tuple) or not all(isinstance(d, int) for d in shape[1 if rows_kept else 0 :]):
        refuse(f"pypto.reshape's shape must be a list of integers (dim 0 may be the token count), got {shape!r}")
    if valid_shape is not None and list(valid_shape) != list(shape):
        refuse("pypto.reshape with a valid_shape smaller than its shape is not supported")
    new = list(shape)
    if x._tok and (not new or new[0] != x.shape[0]):
        refuse(f"pypto.reshape of a token tile must keep its rows ({x.shape[0]}), got {new}")
    if math.prod(new) != math.prod(d for d in x.shape if isinstance(d, int)) and not x._tok:
        refuse(f"pypto.reshape of {x.shape} to {new} changes the element count")
    if new == x.shape:  # to its own shape: the tensor itself (no pto.reshape to lower)
        return x
    to = [None, *new[1:]] if x._tok else new
    out = _result("reshape", [x], new, x.known_dtype, lambda v: views.reshape(v, to, bool(inplace)))
    ones_only = not x._tok and [d for d in new if d != 1] == [d for d in x.shape if d != 1]
    if inplace or ones_only:  # a view of a parameter: the loop may take token tiles of it, a weight's windows
        out._view_of = x._param if x._param is not None else x._view_of
    return out


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """The tensors side by side along the last axis (`pto.concat`): `dim` must name it."""
    if not isinstance(tensors, list | tuple) or len(tensors) < 2:
        refuse(f"pypto.concat takes a list of at least 2 tensors, got {tensors!r}")
    xs = [_tensor(t, f"pypto.concat's tensor {i}") for i, t in enumerate(tensors)]
    rank = len(xs[0].shape)
    if any(perm.is_perm(x) for x in xs) and isinstance(dim, int) and 1 <= dim % rank < rank:
        return perm.concat(xs, dim % rank)
    if not isinstance(dim, int) or isinstance(dim, bool) or dim not in (-1, rank - 1):
        refuse(
            f"pypto.concat along dim {dim!r} of rank-{rank} tensors: only the last axis (-1 or {rank - 1}) is supported"
        )
    for i, x in enumerate(xs[1:], 1):
        if x._dtype is not xs[0]._dtype:
            refuse(
                f"pypto.concat of {xs[0].known_dtype.name} and {x.known_dtype.name} (tensor {i}): "
                "cast them to one dtype"
            )
        if len(x.shape) != rank or x.shape[:-1] != xs[0].shape[:-1]:
            refuse(f"pypto.concat of {xs[0].shape} and {x.shape} (tensor {i}): only the last dims may differ")
    if not all(isinstance(x.shape[-1], int) for x in xs):
        refuse("pypto.concat needs static last dims")
    width = builtins.sum(x.shape[-1] for x in xs)
    return _result("concat", xs, [*xs[0].shape[:-1], width], xs[0].known_dtype, lambda *vs: views.concat(list(vs)))


__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "reciprocal",
    "sqrt",
    "rsqrt",
    "abs",
    "full",
    "zeros",
    "cast",
    "rms_norm",
    "sum",
    "amax",
    "amin",
    "reshape",
    "exp",
    "log",
    "log1p",
    "sigmoid",
    "concat",
    "from_elem",
]
