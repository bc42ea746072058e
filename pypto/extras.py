"""PyPTO 0.2.0 ops that SK-03 kernels write beside the core set of `ops.py`: an
elementwise maximum or minimum (a ReLU, a max over the heads), `unsqueeze` (a reshape
with a 1 inserted), `expand_clone` (a small weight broadcast, `pypto/expand.py`),
`clone`, `transpose` (a matmul operand's, or of a rank-3 grid) and `tensor` (a scratch
tile)."""

from __future__ import annotations

from collections.abc import Sequence

from pto.frontend import builder as b
from pto.pypto import expand, heads_first, perm, scratch, tcols
from pto.pypto.errors import refuse
from pto.pypto.ops import (
    _binary,
    _broadcast,
    _const,
    _muls,
    _result,
    _scalar,
    _tensor,
    cast,
    exp,
    full,
    log,
    mul,
    reciprocal,
    reshape,
    rsqrt,
    sqrt,
)
from pto.pypto.tensor import Tensor, _traces
from pto.pypto.types import CastMode, DataType


def maximum(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    """`pto.max` (`pto.maxs` with a number: `maximum(x, 0.0)` is a ReLU)."""
    return _extremum("max", input, other)


def minimum(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return _extremum("min", input, other)


def _extremum(kind: str, x: Tensor | float, y: Tensor | float, what: str = "") -> Tensor:
    name = {"max": "maximum", "min": "minimum"}[kind]
    x_is, y_is = f"pypto.{name}'s input", what or f"pypto.{name}'s other"
    if (c := _const(y, x, f"pypto.{name}")) is not None:  # a pypto.full: its value (corpus23's k207)
        y = c
    elif (c := _const(x, y, f"pypto.{name}")) is not None:
        x = c
    if _scalar(x):
        x, y = y, x
    if _scalar(y):
        s = float(y)
        scalar = b.maxs if kind == "max" else b.mins
        t = _tensor(x, x_is)
        return _result(kind, [t], t.shape, t.known_dtype, lambda v: scalar(v, s))
    return _binary(kind, _tensor(x, x_is), _tensor(y, y_is))


def clip(input: Tensor, min: Tensor | float | None = None, max: Tensor | float | None = None) -> Tensor:  # noqa: A002
    """`minimum(maximum(x, min), max)`, either bound left out when None (numbers:
    `pto.maxs`/`pto.mins`; tensors broadcast as `maximum`'s other)."""
    x = _tensor(input, "pypto.clip's input")
    if min is not None and max is not None and _scalar(min) != _scalar(max):
        refuse("pypto.clip takes min and max both numbers or both tensors (as PyPTO 0.2.0)")
    if min is not None:
        x = _extremum("max", x, min, "pypto.clip's min")
    if max is not None:
        x = _extremum("min", x, max, "pypto.clip's max")
    return x


def neg(a: Tensor) -> Tensor:
    """`-a`: `pto.muls` by -1, as the unary operator."""
    return _muls(_tensor(a, "pypto.neg's input"), -1.0)


def relu(input: Tensor) -> Tensor:  # noqa: A002
    """`maximum(x, 0)`: `pto.maxs`."""
    return maximum(input, 0.0)


def lrelu(other: Tensor, negative_slope: float = 0.01) -> Tensor:
    """Leaky ReLU, `maximum(x, slope * x)`: with 0 <= slope <= 1 the larger of the two is x
    where x >= 0 and the product slope * x where not, the op's own values."""
    if not _scalar(negative_slope) or not 0 <= float(negative_slope) <= 1:
        refuse(f"pypto.lrelu's negative_slope is modelled from 0 to 1 (a number), got {negative_slope!r}")
    x = _tensor(other, "pypto.lrelu's input")
    return _binary("max", x, _muls(x, float(negative_slope)))


def softmax(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """Along the last axis, `exp(x - max(x)) / sum(exp(x - max(x)))` (f32, as PyPTO's; a
    router's probabilities)."""
    from pto.pypto import ops

    x = _tensor(input, "pypto.softmax's input")
    if dim not in (-1, len(x.shape) - 1):
        refuse(f"pypto.softmax over dim {dim!r}: only the last axis (-1) is supported")
    if x._dtype is not DataType.DT_FP32:
        refuse(f"pypto.softmax takes a DT_FP32 tensor (as PyPTO 0.2.0), got {x.known_dtype.name}: cast it first")
    e = ops.exp(ops.sub(x, ops.amax(x, -1, keepdim=True)))
    return ops.div(e, ops.sum(e, -1, keepdim=True))


def var(input: Tensor, dim=None, correction: float = 1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The variance along the last axis, `sum((x - mean)^2) / (n - correction)` with
    mean = `sum(x) / n` (a LayerNorm's, written with `pypto.var`)."""
    from pto.pypto import ops

    x = _tensor(input, "pypto.var's input")
    if dim not in (-1, len(x.shape) - 1, [-1], (-1,)):
        refuse(f"pypto.var over dim {dim!r}: only the last axis (-1) is supported")
    n = x.shape[-1]
    if not isinstance(n, int) or not _scalar(correction) or n - correction <= 0:
        refuse(f"pypto.var of {n} elements with correction {correction!r}")
    if keepdim is not True:
        refuse("pypto.var with keepdim=False is not supported (SK-03 keeps a [rows, 1] column)")
    d = ops.sub(x, _muls(ops.sum(x, -1, keepdim=True), 1.0 / n))
    return _muls(ops.sum(ops.mul(d, d), -1, keepdim=True), 1.0 / (n - float(correction)))


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """To the nearest integral value, ties to even (torch.round's golden in PyPTO's tests)."""
    if decimals != 0:
        refuse(f"pypto.round with decimals={decimals!r} is not modelled (only 0)")
    return _integral("round", input, "rint")


def floor(input: Tensor) -> Tensor:  # noqa: A002
    return _integral("floor", input, "floor")


def ceil(input: Tensor) -> Tensor:  # noqa: A002
    return _integral("ceil", input, "ceil")


def trunc(input: Tensor) -> Tensor:  # noqa: A002
    return _integral("trunc", input, "trunc")


def _integral(name: str, input: Tensor, mode: str) -> Tensor:  # noqa: A002
    """The device's f32 -> f32 cast in a round mode. A bf16 or f16 value is widened first
    and narrowed after: an integral value at or below its width's last fraction bit is
    exact in it, and every larger one is integral already."""
    x = _tensor(input, f"pypto.{name}'s input")
    if x._dtype not in (DataType.DT_FP32, DataType.DT_BF16, DataType.DT_FP16):
        refuse(f"pypto.{name} takes a float tensor, got {x.known_dtype.name}")
    wide = cast(x, DataType.DT_FP32)
    y = _result(name, [wide], wide.shape, DataType.DT_FP32, lambda v: b.cast(v, "f32", mode))
    return cast(y, x._dtype, CastMode.CAST_RINT)


def ones(*size, dtype: DataType | None = None) -> Tensor:
    """`full(size, 1)`, folded into the op that uses it as `pypto.full` is."""
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], list | tuple) else list(size)
    return full(shape, 1.0, dtype or DataType.DT_FP32)


def expand_clone(input: Tensor, shape: Sequence[int], *, valid_shape=None) -> Tensor:  # noqa: A002
    """`input` broadcast to `shape` (pypto/expand.py: kept as `input` until used)."""
    if valid_shape is not None and list(valid_shape) != list(shape):
        refuse("pypto.expand_clone with a valid_shape smaller than its shape is not supported")
    return expand.expand_clone(_tensor(input, "pypto.expand_clone's input"), shape, _broadcast)


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """A dim of size 1 inserted at `dim` (negative counts from the end of the result): a reshape."""
    x = _tensor(input, "pypto.unsqueeze's input")
    rank = len(x.shape) + 1
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        refuse(f"pypto.unsqueeze's dim must be an integer in [{-rank}, {rank}), got {dim!r}")
    shape = x.shape
    shape.insert(dim % rank, 1)
    return reshape(x, shape)


def clone(input: Tensor) -> Tensor:  # noqa: A002
    """A copy: values here are never written in place, so the tensor itself."""
    return _tensor(input, "pypto.clone's input")


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """A 2-D transpose, kept aside for the matmul that reads it (its a_trans / b_trans);
    of a token tensor of rank 3 or more, two of its non-token dims swapped in its grid
    (pypto/perm.py: the interleaved RoPE's `[t, D/2, 2] -> [t, 2, D/2]`)."""
    x = _tensor(input, "pypto.transpose's input")
    if tcols.is_tcol(x):
        return tcols.transpose(x, dim0, dim1)
    if perm.is_perm(x) and x._tok and len(x.shape) == 3 and {dim0, dim1} in ({0, 1}, {-3, 1}, {0, -2}, {-3, -2}):
        return heads_first.transpose(x)  # the tokens to dim 1: only assembled into an [H, T, D] output
    if perm.is_perm(x):
        return perm.transpose(x, dim0, dim1)
    if len(x.shape) != 2 or {dim0, dim1} not in ({0, 1}, {-1, -2}, {0, -1}, {-2, 1}):
        refuse(
            f"pypto.transpose of dims {dim0}, {dim1} of a rank-{len(x.shape)} tensor: only the two axes of a "
            "2-D operand of a matmul"
        )
    return Tensor.traced(x.shape[::-1], x.known_dtype, None, x._tok, ("T", x))


def tensor(
    shape=None,
    dtype: DataType | None = None,
    name: str = "",
    format=None,
    data_ptr=None,  # noqa: A002
    device=None,
    ori_shape=None,
) -> Tensor:
    """PyPTO's `pypto.tensor` is `pypto.Tensor`: an annotation where a kernel is defined
    (GLM-4.5's signatures), a scratch tile in its body, filled by `assemble`s of column
    blocks or of rows (pypto/scratch.py)."""
    if not _traces:
        return Tensor(shape, dtype, name, format, data_ptr, device, ori_shape)
    if format is not None or data_ptr is not None or device is not None or ori_shape is not None:
        refuse("pypto.tensor's format, data_ptr, device and ori_shape are not modelled for a scratch tile")
    return scratch.make(shape, dtype)


# pow's exponents as the ops they are (an RMSNorm's `pow(ms + eps, -0.5)` is its rsqrt)
_POW = {0.5: "sqrt", -0.5: "rsqrt", -1.0: "reciprocal", 1.0: "identity", 2.0: "square"}


def pow(input: Tensor, other: object) -> Tensor:  # noqa: A001 A002
    """PyPTO's `pow(x, c)` for a number c: 0.5, -0.5, -1, 1 and 2 as sqrt, rsqrt,
    reciprocal, x and x * x; another nonzero whole number as x multiplied by squaring
    (x ** 3 = x * (x * x)), the reciprocal of that for c < 0; any other number as
    exp(c * ln x) (NaN for x < 0). Those two, as PyPTO's library computes them, in f32
    (an fp16 or bf16 x is widened, the result cast back). A tensor exponent, and 0,
    are refused."""
    x = _tensor(input, "pypto.pow's input")
    if not _scalar(other) or float(other) == 0:
        refuse(f"pypto.pow's exponent {other!r} is not modelled: give a nonzero number (x ** 0 is pypto.full(1))")
    c = float(other)
    if c in _POW:
        kind = _POW[c]
        if kind == "identity":
            return x
        if kind == "square":
            return mul(x, x)
        return {"sqrt": sqrt, "rsqrt": rsqrt, "reciprocal": reciprocal}[kind](x)
    half = x.known_dtype in (DataType.DT_FP16, DataType.DT_BF16)
    xf = cast(x, DataType.DT_FP32) if half else x
    if c == int(c):
        n, y, square = int(c) if c > 0 else -int(c), None, xf  # (abs is pypto.abs here)
        while n:
            if n & 1:
                y = square if y is None else mul(y, square)
            n >>= 1
            if n:
                square = mul(square, square)
        assert y is not None
        y = reciprocal(y) if c < 0 else y
    else:
        y = exp(mul(log(xf), c))
    return cast(y, x.known_dtype) if half else y
