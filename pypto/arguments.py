"""What a jit kernel's call is given: its tensor arguments as numpy arrays (a torch
CPU tensor's storage shared, so outputs land in it), their dtypes where an annotation
has none, its other arguments as the immutable key its traces are kept under (as
PyPTO's cache), and whether an output can be written in place."""

from __future__ import annotations

import dataclasses
import enum

import ml_dtypes
import numpy as np

from pto.frontend.checks import _is_int
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType, from_elem

NUMPY = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "i8": np.int8, "i32": np.int32}


def dtype_of(a: np.ndarray, name: str) -> DataType:
    """The dtype of an argument whose annotation has none."""
    for elem_name, np_type in NUMPY.items():
        if a.dtype == np_type:
            return from_elem(elem_name)
    refuse(f"argument '{name}' is {a.dtype}: a tensor argument is bf16, float16, float32, int8 or int32")


def to_numpy(x: object, what: str) -> np.ndarray:
    """A numpy view of an argument (a torch tensor's storage is shared, so outputs land in it)."""
    if type(x).__module__.startswith("torch") and hasattr(x, "numpy"):  # (not a torch.Size, a dtype, a module)
        if str(getattr(x, "device", "cpu")) != "cpu":
            refuse(f"{what} is on {x.device}: pass CPU tensors")  # type: ignore[attr-defined]
        try:
            if str(x.dtype) == "torch.bfloat16":  # type: ignore[attr-defined]
                import torch

                return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)  # type: ignore[attr-defined]
            return x.numpy()
        except (AttributeError, RuntimeError, TypeError) as e:  # a grad, neg-bit, sparse or nested tensor
            refuse(f"{what} cannot be read as a dense CPU array ({type(e).__name__}: {e})")
    if isinstance(x, Tensor):
        refuse(f"{what} is a tensor of a kernel being traced: a jit kernel is not called inside another")
    if not isinstance(x, np.ndarray):
        refuse(f"{what} must be a numpy array or a torch CPU tensor, got {type(x).__name__}")
    return x


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), enum.Enum, np.generic)


def frozen(v: object) -> tuple:
    """A key equal only for equal immutable values (a tuple of them too); 1, 1.0 and True
    or 0.0 and -0.0 differ. A list, a dict or a dataclass instance (a model's config, as
    DeepSeek's `IndexerPrologQuantConfigs`) is keyed on what it holds at this call (its
    fields may change before the next, which then has a key of its own). A TypeError for
    anything else."""
    if isinstance(v, tuple | list):
        return (type(v), tuple(frozen(x) for x in v))
    if isinstance(v, dict):
        return (type(v), tuple((frozen(k), frozen(x)) for k, x in v.items()))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v), tuple((f.name, frozen(getattr(v, f.name))) for f in dataclasses.fields(v)))
    if not isinstance(v, _IMMUTABLE):
        raise TypeError(type(v).__name__)
    return (type(v), repr(v))


def positive(v: object) -> bool:
    return _is_int(v) and 1 <= v < 2**63  # type: ignore[operator]


def self_overlapping(a: np.ndarray) -> bool:
    """Whether two elements of `a` may share memory: it does not hold when each stride,
    smallest first, steps past everything the smaller ones span."""
    span = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape, strict=True) if n > 1):
        if stride < span:
            return a.size > 0
        span = stride * (n - 1) + span
    return False
