"""`pypto.matmul`: the cube's op, and the forms that reach it (a transposed operand, a
hand-written split-K's K slices, a weight times transposed tokens, a bias)."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from pto.frontend import builder as b
from pto.frontend.checks import caller
from pto.pypto import split_k, tcols
from pto.pypto.errors import lowering_warning, refuse
from pto.pypto.ops import _lazy, _result, _tensor, add, cast
from pto.pypto.tensor import Tensor
from pto.pypto.types import CastMode, DataType, elem


def matmul(
    input: Tensor,
    mat2: Tensor,
    out_dtype: DataType,
    *,
    a_trans: bool = False,
    b_trans: bool = False,  # noqa: A002
    c_matrix_nz: bool = False,
    extend_params=None,
) -> Tensor:
    if (ta := _lazy(input, "T")) is not None:
        input, a_trans = ta, not a_trans
    if (tb := _lazy(mat2, "T")) is not None:
        mat2, b_trans = tb, not b_trans
    slices_w = _lazy(mat2, "cols") is not None or _lazy(mat2, "rows") is not None
    if slices_w and input._kslice is not None:  # a cast K slice also read otherwise
        input = input._kslice
    if _lazy(input, "castcols") is not None and slices_w:
        input = split_k.cast_columns(input, cast)
    if _lazy(input, "cols") is not None and slices_w:
        elem(out_dtype, "pypto.matmul's out_dtype")
        return split_k.partial_matmul(input, mat2, out_dtype, bool(a_trans), bool(b_trans))
    if isinstance(mat2, Tensor) and mat2._tok and isinstance(input, Tensor) and not input._tok and input._lazy is None:
        elem(out_dtype, "pypto.matmul's out_dtype")  # a weight times transposed tokens (hc_pre's prefill)
        return tcols.matmul(input, mat2, out_dtype, bool(a_trans), bool(b_trans), matmul)
    a, w = _tensor(input, "pypto.matmul's input"), _tensor(mat2, "pypto.matmul's mat2")
    out = elem(out_dtype, "pypto.matmul's out_dtype")
    if c_matrix_nz:
        refuse("pypto.matmul's c_matrix_nz is not modelled")
    if extend_params is not None:
        return _matmul_bias(a, w, out_dtype, bool(a_trans), bool(b_trans), extend_params)
    if len(a.shape) != 2 or len(w.shape) != 2:
        refuse(f"pypto.matmul takes rank-2 tensors here, got {a.shape} and {w.shape}")
    if not w._tok and w._body >= 0 and (at := _computed_at(w)) is not None:
        # (a weight stage runs once per launch: it has no body to run in)
        lowering_warning(
            "the matmul's weight is computed in the loop body from weights alone: pto.pypto computes it "
            "once per launch, before the loop; PyPTO computes it in every body (compute it before the loop)",
            at,
        )
    # K is checked here, at the matmul's line: its result's shape would be refused later, at another line
    ka, kw = a.shape[0 if a_trans else 1], w.shape[1 if b_trans else 0]
    if ka != kw:
        refuse(
            f"pypto.matmul's operands disagree on K: the input {a.shape} has {ka} (a_trans={bool(a_trans)}), "
            f"mat2 {w.shape} has {kw} (b_trans={bool(b_trans)})"
        )
    m = a.shape[1] if a_trans else a.shape[0]
    n = w.shape[0] if b_trans else w.shape[1]
    return _result("matmul", [a, w], [m, n], out_dtype, lambda x, y: b.matmul(x, y, bool(a_trans), bool(b_trans), out))


def _computed_at(w: Tensor) -> tuple[str, int] | None:
    """The file and line of the op that computed the traced weight `w` (a cast), or None
    for a window or an in-place reshape of one (those move no data)."""
    v = getattr(w._val, "value", None)
    op = v.owner if v is not None else None
    if not isinstance(op, Operation) or op.name in ("pto.view", "pto.reshape"):
        return None
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return loc.filename.data, loc.line.data
    return caller()


def _matmul_bias(a: Tensor, w: Tensor, out_dtype: DataType, a_trans: bool, b_trans: bool, params) -> Tensor:
    """`extend_params={"bias_tensor": bias}`: the device adds the bias to the f32
    accumulator (its BT buffer) before the cast to `out_dtype`. Modelled as the same
    numbers by another route: the matmul to f32, an add of the f32 bias in the vector
    stage after it, the cast (round to nearest even, as the fixpipe's)."""
    if not isinstance(params, dict) or set(params) != {"bias_tensor"}:
        keys = sorted(params) if isinstance(params, dict) else params
        refuse(f"pypto.matmul's extend_params: only {{'bias_tensor': ...}} is modelled, got {keys!r}")
    bias = _tensor(params["bias_tensor"], "pypto.matmul's bias_tensor")
    n = w.shape[0] if b_trans else w.shape[1]
    if list(bias.shape) not in ([n], [1, n]):
        refuse(f"pypto.matmul's bias_tensor must be [{n}] or [1, {n}] (the output's columns), got {bias.shape}")
    if a._dtype in (DataType.DT_INT8,):
        refuse("pypto.matmul's bias_tensor on an int8 matmul (an int32 accumulator) is not modelled")
    y = matmul(a, w, DataType.DT_FP32, a_trans=a_trans, b_trans=b_trans)
    y = add(y, cast(bias, DataType.DT_FP32))
    return cast(y, out_dtype, CastMode.CAST_RINT)
