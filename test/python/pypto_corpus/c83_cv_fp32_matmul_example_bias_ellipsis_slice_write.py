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

from batch_harness import PTO, pypto, run  # (the batch's _common.py)

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
