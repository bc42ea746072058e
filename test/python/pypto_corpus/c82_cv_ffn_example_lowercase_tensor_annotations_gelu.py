#!/usr/bin/env python3
"""c82 (outside batch corpus10, k93): PyPTO example FFN, dynamic GELU variant, up-projection half only, copied from
examples/02_intermediate/basic_nn/ffn/ffn_module.py (dynamic_gelu_activation_core, gelu_activation_core,
ceil_div, FFNConfig verbatim; the down projection is dropped so the kernel has one matmul).

SK-03 C -> V: hidden_states [T, 2048] bf16, pypto.loop(0, ceil_div(T, 16), 1) with
view valid_shape=[(batch_size - batch_offset).min(basic_batch), hidden]; @ up_proj_weight [2048, 1024] bf16
([K, N]) -> bf16 (config.dtype) -> gelu_activation_core (set_vec_tile_shapes(*x.shape[:2]), cast fp32,
x * 1/(1 + exp(-1.702 x)) with pypto.full(..., valid_shape=shape), cast bf16) -> assemble into output [T, 1024].
Example idioms: annotations pypto.tensor() (no shape, no dtype), a dataclass config argument,
cube tiles from config.cube_tile_shape, vec tile (32, 64).
What SIM forced: with N = 2048 the helper's tile x.shape[:2] = (16, 2048) fp32 overflows UB
(`MULS in/output total size [262144] exceeds MEM_UB size [196608]`), so N = 1024 (as the example's test) and H = 2048.
"""
from dataclasses import dataclass
from typing import Literal

import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)

F_1 = 1.0
F_NEGA_1 = -1.0
GELU_COEFF = 1.702
HID, INTER = 2048, 1024
global_run_mode = pypto.RunMode.SIM


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
def dynamic_gelu_up_core(
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
        # Assemble result back to output
        pypto.assemble(activated, [batch_offset, 0], output)


rng = np.random.default_rng(93)
W = bf16_round(rng.standard_normal((HID, INTER)) / np.sqrt(32))


def make_case(T):
    config = FFNConfig(
        batch_size=T, hidden_size=HID, intermediate_size=INTER, activation="gelu", dtype=pypto.DT_BF16,
        use_dynamic_shape=True, vec_tile_shape=(32, 64), cube_tile_shape=(32, 64, 64), basic_batch=16,
        run_mode=pypto.RunMode.SIM,
    )
    x = bf16_round(rng.standard_normal((T, HID)) / np.sqrt(32))
    up = bf16_round(x @ W)
    ref = bf16_round(up * (np.float32(1.0) / (np.float32(1.0) + np.exp(-np.float32(GELU_COEFF) * up))))
    return [(x, "bf16"), (W, "bf16")], [((T, INTER), "bf16")], [ref], [(2e-2, 2e-2)], [config]


if __name__ == "__main__":
    run("k93", dynamic_gelu_up_core, make_case)
