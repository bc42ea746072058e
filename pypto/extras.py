"""PyPTO 0.2.0 ops that SK-03 kernels write beside the core set of `ops.py`: an
elementwise maximum or minimum (a ReLU, a max over the heads), `unsqueeze` (a reshape
with a 1 inserted) and `expand_clone` (a small weight broadcast, `pypto/expand.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from pto.frontend import builder as b
from pto.pypto import expand
from pto.pypto.errors import refuse
from pto.pypto.ops import _binary, _broadcast, _result, _scalar, _tensor, reshape
from pto.pypto.tensor import Tensor


def maximum(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    """`pto.max` (`pto.maxs` with a number: `maximum(x, 0.0)` is a ReLU)."""
    return _extremum("max", input, other)


def minimum(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return _extremum("min", input, other)


def _extremum(kind: str, x: Tensor | float, y: Tensor | float) -> Tensor:
    name = {"max": "maximum", "min": "minimum"}[kind]
    if _scalar(x):
        x, y = y, x
    if _scalar(y):
        s = float(y)
        scalar = b.maxs if kind == "max" else b.mins
        t = _tensor(x, f"pypto.{name}'s input")
        return _result(kind, [t], t.shape, t.known_dtype, lambda v: scalar(v, s))
    return _binary(kind, _tensor(x, f"pypto.{name}'s input"), _tensor(y, f"pypto.{name}'s other"))


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
