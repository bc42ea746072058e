"""Build `pto`-level kernels from Python.

A `Kernel` holds one `func.func` being built: `arg` adds a typed tensor argument (a
dimension of `None` is the dynamic token axis), the op functions (`rms_norm`, `matmul`,
`cast`, ...) append `pto` ops to the kernel their first operand belongs to, `ret` sets
the results, and `module()` returns the verified `ModuleOp`. Every op is verified as it
is built; an illegal one raises `BuildError` with the verifier's message and the
caller's file and line (also recorded as the op's location, so that later passes point
there too). A bad argument (a shape that is not a list of non-negative sizes, a name or
dtype that is not a string, a hint of the wrong type, a tensor of another kernel) raises
`BuildError` too, naming the argument and what it may be, before any IR is built.
Hints (`label=`, `vec_tile=`, `cube_tile=`, `cache=` on arguments,
`unroll=`, `options=`, `target=` on the kernel) become the `pto.*` attributes that
the pipeline honours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from pto.dialects import pto
from pto.dialects.common import (
    CASTS,
    MATMUL_OUT,
    PREDICATES,
    CachePolicy,
    CachePolicyAttr,
    CubeTileAttr,
    Layout,
    LayoutAttr,
    ReduceKind,
    RoundMode,
    elem_name,
)
from pto.dialects.pto import nz_use_error, verify_hints
from pto.frontend.checks import (
    BuildError as BuildError,
)
from pto.frontend.checks import (
    Symbol as Symbol,
)
from pto.frontend.checks import (
    _check_bool,
    _check_label,
    _check_name,
    _check_number,
    _check_opt_str,
    _check_options,
    _check_shape,
    _check_sizes,
    _check_str,
    _fail,
)
from pto.frontend.checks import (
    caller as caller,
)
from pto.frontend.checks import (
    element_type as element_type,
)
from pto.targets import UnknownTargetError, load_target

DYN = None  # a dimension written None (or DYN) is the dynamic token axis


def tensor_type(shape: Sequence[int | Symbol | None], dtype: str, what: str = "a shape") -> TensorType:
    return TensorType(
        element_type(dtype),
        [DYNAMIC_INDEX if d is None or isinstance(d, Symbol) else d for d in _check_shape(what, shape)],
    )


@dataclass(eq=False)
class Tensor:
    """A value of the kernel being built."""

    kernel: Kernel
    value: SSAValue

    @property
    def shape(self) -> tuple[int | None, ...]:
        t = self.value.type
        assert isinstance(t, TensorType)
        return tuple(None if d == DYNAMIC_INDEX else d for d in t.get_shape())

    @property
    def dtype(self) -> str:
        return elem_name(self.value.type.element_type)  # type: ignore[attr-defined]

    # With a number: `adds`/`muls` (they check it); `x - c` is `x + (-c)` and `c - x` is
    # `(-x) + c`, the same values. `x / c` is refused: a multiply by 1 / c would round.
    def __add__(self, other: Tensor | float) -> Tensor:
        return add(self, other) if isinstance(other, Tensor) else adds(self, other)

    def __radd__(self, other: float) -> Tensor:
        return adds(self, other)

    def __sub__(self, other: Tensor | float) -> Tensor:
        return sub(self, other) if isinstance(other, Tensor) else adds(self, -_check_number("a scalar", other))

    def __rsub__(self, other: float) -> Tensor:
        return adds(muls(self, -1.0), other)

    def __mul__(self, other: Tensor | float) -> Tensor:
        return mul(self, other) if isinstance(other, Tensor) else muls(self, other)  # muls checks the scalar

    def __rmul__(self, other: float) -> Tensor:
        return muls(self, other)

    def __truediv__(self, other: Tensor) -> Tensor:
        if not isinstance(other, Tensor):
            _fail(f"x / {other!r}: a tensor divides by a tensor here; write pto.muls(x, 1 / c) for a scalar")
        return div(self, other)

    def __rtruediv__(self, other: float) -> Tensor:
        _fail(f"{other!r} / x: a number divided by a tensor is pto.muls(pto.reciprocal(x), c) here")

    def __neg__(self) -> Tensor:
        return muls(self, -1.0)

    def __repr__(self) -> str:
        return f"Tensor({self.value.type})"


@dataclass
class Kernel:
    """One `func.func` being built."""

    name: str
    target: str | None = None
    unroll: Sequence[int] | None = None
    options: dict[str, dict[int | str, int]] | None = None
    block: Block = field(default_factory=Block)
    arg_attrs: list[dict[str, Attribute]] = field(default_factory=list)
    results: list[Tensor] = field(default_factory=list)
    _module: ModuleOp | None = None

    def __post_init__(self) -> None:
        # checked here, at the user's line, not when module() prints or verifies them
        _check_str("a kernel's name", self.name)
        _check_opt_str("target", self.target)
        if self.target is not None:
            try:
                load_target(self.target)
            except UnknownTargetError as e:
                _fail(str(e))
        if self.unroll is not None:
            self.unroll = _check_sizes("unroll", self.unroll)
        if self.options is not None:
            _check_options(self.options)

    def _not_built(self) -> None:
        if self._module is not None:
            _fail(f"kernel '{self.name}' is already built")

    def arg(
        self,
        name: str,
        shape: Sequence[int | Symbol | None],
        dtype: str,
        cache: str | None = None,
        layout: str | None = None,
    ) -> Tensor:
        self._not_built()
        _check_name("an argument's name", name)
        if any(a.name_hint == BlockArgument.extract_valid_name(name) for a in self.block.args):
            _fail(f"kernel '{self.name}' already has an argument '{name}'")  # inputs are passed by name
        t = tensor_type(shape, dtype, f"the shape of '{name}'")
        v = self.block.insert_arg(t, len(self.block.args))
        v.name_hint = name
        self.arg_attrs.append({})
        if cache is not None:
            self.set_cache(v, cache)
        if layout is not None:
            self.set_layout(v, layout)
        return Tensor(self, v)

    def set_layout(self, v: SSAValue, layout: str) -> None:
        """`pto.layout` of an argument: `nz` for a weight stored in fractals (checked
        when the kernel is built: a static 2-D matrix of whole fractals)."""
        try:
            attr = LayoutAttr(Layout(layout))
        except ValueError:
            raise BuildError(f"unknown layout '{layout}' (known: nd, nz)", caller()) from None
        self.arg_attrs[v.index]["pto.layout"] = attr  # type: ignore[attr-defined]

    def _layout(self, v: SSAValue) -> Layout | None:
        if not isinstance(v, BlockArgument) or v.owner is not self.block:
            return None
        attr = self.arg_attrs[v.index].get("pto.layout")
        return attr.data if isinstance(attr, LayoutAttr) else None

    def set_cache(self, v: SSAValue | Tensor, policy: str) -> None:
        self._not_built()
        if isinstance(v, Tensor):
            v = v.value
        try:
            attr = CachePolicyAttr(CachePolicy(policy))
        except ValueError:
            raise BuildError(f"unknown cache policy '{policy}' (known: normal, none_cacheable)", caller()) from None
        if not isinstance(v, SSAValue) or not isinstance(v.owner, Block) or v.owner is not self.block:
            raise BuildError("a cache policy belongs on a kernel argument", caller())
        self.arg_attrs[v.index]["pto.cache"] = attr  # type: ignore[attr-defined]

    def append(self, op: Operation, hints: dict[str, Attribute] | None = None) -> Operation:
        """Add a built op (and its hints), verified, at the caller's location."""
        self._not_built()
        where = caller()
        if where is not None:
            op.location = FileLineColLoc(StringAttr(where[0]), IntAttr(where[1]), IntAttr(where.col))
        op.attributes.update(hints or {})
        try:
            op.verify()
            verify_hints(op)
            if (msg := nz_use_error(op, self._layout)) is not None:  # its func is not built yet
                raise VerifyException(msg)
        except VerifyException as e:
            msg = str(e.args[0]) if e.args else str(e)
            raise BuildError(msg.removeprefix("Operation does not verify: "), where) from None
        self.block.add_op(op)
        return op

    def ret(self, *values: Tensor) -> None:
        self._not_built()
        for v in values:
            _tensor(v, "a result")
            if v.kernel is not self:
                raise BuildError("a result must be a value of this kernel", caller())
        self.results = list(values)

    def func_attrs(self) -> dict[str, Attribute]:
        attrs: dict[str, Attribute] = {}
        if self.target is not None:
            attrs["pto.target"] = StringAttr(self.target)
        if self.unroll is not None:
            attrs["pto.unroll"] = DenseArrayBase.from_list(i64, list(self.unroll))
        if self.options is not None:
            attrs["pto.options"] = DictionaryAttr(
                {
                    k: DictionaryAttr({str(kk): IntegerAttr(vv, i64) for kk, vv in v.items()})
                    for k, v in self.options.items()
                }
            )
        return attrs

    def module(self) -> ModuleOp:
        """The verified module holding this kernel (built once)."""
        if self._module is not None:
            return self._module
        if not self.results:
            raise BuildError(f"kernel '{self.name}' has no results: call ret(...)", caller())
        self.__post_init__()  # the hints again, and the results: fields may be set after the Kernel
        self.ret(*self.results)
        ret = func.ReturnOp(*(r.value for r in self.results))
        self.block.add_op(ret)
        f = func.FuncOp(
            self.name, ([a.type for a in self.block.args], [r.value.type for r in self.results]), Region(self.block)
        )
        if any(self.arg_attrs):
            f.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in self.arg_attrs])
        f.attributes.update(self.func_attrs())
        where = caller()
        try:
            f.verify()
            verify_hints(f)
        except VerifyException as e:
            self.block.erase_op(ret)
            f.body.detach_block(self.block)
            raise BuildError(str(e.args[0]) if e.args else str(e), where) from None
        self._module = ModuleOp([f])
        return self._module


