"""`pto-classify-skeleton`: recognise SK-03 and its form; reject everything else."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError, Note
from pto.dialects import pto
from pto.dialects.common import Form, FormAttr, elem_name
from pto.passes.fuse_stages.quant import by_a_number
from pto.passes.pto_join_n_windows import covers, window_groups

# The mhc_pre recognition rule of SK03.md.
MHC_MAX_N = 64
MHC_MIN_K = 2**14


def _backward(v: SSAValue) -> set[Operation]:
    """Every op whose result `v` depends on, within the function."""
    seen: set[Operation] = set()
    stack = [v]
    while stack:
        op = stack.pop().owner
        if isinstance(op, Operation) and op not in seen:
            seen.add(op)
            stack.extend(op.operands)
    return seen


def _forward(op: Operation) -> set[Operation]:
    """Every op that depends on a result of `op`."""
    seen: set[Operation] = set()
    stack = [op]
    while stack:
        for r in stack.pop().results:
            for use in r.uses:
                if use.operation not in seen:
                    seen.add(use.operation)
                    stack.append(use.operation)
    return seen


def _is_kernel(func: FuncOp) -> bool:
    """A function with pto ops, or one without ops of a lower level that says it is a
    kernel by its pto hints (a tile- or npu-level function keeps `pto.target`)."""
    names = [o.name for o in func.walk()]
    if any(n.startswith("pto.") for n in names):
        return True
    lowered = any(n.startswith(("tile.", "npu.")) for n in names)
    return not lowered and any(k.startswith("pto.") for k in func.attributes)


def _spans(windows: list[tuple[int, int]]) -> str:
    return ", ".join(f"[{a}, {b})" for a, b in sorted(windows))


def classify(func: FuncOp) -> tuple[Form, str]:
    """The form of a kernel and the reason, or a DiagnosticError saying why it is not SK-03."""
    ops = [op for op in func.walk() if op.name.startswith("pto.")]
    matmuls = [op for op in ops if isinstance(op, pto.MatmulOp)]
    if not matmuls:
        raise DiagnosticError(
            func, f"'{func.sym_name.data}' is not SK-03: it has no pto.matmul (a vector-only kernel, as SK-13)"
        )
    if len(matmuls) > 1:
        chained = [b for b in matmuls[1:] if any(a in _backward(b.lhs) | _backward(b.rhs) for a in matmuls)]
        summed = all(any(isinstance(u.operation, pto.AddOp) for u in mm.result.uses) for mm in matmuls)
        how = "chained" if chained else "summed" if summed else "independent"
        hint = {
            "chained": "(chained matmuls are SK-04/SK-05/SK-14)",
            # (pto.pypto makes such a sum one split-K matmul when its slices are views of one tensor)
            "summed": "(a sum of matmuls over K slices is one matmul when each reads columns [.., k:k + KC] of "
            "one activation tensor and rows [k:k + KC, ..] of one weight: slices of one value, not each "
            "computed on its own)",
            "independent": "(matmuls of one activation: join their weights into one and split its result with views)",
        }[how]
        groups = window_groups(func) if how == "independent" else []
        if any(covers(windows, n) for _, windows, n in groups):
            hint = "(matmuls of N windows that cover one weight are its one matmul: run pto-join-n-windows first)"
        elif groups:
            said = "; ".join(f"{_spans(w)} of N = {n}" for _, w, n in groups)
            hint = (
                f"(the matmuls of one activation read N windows of one weight, {said}: they are its one "
                "matmul when they cover all of it, each column once)"
            )
        raise DiagnosticError(
            func,
            f"'{func.sym_name.data}' is not SK-03: it has {len(matmuls)} {how} matmuls; SK-03 has exactly one {hint}",
            [Note(mm.location, "matmul here") for mm in matmuls],
        )
    ret = func.body.block.last_op
    for i, v in enumerate(ret.operands if isinstance(ret, ReturnOp) else ()):
        if isinstance(v, BlockArgument):
            # An output buffer is written by the kernel's own stores; nothing would
            # copy an argument into it.
            raise DiagnosticError(
                ret,
                f"result #{i} is the argument %{v.name_hint or v.index} itself: "
                "an SK-03 kernel computes each of its results",
            )
    mm = matmuls[0]
    if not _forward(mm) & {ret}:
        raise DiagnosticError(
            mm, f"'{func.sym_name.data}' is not SK-03: no result of the kernel depends on its matmul (an unused matmul)"
        )
    m, k, _, n = mm.mkn()
    ein = elem_name(pto.tensor_type(mm.lhs).element_type)
    before = _backward(mm.lhs) | _backward(mm.rhs)
    after = _forward(mm)
    norm_before = any(isinstance(op, pto.RmsNormOp) for op in before)
    norm_after = any(isinstance(op, pto.RmsNormOp) for op in after)
    if ein == "i8":
        if _integer_output(mm.result):
            # (PyPTO's int8 matmul tests: the i32 product, or it plus i32 tensors, is the
            # output: nothing to fuse, exact)
            return Form.STANDARD, "an int8 matmul whose i32 result (plus i32 tensors) is the kernel's output"
        if not any(isinstance(op, pto.DequantOp) for op in after) and not _static_dequant(mm):
            raise DiagnosticError(
                mm,
                "an int8 matmul in SK-03 (the AT-11 quant form) needs a pto.dequant of its result: "
                "its i32 values cast to f32 (rint) times the [M, 1] activation scale, then the weight "
                "scale (or the weight scale first), which pto-fuse-stages fuses from those ops; or, after a "
                "static quant, its i32 values (plus an i32 bias) cast to f32 times a per-channel [1, N] scale "
                "or a number (a ReLU before it or not)",
                [
                    Note(u.operation.location, f"the i32 result is read here, by '{u.operation.name}'")
                    for u in mm.result.uses
                ],
            )
        return Form.QUANT, "int8 matmul followed by dequant (or a static quant's per-channel scale)"
    if n != -1 and n <= MHC_MAX_N and k >= MHC_MIN_K and ein == "f32":
        return Form.MHC_PRE, f"one f32 matmul with N = {n} <= {MHC_MAX_N} and K = {k} >= {MHC_MIN_K}"
    if norm_after and not norm_before:
        return Form.C_V, "matmul first, RMSNorm after"
    return Form.STANDARD, "RMSNorm (if any) before the matmul"


def _integer_output(v: SSAValue) -> bool:
    """`v` (i32) reaches the kernel's results only as itself or through i32 adds."""
    for u in v.uses:
        op = u.operation
        if isinstance(op, ReturnOp):
            continue
        if not (isinstance(op, pto.AddOp) and elem_name(pto.tensor_type(op.result).element_type) == "i32"):
            return False
        if not _integer_output(op.result):
            return False
    return True


