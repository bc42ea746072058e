"""The acceptance rule of SK03.md: no NaN or Inf, and at most 0.5% of the elements
beyond `atol + rtol * |ref|`. The reference is the kernel run at the `pto` level."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType

from pto.dialects.common import elem_name
from pto.interp import numerics as nx
from pto.interp.run import InputError
from pto.tracebacks import api_boundary

# (atol, rtol) per output element type. bf16: the reference kernels' tests (rtol = 2^-7,
# half a bf16 ulp is 2^-8); f16 likewise at its precision; f32: accumulation-order
# differences of a K=16384 reduction; int8 quant outputs rtol 0.005 (SK03.md); int32 exact.
TOLERANCES: dict[str, tuple[float, float]] = {
    "bf16": (1e-4, 0.0078125),
    "f16": (1e-4, 0.0009765625),
    "f32": (1e-4, 1e-4),
    "i8": (0.0, 0.005),
    "i32": (0.0, 0.0),
}
MAX_BAD_FRACTION = 0.005
FLOATS_BY_PRECISION = ("f32", "f16", "bf16")  # tolerances loosen along this order


def golden_elem(out_elem: str, module) -> str:
    """The tolerance to check a float output by: the least precise float type the kernel
    computes with. An f32 output computed through a bf16 value (SK-03's normalised
    activation) is only as precise as bf16: a summation order (a column-tiled sum of
    squares) may flip a bf16 rounding, which no f32 tolerance allows."""
    if out_elem not in FLOATS_BY_PRECISION:
        return out_elem
    elems = {
        elem_name(v.type.element_type)
        for op in module.walk()
        for v in (*op.results, *op.operands)
        if isinstance(v.type, TensorType)
    }
    return max((e for e in elems if e in FLOATS_BY_PRECISION), key=FLOATS_BY_PRECISION.index, default=out_elem)


@dataclass
class Verdict:
    ok: bool
    total: int
    bad: int
    nonfinite: int
    worst: list[tuple[tuple[int, ...], float, float]] = field(default_factory=list)  # (index, got, want)

    def describe(self, name: str) -> str:
        head = (
            f"{name}: {'ok' if self.ok else 'MISMATCH'}: {self.bad} of {self.total} elements beyond tolerance "
            f"({self.bad / max(self.total, 1):.2%}, limit {MAX_BAD_FRACTION:.1%}), {self.nonfinite} NaN/Inf"
        )
        rows = [f"  at {list(i)}: got {g:.6g}, want {w:.6g}" for i, g, w in self.worst]
        return "\n".join([head, *rows])


def _as_f64(name: str, x: object) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise InputError(f"check: {name} must be a numpy array, got {type(x).__name__}")
    try:
        return x.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"check: {name} must hold numbers, got dtype {x.dtype}") from None


def _tolerance(got: np.ndarray, elem: object) -> tuple[float, float]:
    """The (atol, rtol) of `elem`, or of got's dtype; any other dtype needs `elem`."""
    if elem is None:
        if got.dtype not in nx.NAMES:
            raise InputError(f"check: no tolerance for dtype {got.dtype}: give elem= (one of {', '.join(TOLERANCES)})")
        elem = nx.NAMES[got.dtype]
    if not isinstance(elem, str) or elem not in TOLERANCES:
        raise InputError(f"check: elem must be one of {', '.join(TOLERANCES)}, got {elem!r}")
    return TOLERANCES[elem]


@api_boundary
def check(got: np.ndarray, want: np.ndarray, elem: str | None = None, worst: int = 5) -> Verdict:
    """Apply the acceptance rule to `got` against the reference `want`. Both are numpy
    arrays of one shape; `elem` (default: got's dtype, one of TOLERANCES) picks the
    tolerance. Bad arguments raise InputError (a ValueError) naming the argument."""
    g, w = _as_f64("got", got), _as_f64("want", want)
    if got.shape != want.shape:  # broadcasting would compare the wrong elements
        raise InputError(f"check: got has shape {got.shape} but want has shape {want.shape}")
    atol, rtol = _tolerance(got, elem)
    if not isinstance(worst, numbers.Integral) or isinstance(worst, bool) or worst < 0:
        raise InputError(f"check: worst must be an integer >= 0, got {worst!r}")
    nonfinite = int((~np.isfinite(g)).sum())
    # a non-finite element is counted, not warned about (and errstate is not a decorator
    # here: its wrapper's frame would be the last of a refusal's traceback, not the user's)
    with np.errstate(all="ignore"):
        err = np.abs(g - w)
        bad_mask = ~(err <= atol + rtol * np.abs(w))  # NaN counts as bad
    bad = int(bad_mask.sum())
    ok = nonfinite == 0 and bad <= MAX_BAD_FRACTION * got.size
    order = np.argsort(np.where(np.isnan(err), np.inf, err), axis=None)[::-1][:worst]
    rows = [
        (tuple(int(i) for i in np.unravel_index(k, got.shape)), float(g.flat[k]), float(w.flat[k]))
        for k in order
        if bad_mask.flat[k]
    ]
    return Verdict(ok, got.size, bad, nonfinite, rows)
