"""c118 (outside batch corpus19, k168) (fresh, tutorial style): W8A8, bf16 x, h 4096, int8 weight [N,K] (N = 2048 = gate|up) with b_trans,
out [T, 1024] bf16. Written like ffn_module.py: a config dataclass passed as a kernel argument, the
"LOOP_FFN_BATCH" loop with `ceil_div`, view valid_shape `(batch_size - batch_offset).min(basic_batch)`,
set_vec_tile_shapes(*config.vec_tile_shape), and ffn_module.py's `swiglu_activation_core` verbatim on two
pypto.view halves of the dequantised product.
Quant helper in tutorial ops: `amax(abs(x))`, `scale = amax / 127.0`, `x / scale`, then **one cast fp32 -> int8
with CAST_RINT**; dequant `cast(acc, FP32) * scale * w_scale` ([1, N] fp32 per channel).
V->C->V: bf16 x -> fp32 RMSNorm * gamma -> per-token int8 quant -> int8 @ int8 w^T (int32) -> dequant -> SwiGLU.
"""
from dataclasses import dataclass
import numpy as np
from batch_harness import pypto, run, PTO, bf16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
F_1 = 1.0
F_NEGA_1 = -1.0
H, N = 4096, 2048
INTER = N // 2


@dataclass
class QuantFFNConfig:
    """Configuration for the quantised FFN up-projection"""

    hidden_size: int
    intermediate_size: int
    eps: float = 1e-6
    vec_tile_shape: tuple = (8, 1024)
    cube_tile_shape: tuple = (32, 256, 128)
    basic_batch: int = 16  # SIM: 32 -> 16: swiglu_activation_core (verbatim) tiles (basic_batch, 1024) fp32; MULS 32x1024 in+out 262144 B exceeds MEM_UB 196608


def ceil_div(a, b):
    """Calculate ceiling division: (a + b - 1) // b"""
    return (a + b - 1) // b


def rms_norm_core(x: pypto.Tensor, gamma: pypto.Tensor, eps: float, hidden_size: float) -> pypto.Tensor:
    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    squared = x_fp32 * x_fp32
    mean_sq = pypto.sum(squared, dim=-1, keepdim=True)
    mean_sq = mean_sq / hidden_size
    rms = pypto.sqrt((mean_sq + eps))
    normalized = x_fp32 / rms
    return normalized * pypto.cast(gamma, pypto.DT_FP32)


def per_token_quant_core(x: pypto.Tensor):
    """Symmetric per-token int8 quantisation: returns (int8 tensor, fp32 scale [rows, 1])."""
    amax = pypto.amax(pypto.abs(x), dim=-1, keepdim=True)
    scale = amax / 127.0
    x_q = x / scale
    x_int8 = pypto.cast(x_q, pypto.DT_INT8, pypto.CastMode.CAST_RINT)
    return x_int8, scale


def swiglu_activation_core(gate: pypto.tensor, up: pypto.tensor) -> pypto.tensor:
    """
    SwiGLU activation function: Swish(gate) * up
    where Swish(x) = x * sigmoid(x)
    """
    gate_fp32 = pypto.cast(gate, pypto.DT_FP32)
    up_fp32 = pypto.cast(up, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(*gate.shape[:2] if len(gate.shape) >= 2 else (32, 128))

    gate_neg = pypto.mul(gate_fp32, F_NEGA_1)
    exp_neg = pypto.exp(gate_neg)
    ones = pypto.full(exp_neg.shape, F_1, exp_neg.dtype, valid_shape=exp_neg.shape)
    sigmoid = pypto.div(ones, pypto.add(exp_neg, ones))
    swish = pypto.mul(gate_fp32, sigmoid)

    # Multiply with up projection
    return pypto.cast(pypto.mul(swish, up_fp32), pypto.DT_BF16)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def quant_ffn_up_swiglu_kernel(
    hidden_states: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_BF16),
    w13: pypto.Tensor([N, H], pypto.DT_INT8),
    w_scale: pypto.Tensor([1, N], pypto.DT_FP32),
    output: pypto.Tensor([pypto.DYNAMIC, INTER], pypto.DT_BF16),
    config: QuantFFNConfig,
):
    pypto.set_cube_tile_shapes(
        [config.cube_tile_shape[0], config.cube_tile_shape[0]],
        [config.cube_tile_shape[1], config.cube_tile_shape[1]],
        [config.cube_tile_shape[2], config.cube_tile_shape[2]],
    )
    hidden_size, intermediate_size = config.hidden_size, config.intermediate_size
    basic_batch = config.basic_batch
    batch_size = hidden_states.shape[0]
    num_iterations = ceil_div(batch_size, basic_batch)
    for idx in pypto.loop(0, num_iterations, 1, name="LOOP_FFN_BATCH", idx_name="idx"):
        batch_offset = idx * basic_batch
        hidden_chunk = pypto.view(
            hidden_states,
            [basic_batch, hidden_size],
            [batch_offset, 0],
            valid_shape=[(batch_size - batch_offset).min(basic_batch), hidden_size],
        )
        pypto.set_vec_tile_shapes(4, hidden_size)
        x_norm = rms_norm_core(hidden_chunk, gamma, config.eps, hidden_size)
        x_int8, x_scale = per_token_quant_core(x_norm)
        up_proj = pypto.matmul(x_int8, w13, pypto.DT_INT32, b_trans=True)
        pypto.set_vec_tile_shapes(*config.vec_tile_shape)
        up_deq = pypto.cast(up_proj, pypto.DT_FP32) * x_scale * w_scale
        gate = pypto.view(up_deq, [basic_batch, intermediate_size], [0, 0])
        up = pypto.view(up_deq, [basic_batch, intermediate_size], [0, intermediate_size])
        activated = swiglu_activation_core(gate, up)
        pypto.assemble(activated, [batch_offset, 0], output)


def make_case(T):
    rng = np.random.default_rng(168 + T)
    f32 = np.float32
    x = bf16_round(rng.standard_normal((T, H)))
    g = bf16_round(1.0 + 0.1 * rng.standard_normal(H))
    w = rng.integers(-127, 128, (N, H)).astype(np.float32)
    ws = (1e-4 * (1.0 + rng.random((1, N)))).astype(f32)
    x32 = x.astype(f32)
    ms = f32((x32.astype(np.float64) ** 2).sum(-1, keepdims=True)) * f32(1.0 / H)
    rms = np.sqrt((ms + f32(1e-6)).astype(f32)).astype(f32)
    xn = ((x32 / rms).astype(f32) * g.astype(f32)).astype(f32)
    amax = np.abs(xn).max(-1, keepdims=True).astype(f32)
    scale = (amax * f32(1.0 / 127.0)).astype(f32)   # divide by a scalar = multiply by its reciprocal
    q = np.rint((xn / scale).astype(f32))
    acc = q.astype(np.float64) @ w.astype(np.float64).T
    deq = ((acc.astype(f32) * scale).astype(f32) * ws).astype(f32).astype(np.float64)
    gt, up = deq[:, :INTER], deq[:, INTER:]
    ref = bf16_round(gt / (1.0 + np.exp(-gt)) * up)
    cfg = QuantFFNConfig(hidden_size=H, intermediate_size=INTER)
    return ([(x, "bf16"), (g, "bf16"), (w, "int8"), (ws, "fp32")], [((T, INTER), "bf16")], [ref],
            [(2e-2, 2e-2)], [cfg])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c118", quant_ffn_up_swiglu_kernel, make_case, call=call)