def _static_dequant(mm: pto.MatmulOp) -> bool:
    """GLM's static quant: the i32 result (an i32 bias added first, or not) cast to f32
    and multiplied by a per-channel [1, N] or [N] scale alone (the activation was
    quantised with static per-channel scales: no per-token one to undo); or by one
    number, a ReLU (`maxs` 0) before it or not (a matmul's fixpipe dequant, PyPTO's
    `extend_params={"scale": s, "relu_type": RELU}`). It runs as written, after the
    matmul; a matmul over N windows joined (pto-join-n-windows) has it per window."""
    uses = [u.operation for u in mm.result.uses]
    if uses and all(isinstance(u, pto.SliceOp) for u in uses):
        return all(_static_dequant_of(u.result) for u in uses)
    return _static_dequant_of(mm.result)


def _static_dequant_of(v: SSAValue) -> bool:
    use = v.get_user_of_unique_use() if v.has_one_use() else None
    if isinstance(use, pto.AddOp) and elem_name(pto.tensor_type(use.result).element_type) == "i32":
        v = use.result
        use = v.get_user_of_unique_use() if v.has_one_use() else None
    if not (isinstance(use, pto.CastOp) and elem_name(pto.tensor_type(use.result).element_type) == "f32"):
        return False
    if by_a_number(use.result):
        return True
    mul = use.result.get_user_of_unique_use() if use.result.has_one_use() else None
    if not isinstance(mul, pto.MulOp):
        return False
    n = pto.tensor_type(v).get_shape()[-1]
    scale = mul.rhs if mul.lhs is use.result else mul.lhs
    return list(pto.tensor_type(scale).get_shape()) in ([1, n], [n])


def _fits(form: Form, func: FuncOp) -> str | None:
    """Why a pinned form cannot apply to this kernel, or None."""
    mm = next(op for op in func.walk() if isinstance(op, pto.MatmulOp))
    ein = elem_name(pto.tensor_type(mm.lhs).element_type)
    if form == Form.QUANT and ein != "i8":
        return f"the quant form needs an int8 matmul, this one takes {ein}"
    if form != Form.QUANT and ein == "i8":
        return "an int8 matmul is the quant form"
    if form == Form.MHC_PRE and ein != "f32":
        return f"the mhc_pre variant computes in f32, this matmul takes {ein}"
    if form == Form.C_V and not any(isinstance(op, pto.RmsNormOp) for op in _forward(mm)):
        return "the C -> V form needs an RMSNorm after the matmul"
    return None


@dataclass(frozen=True)
class PtoClassifySkeletonPass(ModulePass):
    """Recognise the SK-03 form of each pto kernel and record it as `pto.form`.

    Forms: `standard` (V -> C [-> V]), `c_v` (MatMul -> RMSNorm), `quant` (AT-11:
    Quant -> int8 MatMul -> Dequant) and `mhc_pre` (one f32 matmul with N <= 64 and
    K >= 2^14). A kernel with no matmul or several is rejected with what was found.
    A pinned `pto.form` is kept when the kernel can take it.
    """

    name = "pto-classify-skeleton"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if not isinstance(func, FuncOp) or not _is_kernel(func):
                continue
            pinned = func.attributes.get("pto.form")
            if isinstance(pinned, FormAttr):
                classify(func)  # still rejects what is not SK-03
                if (why := _fits(pinned.data, func)) is not None:
                    raise DiagnosticError(func, f"pinned form '{pinned.data.value}' does not fit: {why}")
                continue
            form, _ = classify(func)
            func.attributes["pto.form"] = FormAttr(form)
