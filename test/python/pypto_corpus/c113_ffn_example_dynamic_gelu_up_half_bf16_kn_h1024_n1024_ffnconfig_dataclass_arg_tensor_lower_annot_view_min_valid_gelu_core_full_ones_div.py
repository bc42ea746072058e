"""c113 (outside batch corpus19, k163) (copied): examples/02_intermediate/basic_nn/ffn/ffn_module.py, `dynamic_gelu_activation_core`
up to `activated` (the up-projection half: one matmul), with FFNConfig, ceil_div and gelu_activation_core
verbatim, called as test_ffn_dynamic_gelu does (vec (32, 64), cube (32, 64, 64), basic_batch 16, bf16)
but with hidden 1024 (the test has 512) and intermediate 1024.
Changes to the copy: the down projection (second matmul, set_matrix_size) and its weight are dropped;
`activated` is assembled into `output` instead of the down projection's result.
C->V: bf16 x [T,1024] view(valid_shape=(T - off).min(16)) @ bf16 w [1024,1024] [K,N] (bf16 out)
-> fp32 x*sigmoid(1.702x) written as full(1.0) / (exp(-1.702x) + 1) -> bf16 -> assemble.
"""
from dataclasses import dataclass
from typing import Literal
import numpy as np
from batch_harness import pypto, run, PTO, bf16_round

# Constants
F_1 = 1.0
F_NEGA_1 = -1.0
GELU_COEFF = 1.702

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM


@dataclass
class FFNConfig:
    """Configuration for FFN module"""

    batch_size: int
    hidden_size: int
    intermediate_size: int
    activation: Literal["gelu", "swiglu", "relu"] = "gelu"
    dtype: pypto.DataType = pypto.DT_FP16
    use_dynamic_shape: bool = False
    vec_tile_shape: tuple = (64, 128)
    cube_tile_shape: tuple = (64, 128, 128)
    basic_batch: int = 32  # For dynamic batching
    run_mode: pypto.RunMode = pypto.RunMode.NPU


def ceil_div(a, b):
    """Calculate ceiling division: (a + b - 1) // b"""
    return (a + b - 1) // b


def gelu_activation_core(x: pypto.tensor) -> pypto.tensor:
    """
    GELU approximation using sigmoid form:

        gelu(x) ≈ x * sigmoid(1.702 * x)

    The computation is promoted to FP32 for better numerical stability,
    then cast back to BF16 before returning.
    """
    pypto.set_vec_tile_shapes(*x.shape[:2] if len(x.shape) >= 2 else (32, 128))
    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    x_scaled = pypto.mul(x_fp32, GELU_COEFF)
    x_neg = pypto.mul(x_scaled, F_NEGA_1)
    exp_neg = pypto.exp(x_neg)
    ones = pypto.full(exp_neg.shape, 1.0, exp_neg.dtype, valid_shape=exp_neg.shape)
    sigmoid = pypto.div(ones, pypto.add(exp_neg, F_1))
    activated = pypto.cast(pypto.mul(x_fp32, sigmoid), pypto.DT_BF16)
    return activated


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def dynamic_gelu_activation_core(
    hidden_states: pypto.tensor(),
    up_proj_weight: pypto.tensor(),
    output: pypto.tensor(),
    config: FFNConfig,
):
    pypto.set_cube_tile_shapes(
        [config.cube_tile_shape[0], config.cube_tile_shape[0]],
        [config.cube_tile_shape[1], config.cube_tile_shape[1]],
        [config.cube_tile_shape[2], config.cube_tile_shape[2]],
    )
    pypto.set_vec_tile_shapes(*config.vec_tile_shape)
    hidden_size, intermediate_size = config.hidden_size, config.intermediate_size
    basic_batch = config.basic_batch
    if basic_batch == 0:
        raise ValueError("basic_batch must be greater than 0")
    # Calculate number of iterations needed
    batch_size = hidden_states.shape[0]
    num_iterations = ceil_div(batch_size, basic_batch)
    # Process in chunks
    for idx in pypto.loop(0, num_iterations, 1, name="LOOP_FFN_BATCH", idx_name="idx"):
        batch_offset = idx * basic_batch
        # View current batch chunk
        hidden_chunk = pypto.view(
            hidden_states,
            [basic_batch, hidden_size],
            [batch_offset, 0],
            valid_shape=[(batch_size - batch_offset).min(basic_batch), hidden_size],
        )
        # Up projection
        up = pypto.matmul(hidden_chunk, up_proj_weight, config.dtype)
        pypto.set_vec_tile_shapes(*config.vec_tile_shape)
        activated = gelu_activation_core(up)
        # (corpus19: the down projection is dropped; the activation is the output)
        pypto.assemble(activated, [batch_offset, 0], output)


H, N = 1024, 1024


def make_case(T):
    rng = np.random.default_rng(163 + T)
    x = bf16_round(rng.standard_normal((T, H)) / np.sqrt(32))
    w = bf16_round(rng.standard_normal((H, N)) / np.sqrt(32))
    up = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    u = up.astype(np.float64)
    ref = bf16_round(u * (1.0 / (np.exp(-(u * GELU_COEFF)) + 1.0)))
    cfg = FFNConfig(batch_size=T, hidden_size=H, intermediate_size=N, activation="gelu", dtype=pypto.DT_BF16,
                    use_dynamic_shape=True, vec_tile_shape=(32, 64), cube_tile_shape=(32, 64, 64), basic_batch=16,
                    run_mode=global_run_mode)
    return [(x, "bf16"), (w, "bf16")], [((T, N), "bf16")], [ref], [(2e-2, 2e-2)], [cfg]


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c113", dynamic_gelu_activation_core, make_case, call=call)