# ------------------------------------------------------------------ hints of an op


# The loop form (pto.frontend.loop) sets these for the ops that follow, as PyPTO does.
@dataclass
class Pinned:
    label: str | None = None
    vec_tile: tuple[int, ...] | None = None
    cube_tile: CubeTileAttr | None = None


_pinned: list[Pinned] = []


def cube_tile(m: Sequence[int], k: Sequence[int], n: Sequence[int], split_k: bool = False) -> CubeTileAttr:
    """`#pto.cube_tile<m = [L0, L1], k = [...], n = [...]>` for `matmul(cube_tile=...)`."""
    axes: dict[str, Sequence[int]] = {
        "m": _check_sizes("cube_tile m", m, (2,)),
        "k": _check_sizes("cube_tile k", k, (2, 3)),
        "n": _check_sizes("cube_tile n", n, (2,)),
    }
    if (msg := CubeTileAttr.check(axes)) is not None:  # the attribute's own rule, as a BuildError
        _fail(msg)
    return CubeTileAttr(axes["m"], axes["k"], axes["n"], _check_bool("split_k", split_k))


def _hints(
    op: Operation, label: str | None, vec_tile: Sequence[int] | None, cube: CubeTileAttr | None
) -> dict[str, Attribute]:
    p = _pinned[-1] if _pinned else Pinned()
    _check_label("label", label)
    if vec_tile is not None:
        vec_tile = _check_sizes("vec_tile", vec_tile)
    label = label if label is not None else p.label
    if vec_tile is None and p.vec_tile is not None and not isinstance(op, pto.MatmulOp):
        rank = op.operands[0].type.get_num_dims()  # type: ignore[attr-defined]
        vec_tile = p.vec_tile if rank == len(p.vec_tile) else None
    if cube is None and isinstance(op, pto.MatmulOp):
        cube = p.cube_tile
    h: dict[str, Attribute] = {}
    if label is not None:
        h["pto.label"] = StringAttr(label)
    if vec_tile is not None:
        h["pto.vec_tile"] = DenseArrayBase.from_list(i64, list(vec_tile))
    if cube is not None:
        h["pto.cube_tile"] = cube
    return h


