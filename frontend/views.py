"""Ops that read part of a tensor or move its data between dims: `reshape`,
`transpose`, `slice` (columns of a computed value), `window` (part of a weight, read in
place) and `concat`. Built, checked and located as the other ops of the builder."""

from __future__ import annotations

from collections.abc import Sequence

from pto.dialects import pto
from pto.frontend.builder import Symbol, Tensor, _emit, _same_kernel, _tensor, tensor_type
from pto.frontend.checks import _check_bool, _check_size, _fail


def reshape(x: Tensor, shape: Sequence[int | None], inplace: bool = False, *, label: str | None = None) -> Tensor:
    _tensor(x, "reshape input")
    op = pto.ReshapeOp(x.value, tensor_type(shape, x.dtype, "reshape shape"), _check_bool("inplace", inplace))
    return Tensor(x.kernel, _emit(op, x, label, None).results[0])


def transpose(x: Tensor, *, label: str | None = None) -> Tensor:
    """The last two dims swapped (`pto.transpose`), of a tensor of rank >= 3: on a token
    tile, each token's columns permuted (the interleaved RoPE's `[t, D/2, 2] -> [t, 2, D/2]`)."""
    _tensor(x, "transpose input")
    if len(x.shape) < pto.TRANSPOSE_MIN_RANK:
        _fail(
            f"transpose swaps the last two dims of a tensor of rank >= {pto.TRANSPOSE_MIN_RANK} "
            f"(dim 0 the tokens), got rank {len(x.shape)}"
        )
    return Tensor(x.kernel, _emit(pto.TransposeOp(x.value), x, label, None).results[0])


def slice(
    x: Tensor,
    offset: int,
    width: int,
    *,
    label: str | None = None,  # noqa: A001
    vec_tile: Sequence[int] | None = None,
) -> Tensor:
    """Columns `[offset, offset + width)` of the last axis (`pto.slice`)."""
    _tensor(x, "slice input")
    if not x.shape:
        _fail("slice input must have rank >= 1 (it slices the last axis), got rank 0")
    offset = _check_size("slice offset", offset, low=0)
    width = _check_size("slice width", width)
    k = x.shape[-1]
    if k is None or offset + width > k:
        _fail(f"slice columns [{offset}, {offset + width}) are outside the input's {k} columns")
    return Tensor(x.kernel, _emit(pto.SliceOp(x.value, offset, width), x, label, vec_tile).results[0])


def window(x: Tensor, shape: Sequence[int | Symbol], offsets: Sequence[int | Symbol]) -> Tensor:
    """`shape` at `offsets` of a weight (a tensor without a token axis), read in place
    (`pto.view`): part of a weight the host passes whole. `pto.view` calls it."""
    _tensor(x, "view input")
    if not x.shape or any(d is None or isinstance(d, Symbol) for d in x.shape):
        _fail(
            f"a view outside a token loop takes a window of a weight (static shape, rank >= 1), "
            f"got shape {list(x.shape)}"
        )
    if (
        not isinstance(shape, list | tuple)
        or not isinstance(offsets, list | tuple)
        or not len(shape) == len(offsets) == len(x.shape)
    ):
        _fail(
            f"view of a rank-{len(x.shape)} weight takes {len(x.shape)} sizes and {len(x.shape)} offsets, "
            f"got {shape!r} and {offsets!r}"
        )
    for ax, (n, o, d) in enumerate(zip(shape, offsets, x.shape, strict=True)):
        n, o = _check_size(f"view shape[{ax}]", n), _check_size(f"view offsets[{ax}]", o, low=0)
        assert isinstance(d, int)  # a static shape, checked above
        if o + n > d:
            _fail(f"view [{o}, {o + n}) of dim {ax} is outside the input's {d}")
    return Tensor(x.kernel, _emit(pto.ViewOp(x.value, list(offsets), list(shape)), x).results[0])


def concat(xs: Sequence[Tensor], *, label: str | None = None, vec_tile: Sequence[int] | None = None) -> Tensor:
    """The tensors side by side along the last axis (`pto.concat`); the leading dims and
    dtypes must agree."""
    if not isinstance(xs, list | tuple) or len(xs) < pto.CONCAT_MIN_INPUTS:
        _fail(f"concat takes a list of at least {pto.CONCAT_MIN_INPUTS} tensors, got {xs!r}")
    for i, x in enumerate(xs):
        _tensor(x, f"concat input {i}")
        if not x.shape:
            _fail(f"concat input {i} must have rank >= 1 (it joins along the last axis), got rank 0")
    _same_kernel(*xs)
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.dtype != first.dtype:
            _fail(f"concat input {i} is {x.dtype}, input 0 is {first.dtype}: cast them to one dtype first")
        if len(x.shape) != len(first.shape) or x.shape[:-1] != first.shape[:-1]:
            _fail(
                f"concat input {i} has shape {list(x.shape)}, input 0 {list(first.shape)}: "
                "only the last dims may differ"
            )
    op = pto.ConcatOp([x.value for x in xs])
    return Tensor(first.kernel, _emit(op, first, label, vec_tile).results[0])
