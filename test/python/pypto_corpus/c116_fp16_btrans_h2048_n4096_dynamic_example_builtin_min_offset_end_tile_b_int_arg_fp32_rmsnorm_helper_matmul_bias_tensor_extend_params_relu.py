"""c116 (outside batch corpus19, k166) (fresh, tutorial style): fp16, h 2048, N 4096, fp16 weight [N,K] with b_trans.
Idioms from examples/02_intermediate/controlflow/others/dynamic.py (`dynamic_mul_kernel`): `tile_b: int` kernel
argument, `b_loop = (batch_size_dyn + tile_b - 1) // tile_b`, **Python's builtin `min(b_offset + tile_b,
batch_size_dyn)`** for the tile end, `valid_shape = [b_offset_end - b_offset, H]`, view, set_vec_tile_shapes in
the body. RMSNorm in a helper written like ffn_module.py's gelu_activation_core (cast to fp32, compute, cast back).
The matmul takes the bias through `extend_params={"bias_tensor": bias}` (matmul_ops.py / tensor_operation.md,
bias [1, N] fp16), then `pypto.relu`.
V->C->V: fp16 x -> fp32 rmsnorm x/sqrt(mean+eps)*gamma -> fp16 @ w^T (+bias in the matmul, fp16 out) -> relu.
"""
import numpy as np
from batch_harness import pypto, run, PTO, fp16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, N = 2048, 4096


def rms_norm_fp32_core(x: pypto.Tensor, gamma: pypto.Tensor, eps: float, hidden_size: int) -> pypto.Tensor:
    """RMSNorm promoted to FP32, cast back to FP16 before returning."""
    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    squared = x_fp32 * x_fp32
    mean_sq = pypto.sum(squared, dim=-1, keepdim=True)
    mean_sq = mean_sq / hidden_size
    rms = pypto.sqrt(mean_sq + eps)
    normalized = x_fp32 / rms
    gamma_fp32 = pypto.cast(gamma, pypto.DT_FP32)
    return pypto.cast(normalized * gamma_fp32, pypto.DT_FP16)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def rmsnorm_linear_bias_relu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    weight: pypto.Tensor([N, H], pypto.DT_FP16),
    bias: pypto.Tensor([1, N], pypto.DT_FP16),
    output: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
    tile_b: int,
):
    batch_size_dyn = x.shape[0]
    # Compute loop count: ceil(batch_size / tile_b)
    b_loop = (batch_size_dyn + tile_b - 1) // tile_b
    pypto.set_cube_tile_shapes([32, 32], [128, 256], [128, 128])

    for idx in pypto.loop(b_loop):
        b_offset = idx * tile_b
        # Boundary management: clamp end offset to actual batch size
        b_offset_end = (b_offset + tile_b).min(batch_size_dyn)  # SIM: dynamic.py writes min(b_offset + tile_b, batch_size_dyn); 0.2.0: ValueError: Not concrete value
        valid_shape = [b_offset_end - b_offset, H]

        x_view = pypto.view(x, [tile_b, H], [b_offset, 0], valid_shape=valid_shape)
        pypto.set_vec_tile_shapes(4, H)
        x_norm = rms_norm_fp32_core(x_view, gamma, 1e-6, H)

        extend_params = {"bias_tensor": bias}
        y = pypto.matmul(x_norm, weight, pypto.DT_FP16, b_trans=True, extend_params=extend_params)
        pypto.set_vec_tile_shapes(8, 512)
        result = pypto.relu(y)
        pypto.assemble(result, [b_offset, 0], output)


def make_case(T):
    rng = np.random.default_rng(166 + T)
    x = fp16_round(rng.standard_normal((T, H)))
    g = fp16_round(1.0 + 0.1 * rng.standard_normal(H))
    w = fp16_round(rng.standard_normal((N, H)) / np.sqrt(H))
    b = fp16_round(0.5 * rng.standard_normal((1, N)))
    x64 = x.astype(np.float64)
    ms = (x64 * x64).sum(-1, keepdims=True) * (1.0 / H)
    xn = fp16_round(x64 / np.sqrt(ms + 1e-6) * g)
    y = fp16_round(xn.astype(np.float64) @ w.astype(np.float64).T + b)
    ref = np.maximum(y, 0.0)
    return ([(x, "fp16"), (g, "fp16"), (w, "fp16"), (b, "fp16")], [((T, N), "fp16")], [ref],
            [(5e-3, 5e-3)], [32])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c116", rmsnorm_linear_bias_relu_kernel, make_case, call=call)
