"""`pypto.expand_clone(x, shape)`: `x` broadcast to `shape`, kept as `x`.

Authors expand a small weight (a `[3, 1]` scale to `[3, 4]`, a `[D]` gamma to
`[1, H, D]`) to multiply it into a tile, often through a window of the expanded value
(`hc_scale.expand_clone([3, hc])[0:1, :]`). Every such use broadcasts again anyway: an
elementwise op whose other operand makes the same result from `x` itself reads `x`
(no copy is made, as numpy's broadcasting would not make one), a window of the
expanded value is the expanded window of `x`, and a reshape that only adds or drops
leading 1s keeps it expanded. Any other use is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from pto.frontend.checks import _is_int
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor


def is_expand(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "expand"


def expand_clone(x: Tensor, shape: Sequence, broadcast) -> Tensor:
    """The lazy expansion of `x` (a tensor of the kernel) to `shape`."""
    if not isinstance(shape, list | tuple) or not all(_is_int(d) and d > 0 for d in shape[1:]):
        refuse(f"pypto.expand_clone's shape must be a list of positive integers, got {shape!r}")
    shape = list(shape)
    if len(shape) < len(x.shape) or broadcast(x.shape, shape) != shape:
        refuse(f"pypto.expand_clone of {x.shape} to {shape}: only dims of size 1 (or new leading dims) expand")
    if shape == x.shape:
        return x
    return Tensor.traced(shape, x.known_dtype, None, x._tok, ("expand", source(x)))


def source(x: Tensor) -> Tensor:
    return x._lazy[1] if is_expand(x) else x  # type: ignore[index]


def operand(x: Tensor, other: Tensor, broadcast, what: str) -> Tensor:
    """`x` as an operand of an elementwise op with `other`: its source where that
    broadcasts to the same result."""
    if not is_expand(x):
        return x
    src = source(x)
    if broadcast(src.shape, other.shape) != broadcast(x.shape, other.shape):
        refuse(
            f"{what} of pypto.expand_clone's {x.shape} and {other.shape}: the expanded tensor is used only where "
            f"its source {src.shape} broadcasts the same way (an elementwise op), or through views"
        )
    return src


def reshape(x: Tensor, shape: list) -> Tensor | None:
    """A reshape that adds or drops leading 1s: the same expansion, else None."""

    def core(s: list) -> list:
        while s and s[0] == 1:
            s = s[1:]
        return s

    if core(list(shape)) != core(x.shape) or len(shape) < len(source(x).shape):
        return None
    return Tensor.traced(list(shape), x.known_dtype, None, x._tok, ("expand", source(x)))


def window(x: Tensor, shape: list, offsets: list, view) -> Tensor:
    """`view(x, shape, offsets)`: the window of the source (a dim it expands from 1
    keeps its one element), expanded to `shape`."""
    inside = len(shape) == len(offsets) == len(x.shape) and all(
        _is_int(o) and _is_int(n) and 0 <= o and 0 < n and o + n <= d
        for o, n, d in zip(offsets, shape, x.shape, strict=True)
    )
    if not inside:
        refuse(f"pypto.view of {shape} at {offsets} is not inside pypto.expand_clone's {x.shape}")
    src = source(x)
    lead = len(shape) - len(src.shape)
    s_shape, s_offs = [], []
    for d, o, n in zip(src.shape, offsets[lead:], shape[lead:], strict=True):
        s_shape.append(1 if d == 1 else n)
        s_offs.append(0 if d == 1 else o)
    part = src if s_shape == src.shape else view(src, s_shape, s_offs)
    return part if list(shape) == s_shape else Tensor.traced(list(shape), x.known_dtype, None, x._tok, ("expand", part))
