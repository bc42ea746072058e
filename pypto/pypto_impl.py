"""`pypto.pypto_impl`: the names of PyPTO's native binding that its own model code calls
directly (DeepSeek-V4's `common.py` imports it for `scalar_div`). Any other name is
refused at the user's line, as PyPTO's other unmodelled names are."""

from __future__ import annotations

from pto.pypto.errors import _Unsupported, refuse
from pto.pypto.tensor import Tensor
from pto.pypto.types import Element  # noqa: F401 (the binding's typed scalar: pypto.Element)


def ScalarDivS(tensor: Tensor, element: float, is_reserve: bool = False) -> Tensor:  # noqa: N802
    """`tensor / element`, or with `is_reserve` (the binding's word for reversed)
    `element / tensor`: `scalar_div(amax, 127.0, True)` is `127 / amax`."""
    if not isinstance(tensor, Tensor):
        refuse(f"pypto_impl.ScalarDivS's tensor must be a tensor of the kernel, got {tensor!r}")
    return float(element) / tensor if is_reserve else tensor / float(element)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Unsupported(f"pypto.pypto_impl.{name}")
