"""PyPTO 0.2.0's enums under their own names, and what each means to this project."""

from __future__ import annotations

import enum

from pto.dialects.common import CASTS
from pto.pypto.errors import refuse


class DataType(enum.Enum):
    DT_INT4 = "int4"
    DT_INT8 = "i8"
    DT_INT16 = "int16"
    DT_INT32 = "i32"
    DT_INT64 = "int64"
    DT_FP8 = "fp8"
    DT_FP16 = "f16"
    DT_FP32 = "f32"
    DT_BF16 = "bf16"
    DT_HF4 = "hf4"
    DT_HF8 = "hf8"
    DT_FP8E4M3 = "fp8e4m3"
    DT_FP8E5M2 = "fp8e5m2"
    DT_FP8E8M0 = "fp8e8m0"
    DT_FP4_E2M1X2 = "fp4e2m1x2"
    DT_FP4_E1M2X2 = "fp4e1m2x2"
    DT_UINT8 = "uint8"
    DT_UINT16 = "uint16"
    DT_UINT32 = "uint32"
    DT_UINT64 = "uint64"
    DT_BOOL = "bool"
    DT_DOUBLE = "double"
    DT_BOTTOM = "bottom"


# The element types the levels model; the others are PyPTO names a kernel may not use.
MODELLED = {DataType.DT_BF16, DataType.DT_FP16, DataType.DT_FP32, DataType.DT_INT8, DataType.DT_INT32}


def elem(dt: object, what: str, at: tuple[str, int] | None = None) -> str:
    """This project's element type name for a PyPTO DataType (refused at `at`, or else
    at the user's line)."""
    if not isinstance(dt, DataType):
        refuse(f"{what} must be a pypto.DataType (pypto.DT_BF16, ...), got {dt!r}", at)
    if dt not in MODELLED:
        refuse(f"{what} {dt.name} is not modelled (SK-03 here: DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT32)", at)
    return dt.value


def from_elem(name: str) -> DataType:
    return next(d for d in MODELLED if d.value == name)


def cast_steps(src: str, to: str, mode_given: bool) -> list[DataType]:
    """The types a cast from `src` to `to` (element types) goes through when the hardware
    has no instruction for it (none when it has): exact conversions (i8 -> f16 -> f32,
    bf16 -> f32), then the one to `to`, the only one that may round, so that the chain's
    result is the single conversion's in the cast's mode (W8A16's int8 weight to bf16:
    through f16 and f32). Refused when there is no such chain (i32 -> bf16 would round
    twice), and when its last step is exact and a mode or saturation is given."""
    if (src, to) in CASTS:
        return []
    names = f"pypto.cast from {from_elem(src).name} to {from_elem(to).name}"
    paths = [[src]]
    while paths:
        path = paths.pop(0)
        if (path[-1], to) in CASTS:
            if CASTS[(path[-1], to)] and mode_given:
                refuse(f"{names} is exact: give it no mode or saturation")
            return [from_elem(step) for step in path[1:]]
        paths += [[*path, c] for (a, c), exact in CASTS.items() if exact and a == path[-1] and c not in path]
    refuse(f"{names}: the hardware has no such conversion, nor exact ones it can be made of with one that rounds last")


class CastMode(enum.Enum):
    CAST_NONE = "none"
    CAST_RINT = "rint"
    CAST_ROUND = "round"
    CAST_FLOOR = "floor"
    CAST_CEIL = "ceil"
    CAST_TRUNC = "trunc"
    CAST_ODD = "odd"


class ReLuType(enum.Enum):
    """A matmul's fixpipe ReLU (`extend_params={"relu_type": ...}`)."""

    NO_RELU = 0
    RELU = 1


class TransMode(enum.Enum):
    """An f32 matmul's rounding of its operands to TF32 (`extend_params={"trans_mode": ...}`)."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


class SaturationMode(enum.Enum):
    OFF = 0
    ON = 1


class CachePolicy(enum.Enum):
    NONE_CACHEABLE = "none_cacheable"
    MAX_NUM = "max_num"


class StatusType(enum.Enum):
    """A dimension of a `pypto.Tensor` annotation: DYNAMIC (or DYN) is the token axis."""

    DYNAMIC = "dynamic"
    STATIC = "static"
    DYN = "dyn"

    def __repr__(self) -> str:  # as the kernel spells it, in messages that print a shape
        return f"pypto.{self.name}"


class RunMode(enum.Enum):
    NPU = 0
    SIM = 1


class TileOpFormat(enum.Enum):
    """`format=` of a tensor annotation: ND (row-major) or NZ (fractal; a matmul's weight)."""

    TILEOP_ND = 0
    TILEOP_NZ = 1


class Element(float):
    """PyPTO's typed scalar, `Element(dtype, value)`: a number wherever an op takes one
    (`clip`'s bounds, `mul(x, s)`, ...). The op's math is the tensor's, as for a Python
    number: the dtype is kept, not applied."""

    dtype: DataType

    def __new__(cls, dtype: DataType, data: int | float) -> Element:
        if isinstance(data, bool) or not isinstance(data, int | float):
            refuse(f"pypto.Element takes an int or a float, got {type(data).__name__}")
        if not isinstance(dtype, DataType):
            refuse(f"pypto.Element's dtype must be a pypto.DataType, got {dtype!r}")
        e = super().__new__(cls, data)
        e.dtype = dtype
        return e

    @property
    def value(self) -> float:
        return float(self)

    def __repr__(self) -> str:
        return f"pypto.Element({self.dtype.name}, {float(self)!r})"