def _emit(op: Operation, x: Tensor, label=None, vec_tile=None, cube=None) -> Operation:
    return x.kernel.append(op, _hints(op, label, vec_tile, cube))


def _tensor(x: object, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise BuildError(f"{what} must be a Tensor of a kernel, got {type(x).__name__}", caller())
    return x


def _same_kernel(*xs: Tensor | None) -> None:
    ks = {id(x.kernel) for x in xs if isinstance(x, Tensor)}
    if len(ks) > 1:
        raise BuildError("operands belong to different kernels", caller())


def _retyped(x: Tensor, dtype: str, shape: Sequence[int | None] | None = None) -> TensorType:
    return tensor_type(x.shape if shape is None else shape, dtype)


# ---------------------------------------------------------------------------- ops


def rms_norm(
    x: Tensor,
    gamma: Tensor | None = None,
    eps: float = 1e-6,
    out_dtype: str = "f32",
    *,
    label: str | None = None,
    vec_tile: Sequence[int] | None = None,
) -> Tensor:
    """`x / sqrt(mean(x^2) + eps) [* gamma]` over the last axis (`pto.rms_norm`)."""
    _tensor(x, "rms_norm input")
    if gamma is not None:
        _tensor(gamma, "rms_norm gamma")
    _same_kernel(x, gamma)
    eps = _check_number("rms_norm eps", eps)
    op = pto.RmsNormOp(x.value, gamma.value if gamma is not None else None, eps, _retyped(x, out_dtype))
    return Tensor(x.kernel, _emit(op, x, label, vec_tile).results[0])


def matmul(
    a: Tensor,
    b: Tensor,
    a_trans: bool = False,
    b_trans: bool = False,
    out_dtype: str | None = None,
    *,
    label: str | None = None,
    cube_tile: CubeTileAttr | None = None,
) -> Tensor:
    """`a @ b` on the cube (`b_trans`: b is [N, K]); f32 (int32 for int8) unless `out_dtype`."""
    _tensor(a, "matmul lhs")
    _tensor(b, "matmul rhs")
    _same_kernel(a, b)
    for t, side in ((a, "lhs"), (b, "rhs")):  # the verifier says so too, but after we index the shapes
        if len(t.shape) != 2:
            _fail(f"matmul {side} must be rank 2, got rank {len(t.shape)}")
    a_trans, b_trans = _check_bool("a_trans", a_trans), _check_bool("b_trans", b_trans)
    if out_dtype is not None:
        element_type(out_dtype)
    m = a.shape[1] if a_trans else a.shape[0]
    n = b.shape[0] if b_trans else b.shape[1]
    out = out_dtype or MATMUL_OUT.get(a.dtype, ("f32",))[0]
    op = pto.MatmulOp(a.value, b.value, tensor_type([m, n], out), a_trans, b_trans)
    return Tensor(a.kernel, _emit(op, a, label, None, cube_tile).results[0])


def cast(
    x: Tensor,
    dtype: str,
    round: str | None = None,
    sat: bool = False,
    *,
    label: str | None = None,
    vec_tile: Sequence[int] | None = None,
) -> Tensor:
    """Convert to `dtype` (`pto.cast`); `round` defaults to `none` for exact conversions,
    `rint` otherwise."""
    _tensor(x, "cast input")
    element_type(dtype)  # a clear error before CASTS is looked up with it
    sat = _check_bool("sat", sat)
    if round is None:
        round = "none" if CASTS.get((x.dtype, dtype)) else "rint"
    try:
        mode = RoundMode(round)
    except ValueError:
        raise BuildError(
            f"unknown round mode '{round}' (known: {', '.join(m.value for m in RoundMode)})", caller()
        ) from None
    op = pto.CastOp(x.value, _retyped(x, dtype), mode, sat)
    return Tensor(x.kernel, _emit(op, x, label, vec_tile).results[0])


Item = Tensor | float  # an operand of select after the first


def _broadcast(a: Sequence[int | None], b: Sequence[int | None]) -> list[int | None]:
    """The result shape of a trailing-aligned broadcast (the verifier checks legality)."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, d in enumerate(b):
        j = len(a) - len(b) + i
        if out[j] == 1 and d != 1:
            out[j] = d
    return out


def _binary(cls, a: Tensor, b: Tensor, label, vec_tile) -> Tensor:
    _tensor(a, f"{cls.name} lhs")
    _tensor(b, f"{cls.name} rhs")
    _same_kernel(a, b)
    op = cls(a.value, b.value, tensor_type(_broadcast(a.shape, b.shape), a.dtype))
    return Tensor(a.kernel, _emit(op, a, label, vec_tile).results[0])


def add(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.AddOp, a, b, label, vec_tile)


def sub(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.SubOp, a, b, label, vec_tile)


def mul(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.MulOp, a, b, label, vec_tile)


def div(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.DivOp, a, b, label, vec_tile)


def maximum(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.MaxOp, a, b, label, vec_tile)


def minimum(a: Tensor, b: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _binary(pto.MinOp, a, b, label, vec_tile)


def _unary(cls, x: Tensor, label, vec_tile) -> Tensor:
    _tensor(x, f"{cls.name} input")
    return Tensor(x.kernel, _emit(cls(x.value), x, label, vec_tile).results[0])


def sqrt(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _unary(pto.SqrtOp, x, label, vec_tile)


def rsqrt(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _unary(pto.RsqrtOp, x, label, vec_tile)


def exp(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _unary(pto.ExpOp, x, label, vec_tile)


def log(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _unary(pto.LogOp, x, label, vec_tile)


def reciprocal(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _unary(pto.ReciprocalOp, x, label, vec_tile)


def abs(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:  # noqa: A001
    return _unary(pto.AbsOp, x, label, vec_tile)


def muls(x: Tensor, scalar: float, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _scalar(pto.MulsOp, x, scalar, label, vec_tile)


def adds(x: Tensor, scalar: float, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _scalar(pto.AddsOp, x, scalar, label, vec_tile)


def maxs(x: Tensor, scalar: float, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _scalar(pto.MaxsOp, x, scalar, label, vec_tile)


def mins(x: Tensor, scalar: float, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    return _scalar(pto.MinsOp, x, scalar, label, vec_tile)


def rdivs(x: Tensor, scalar: float, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    """`scalar / x`, elementwise."""
    return _scalar(pto.RdivsOp, x, scalar, label, vec_tile)


def _scalar(cls, x: Tensor, scalar: float, label, vec_tile) -> Tensor:
    """`cls` (a pto op with an f32 immediate) of `x` and `scalar`."""
    what = cls.name.split(".")[1]
    _tensor(x, f"{what} input")
    op = cls(x.value, _check_number(f"{what} scalar", scalar))
    return Tensor(x.kernel, _emit(op, x, label, vec_tile).results[0])


def select(
    predicate: str, lhs: Tensor, rhs: Item, on_true: Item, on_false: Item, *, label=None, vec_tile=None
) -> Tensor:
    """`where(lhs PRED rhs, on_true, on_false)` elementwise (PRED: eq ne lt le gt ge), each of
    the last three a tensor or a number; of the selected values' type (else the compared)."""
    if predicate not in PREDICATES:
        raise BuildError(f"unknown comparison '{predicate}' (known: {', '.join(PREDICATES)})", caller())
    _tensor(lhs, "select lhs")
    items: list[Tensor | float] = [lhs]
    for x, what in ((rhs, "rhs"), (on_true, "on_true"), (on_false, "on_false")):
        items.append(x if isinstance(x, Tensor) else _check_number(f"select {what}", x))
    shape: list[int | None] = list(lhs.shape)
    for x in (x for x in items[1:] if isinstance(x, Tensor)):
        _same_kernel(lhs, x)
        shape = _broadcast(shape, x.shape)
    chosen = next((x for x in items[2:] if isinstance(x, Tensor)), lhs)
    values = [x.value if isinstance(x, Tensor) else x for x in items]
    op = pto.SelectOp(predicate, values, tensor_type(shape, chosen.dtype))
    return Tensor(lhs.kernel, _emit(op, lhs, label, vec_tile).results[0])


def reduce(x: Tensor, kind: str = "sum", *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    """Row reduction over the last axis, kept as size 1: sum, max, min, mean, absmax."""
    _tensor(x, "reduce input")
    try:
        k = ReduceKind(kind)
    except ValueError:
        raise BuildError(
            f"unknown reduction '{kind}' (known: {', '.join(r.value for r in ReduceKind)})", caller()
        ) from None
    return Tensor(x.kernel, _emit(pto.ReduceOp(x.value, k), x, label, vec_tile).results[0])


def quant(x: Tensor, *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> tuple[Tensor, Tensor]:
    """Symmetric per-token int8: returns (q, scale)."""
    _tensor(x, "quant input")
    op = _emit(pto.QuantOp(x.value), x, label, vec_tile)
    return Tensor(x.kernel, op.results[0]), Tensor(x.kernel, op.results[1])


def dequant(
    acc: Tensor,
    act_scale: Tensor,
    w_scale: Tensor | None = None,
    *,
    w_scale_first: bool = False,
    label: str | None = None,
    vec_tile: Sequence[int] | None = None,
) -> Tensor:
    """`acc` times the activation scale, then the weight scale (`w_scale_first`: the
    weight scale first; f32 products round differently in the two orders)."""
    _tensor(acc, "dequant input")
    _tensor(act_scale, "dequant act_scale")
    if w_scale is not None:
        _tensor(w_scale, "dequant w_scale")
    _same_kernel(acc, act_scale, w_scale)
    first = _check_bool("w_scale_first", w_scale_first)
    if first and w_scale is None:
        _fail("dequant's w_scale_first needs a w_scale")
    op = pto.DequantOp(acc.value, act_scale.value, w_scale.value if w_scale is not None else None, first)
    return Tensor(acc.kernel, _emit(op, acc, label, vec_tile).results[0])
