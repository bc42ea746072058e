#!/usr/bin/env python3
"""c83 (outside batch corpus11, k100): examples/01_beginner/compute/matmul_ops.py `matmul_bias_kernel` (bias via
extend_params={"bias_tensor": bias}) put into the token loop of examples/02_intermediate/controlflow/others/dynamic.py
`softmax_kernel` (tile_b = 1, b_loop = bs_dyn // tile_b, pypto.loop(0, b_loop, 1, name=..., idx_name=...),
slice views x[b_offset:b_offset_end, :hidden], output written as out[b_offset:b_offset_end, ...] = res).

SK-03 C (+bias in the matmul): fp32 x [T, 2048] @ fp32 w [2048, 256] ([K, N]) + bias [1, 256] fp32 -> fp32 out.
Annotations as in the examples: pypto.Tensor([pypto.DYNAMIC, ...], DT_FP32) for activations,
pypto.Tensor([], DT_FP32) for weight and bias. Cube tiles [32,32],[64,64],[64,64] as in matmul_bias_kernel.
"""
import numpy as np

# --- the batch's harness (corpus11's _common.py), inlined
import os

import numpy as np

PTO = os.environ.get("PTO") == "1"
if PTO:
    import pto.pypto as pypto  # noqa: F401
else:
    import pypto  # noqa: F401

TOKENS = (1, 37, 200)


def bf16_round(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def fp16_round(a):
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float32)


def _np_dt(dt):
    import ml_dtypes
    return {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32,
            "int8": np.int8, "int32": np.int32}[dt]


def _torch_dt(dt):
    import torch
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
            "int8": torch.int8, "int32": torch.int32}[dt]


def run(name, kernel, make_case, tokens=TOKENS, call=None):
    """make_case(T) -> (ins, outs, refs, tols, extra)
    ins: [(array, dt)], outs: [(shape, dt)], refs: [array], tols: [(atol, rtol) or 'step1'], extra: scalars.
    call(kernel, ins, outs, extra) overrides the argument order (default kernel(*ins, *outs, *extra))."""
    call = call or (lambda k, i, o, e: k(*i, *o, *e))
    all_ok = True
    for T in tokens:
        ins, outs, refs, tols, extra = make_case(T)
        if PTO:
            a_in = [np.ascontiguousarray(np.asarray(a).astype(_np_dt(dt))) for a, dt in ins]
            a_out = [np.zeros(s, _np_dt(dt)) for s, dt in outs]
            call(kernel, a_in, a_out, list(extra))
            for j, (o, r, tol) in enumerate(zip(a_out, refs, tols)):
                got = o.astype(np.float32)
                r = np.asarray(r, np.float32)
                err = np.abs(got - r)
                if tol == "step1":
                    bad = err > 1.0
                else:
                    bad = err > tol[0] + tol[1] * np.abs(r)
                bad = bad | ~np.isfinite(got)
                ok = not bad.any()
                all_ok &= ok
                print(f"  T={T} out{j}: {'ok' if ok else 'BAD'} max_abs_err={err.max():.4g} bad={int(bad.sum())}/{bad.size}")
        else:
            import torch
            t_in = [torch.from_numpy(np.asarray(a, np.float32)).to(_torch_dt(dt)) for a, dt in ins]
            t_out = [torch.zeros(s, dtype=_torch_dt(dt)) for s, dt in outs]
            call(kernel, t_in, t_out, list(extra))
            print(f"  T={T}: SIM ran")
    if PTO:
        print("ALL PASS" if all_ok else "FAIL")
        return
    print(f"{name} SIM accepted")
# --- the kernel



HID, N = 2048, 256


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def matmul_bias_loop_kernel(
    input_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
    b: pypto.Tensor([], pypto.DT_FP32),
    bias: pypto.Tensor([], pypto.DT_FP32),
    output_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
):
    tile_b = 1
    bs_dyn, hidden = input_tensor.shape
    b_loop = bs_dyn // tile_b

    pypto.set_vec_tile_shapes(1, 256)
    extend_params = {"bias_tensor": bias}
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])

    for idx in pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        b_offset = idx * tile_b
        b_offset_end = (idx + 1) * tile_b
        # Use slicing to extract a tile (concrete dims stay as-is)
        a = input_tensor[b_offset:b_offset_end, :hidden]
        out = pypto.matmul(a, b, pypto.DT_FP32, extend_params=extend_params)
        output_tensor[b_offset:b_offset_end, ...] = out


rng = np.random.default_rng(100)
W = rng.normal(0, 0.02, (HID, N)).astype(np.float32)
BIAS = rng.normal(0, 1, (1, N)).astype(np.float32)


def make_case(T):
    x = rng.normal(0, 1, (T, HID)).astype(np.float32)
    y = (x.astype(np.float64) @ W.astype(np.float64) + BIAS).astype(np.float32)
    return ([(x, "fp32"), (W, "fp32"), (BIAS, "fp32")], [((T, N), "fp32")], [y], [(2e-2, 2e-2)], [])


if __name__ == "__main__":
    run("k100", matmul_bias_loop_kernel, make_case)
