"""`pypto.operation`: `op_wrapper`, which PyPTO's model code puts on helpers that call the
native binding (`pypto.pypto_impl`) to turn its tensors into `pypto.Tensor`s. Here those
calls return `pypto.Tensor`s already, so the helper is kept as it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_F = TypeVar("_F", bound=Callable)


def op_wrapper(fn: _F) -> _F:
    return fn
