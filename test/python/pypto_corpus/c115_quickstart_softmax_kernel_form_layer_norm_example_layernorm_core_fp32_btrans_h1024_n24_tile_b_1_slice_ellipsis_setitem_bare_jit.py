"""c115 (outside batch corpus19, k165) (copied, two tutorial pieces composed): the kernel of docs/zh/tutorials/introduction/quick_start.md
(`softmax_kernel`: bare `@pypto.frontend.jit`, `pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)` annotations,
`tile_b = 1`, `b_loop = bs // tile_b`, `pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx")`,
`input_tensor[b_offset:b_offset_end, :hidden]` slicing, `output_tensor[b_offset:, ...] = out`) with
layer_norm.py's `layernorm_core` verbatim in place of softmax_core, followed by one b_trans matmul (router).
Changes: the 4-D shape becomes [T, H]; the body calls layernorm_core then matmul; set_vec_tile_shapes(1, H).
V->C: fp32 x [T,1024] -> LayerNorm (sum/h, centred, var/h, sqrt, divide, *gamma + beta; rank-1 [H] fp32)
-> @ fp32 w [24,1024] b_trans -> fp32 logits [T,24].
"""
import numpy as np
from batch_harness import pypto, run, PTO

H, N = 1024, 24
EPS = 1e-6


def layernorm_core(
    x: pypto.Tensor, gamma: pypto.Tensor, beta: pypto.Tensor, eps: float, hidden_size: int
) -> pypto.Tensor:
    # Compute mean
    mean = pypto.sum(x, dim=-1, keepdim=True)
    mean = mean / hidden_size

    centered = x - mean

    squared = centered * centered
    var = pypto.sum(squared, dim=-1, keepdim=True)
    var = var / hidden_size

    var_eps = var + eps
    std = pypto.sqrt(var_eps)
    normalized = centered / std

    scaled = normalized * gamma
    return scaled + beta


_jit = pypto.frontend.jit if PTO else pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})


@_jit
def layernorm_linear_kernel(
    input_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    beta: pypto.Tensor([H], pypto.DT_FP32),
    weight: pypto.Tensor([N, H], pypto.DT_FP32),
    output_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
):
    bs, hidden = input_tensor.shape
    tile_b = 1  # Process one batch at a time
    b_loop = bs // tile_b

    # Tiling shape setting for efficient execution
    pypto.set_vec_tile_shapes(1, hidden)
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [32, 32])

    for idx in pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        b_offset = idx * tile_b
        b_offset_end = (idx + 1) * tile_b
        input_view = input_tensor[b_offset:b_offset_end, :hidden]
        ln_out = layernorm_core(input_view, gamma, beta, EPS, hidden)
        logits = pypto.matmul(ln_out, weight, pypto.DT_FP32, b_trans=True)
        output_tensor[b_offset:, ...] = logits


def make_case(T):
    rng = np.random.default_rng(165 + T)
    x = (rng.standard_normal((T, H)) * 2.0 + 0.5).astype(np.float32)
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    b = (0.1 * rng.standard_normal(H)).astype(np.float32)
    w = (rng.standard_normal((N, H)) / np.sqrt(H)).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    c = x64 - mean
    var = (c * c).mean(-1, keepdims=True)
    ln = c / np.sqrt(var + EPS) * g + b
    ref = ln @ w.astype(np.float64).T
    return [(x, "fp32"), (g, "fp32"), (b, "fp32"), (w, "fp32")], [((T, N), "fp32")], [ref], [(1e-3, 1e-3)], []


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c115", layernorm_linear_kernel, make_case, call=call)
