"""`pypto.matmul`: the cube's op, and the forms that reach it (a transposed operand, a
hand-written split-K's K slices, a weight times transposed tokens, a bias)."""

from __future__ import annotations

import numbers

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from pto.frontend import builder as b
from pto.frontend.checks import caller
from pto.pypto import split_k, tcols
from pto.pypto.errors import lowering_warning, refuse
from pto.pypto.extras import maximum
from pto.pypto.ops import _lazy, _result, _tensor, add, cast, mul
from pto.pypto.tensor import Tensor
from pto.pypto.types import CastMode, DataType, ReLuType, TransMode, elem


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
    if extend_params is not None and (params := _extend_params(extend_params)):
        return _matmul_fixpipe(a, w, out_dtype, bool(a_trans), bool(b_trans), params)
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
    if a_trans and a._tok:
        refuse(
            f"pypto.matmul with a_trans of a token tile {a.shape} (its tokens on dim 1) is not supported: "
            "pass the activation as [tokens, K]"
        )
    if a._tok and w._tok:
        # (in a kernel of static shapes traced as one tile, a square weight read as tokens:
        # refused here, so that the next reading of its parameters is tried, pypto/whole.py)
        refuse(f"pypto.matmul of two token tiles {a.shape} and {w.shape}: a product over the tokens is not SK-03")
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


EXTEND_KEYS = ("bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode")
# What a fixpipe dequant writes here: a float (a requant to int8, the device's other
# form, saturates in its fixpipe, which these vector ops would not).
DEQUANT_OUT = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)


def _extend_params(params) -> dict:
    """The fixpipe work `extend_params` asks for, its defaults (PyPTO's: no bias, scale 0.0
    for none, NO_RELU, CAST_NONE) left out; what is not modelled is refused."""
    if not isinstance(params, dict) or not set(params) <= set(EXTEND_KEYS):
        keys = sorted(params) if isinstance(params, dict) else params
        refuse(f"pypto.matmul's extend_params takes {', '.join(EXTEND_KEYS)}, got {keys!r}")
    if params.get("scale_tensor") is not None:
        refuse("pypto.matmul's scale_tensor (a per-channel DT_UINT64 dequant word) is not modelled: multiply after")
    if params.get("trans_mode", TransMode.CAST_NONE) is not TransMode.CAST_NONE:
        refuse("pypto.matmul's trans_mode (f32 operands rounded to TF32) is modelled as CAST_NONE only")
    relu = params.get("relu_type", ReLuType.NO_RELU)
    if not isinstance(relu, ReLuType):
        refuse(f"pypto.matmul's relu_type must be a pypto.ReLuType, got {relu!r}")
    scale = params.get("scale", 0.0)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        refuse(f"pypto.matmul's scale must be a number, got {scale!r}")
    out: dict = {}
    if params.get("bias_tensor") is not None:
        out["bias"] = params["bias_tensor"]
    if scale != 0:
        out["scale"] = float(scale)
    if relu is ReLuType.RELU:
        out["relu"] = True
    return out


def _matmul_fixpipe(a: Tensor, w: Tensor, out_dtype: DataType, a_trans: bool, b_trans: bool, params: dict) -> Tensor:
    """The fixpipe's work on the accumulator, in PyPTO's order, C = DEQ(ReLU(A @ B + bias))
    * scale: the bias added to the accumulator (f32, or int32 for int8 operands), the
    ReLU, then for int8 the dequant by the per-tensor scale (the accumulator as f32
    times it) and the cast to `out_dtype` (to nearest even, as the fixpipe's). Modelled
    as the same numbers by another route: the matmul's accumulator as its result, the
    rest vector ops of the stage after it (an int32 accumulator past 2^24 rounds once
    more in its f32 cast than on the device)."""
    quant = a._dtype is DataType.DT_INT8
    if "scale" in params and not quant:
        refuse("pypto.matmul's scale dequantises an int8 matmul: multiply a float matmul's result after it")
    if quant and out_dtype is not DataType.DT_INT32 and "scale" not in params:
        refuse(f"pypto.matmul of int8 to {out_dtype.name} needs a dequant scale (extend_params 'scale')")
    if "scale" in params and out_dtype not in DEQUANT_OUT:
        names = ", ".join(d.name for d in DEQUANT_OUT)
        refuse(f"pypto.matmul's scale dequantises to {names}, got {out_dtype.name} (a requant is not modelled)")
    y = matmul(a, w, DataType.DT_INT32 if quant else DataType.DT_FP32, a_trans=a_trans, b_trans=b_trans)
    if (bias := params.get("bias")) is not None:
        bias = _tensor(bias, "pypto.matmul's bias_tensor")
        n = w.shape[0] if b_trans else w.shape[1]
        if list(bias.shape) not in ([n], [1, n]):
            refuse(f"pypto.matmul's bias_tensor must be [{n}] or [1, {n}] (the output's columns), got {bias.shape}")
        want = DataType.DT_INT32 if quant else DataType.DT_FP32
        if quant and bias._dtype is not want:
            got = bias.known_dtype.name
            refuse(f"pypto.matmul's bias_tensor of an int8 matmul is DT_INT32 (its accumulator's), got {got}")
        y = add(y, bias if quant else cast(bias, want))
    if quant and out_dtype is DataType.DT_INT32:
        if params.get("relu"):
            refuse("pypto.matmul's relu_type on an int32 result is not modelled")
        return y
    if quant:
        y = cast(y, DataType.DT_FP32)
    if params.get("relu"):
        y = maximum(y, 0.0)
    if "scale" in params:
        y = mul(y, params["scale"])
    return y if out_dtype is DataType.DT_FP32 else cast(y, out_dtype, CastMode.CAST_RINT)
