#!/usr/bin/env python3
"""c79 (outside batch corpus10, k88): GLM-4.5 shared expert, up/gate half only, copied from models/glm_v4_5/glm_ffn_shared_expert_quant.py
(expert_infer_base, share_expert_moe_main) with the helpers of glm_ffn_common_interface.py
(symmetric_quantization_per_token, dequant_dynamic, swiglu) copied verbatim.

SK-03 V -> Quant -> C -> Dequant -> V -> Quant: hidden_states [T, 5120] bf16 -> per-token int8 ->
@ w13 [5120, 384] int8 [K, N] (NZ on the NPU via npu_format_cast; the model annotation pypto.tensor() carries no format, so it is ND here) -> int32 -> dequant_dynamic(up, unsqueeze(w13_scale bf16 [384], 0),
hidden_scale) -> swiglu (left/right halves of 384) -> per-token int8 quant again.
Outputs: down_proj_quant int8 [T, 192] and down_proj_scale fp32 [T, 1] (what the down_proj would consume).
Model idioms kept: annotations pypto.tensor() (no shape, no dtype) for weights, pypto.tensor([DYNAMIC, ...], dt)
for activations; pypto.loop_unroll(token_nums, unroll_list=[1..128], name=...) (no start/step);
params passed as lists; set_cube_tile_shapes(..., True); device_sched_mode 1.
"""
from typing import Tuple

import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)

H, INTER = 5120, 192


def symmetric_quantization_per_token(input_tensor) -> Tuple:
    x_fp32 = pypto.cast(input_tensor, pypto.DT_FP32)
    x_abs = pypto.abs(x_fp32)
    x_max = pypto.amax(x_abs, -1, True)
    shape_0, shape_1 = x_max.shape[:2]
    x_scale = pypto.div(pypto.full([shape_0, shape_1], 127.0, pypto.DT_FP32), x_max)
    x_mul = pypto.mul(x_fp32, x_scale)
    x_int32 = pypto.cast(x_mul, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
    x_fp16 = pypto.cast(x_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
    x_int8 = pypto.cast(x_fp16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
    x_scale_quant = pypto.div(pypto.full([shape_0, shape_1], 1.0, pypto.DT_FP32), x_scale)
    return x_int8, x_scale_quant


def dequant_dynamic(in_tensor, scale_1, scale_2):
    in_tensor_fp32 = pypto.cast(in_tensor, pypto.DT_FP32, pypto.CastMode.CAST_NONE)
    scale_1_fp32 = pypto.cast(scale_1, pypto.DT_FP32, pypto.CastMode.CAST_NONE)
    scale_2_fp32 = pypto.cast(scale_2, pypto.DT_FP32, pypto.CastMode.CAST_NONE)
    out_scale_2 = pypto.mul(in_tensor_fp32, scale_2_fp32)
    out = pypto.mul(out_scale_2, scale_1_fp32)
    return out


def swiglu(up_proj):
    intermediate_size = up_proj.shape[1] // 2
    up_proj_left = pypto.view(up_proj, [up_proj.shape[0], intermediate_size], [0, 0])
    up_proj_right = pypto.view(up_proj, [up_proj.shape[0], intermediate_size], [0, intermediate_size])
    swiglu_mul = pypto.mul(up_proj_left, -1.0)
    swiglu_exp = pypto.exp(swiglu_mul)
    swiglu_add = pypto.add(swiglu_exp, 1.0)
    swiglu_div = pypto.div(up_proj_left, swiglu_add)
    swiglu_out = pypto.mul(swiglu_div, up_proj_right)
    return swiglu_out


def expert_infer_base(hidden_states, w13_params, out_params, tiling_params, offset_params):
    # 入参信息获取
    w13, w13_scale = w13_params
    q_out, q_scale_out = out_params
    unroll_offset, unroll_level = offset_params
    vec_tile_shape, mm1_cube_tile_shape = tiling_params

    hidden_size = hidden_states.shape[1]
    intermediate_size = w13.shape[1] // 2

    # offset
    pypto.set_vec_tile_shapes(vec_tile_shape[0], vec_tile_shape[1])
    hidden_states_offset = [unroll_offset, 0]
    hidden_states_actual = pypto.view(hidden_states, [unroll_level, hidden_size], hidden_states_offset)

    # dynamic per_token_quant
    hidden_states_quant, hidden_states_scale = symmetric_quantization_per_token(hidden_states_actual)

    # up_proj的matmul计算
    pypto.set_cube_tile_shapes(
        [unroll_level, unroll_level],
        [mm1_cube_tile_shape[1], mm1_cube_tile_shape[1] * 2],
        [mm1_cube_tile_shape[2], mm1_cube_tile_shape[2]],
        True,
    )
    up_proj = pypto.matmul(hidden_states_quant, w13, pypto.DT_INT32)

    # dequant
    w13_scale_2d = pypto.unsqueeze(w13_scale, 0)
    pypto.set_vec_tile_shapes(4, intermediate_size * 2)
    up_proj_dequant = dequant_dynamic(up_proj, w13_scale_2d, hidden_states_scale)
    swiglu_out = swiglu(up_proj_dequant)

    # dynamic per_token_quant
    down_proj_quant, down_proj_scale = symmetric_quantization_per_token(swiglu_out)
    pypto.assemble(down_proj_quant, hidden_states_offset, q_out)
    pypto.assemble(down_proj_scale, hidden_states_offset, q_scale_out)


@pypto.frontend.jit(
    runtime_options={"device_sched_mode": 1, "run_mode": pypto.RunMode.SIM},
)
def share_expert_up_main(
    hidden_states: pypto.tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    w13: pypto.tensor(),
    w13_scale: pypto.tensor(),
    q_out: pypto.tensor([pypto.DYNAMIC, ...], pypto.DT_INT8),
    q_scale_out: pypto.tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
):
    vec_tile_shape = (4, 5120)
    mm1_cube_tile_shape = (8, 256, 256)

    token_nums = hidden_states.shape[0]
    for share_loop_idx, loop_base in pypto.loop_unroll(
        token_nums, unroll_list=[1, 2, 4, 8, 16, 32, 64, 128], name="share_loop_idx"
    ):
        expert_infer_base(
            hidden_states=hidden_states,
            w13_params=[w13, w13_scale],
            out_params=[q_out, q_scale_out],
            tiling_params=[vec_tile_shape, mm1_cube_tile_shape],
            offset_params=[share_loop_idx, loop_base],
        )


def quant_np(x):
    mx = np.abs(x).max(-1, keepdims=True).astype(np.float32)
    sq = np.float32(127.0) / mx
    q = np.clip(np.rint(x * sq), -127, 127)
    return q.astype(np.float32), (np.float32(1.0) / sq).astype(np.float32)


rng = np.random.default_rng(88)
w_f = (rng.standard_normal((H, 2 * INTER)) * 0.01).astype(np.float32)
W_SCALE = bf16_round(np.abs(w_f).max(0) / 127.0)
W13 = np.clip(np.rint(w_f / W_SCALE), -127, 127).astype(np.float32)


def make_case(T):
    x = bf16_round(rng.standard_normal((T, H)) * 0.02)
    xq, xs = quant_np(x)
    up = (xq.astype(np.float64) @ W13.astype(np.float64)).astype(np.float32)
    deq = (up * xs) * W_SCALE[None, :]
    left, right = deq[:, :INTER], deq[:, INTER:]
    sw = left / (np.float32(1.0) + np.exp(-left)) * right
    q, s = quant_np(sw)
    return ([(x, "bf16"), (W13, "int8"), (W_SCALE, "bf16")],
            [((T, INTER), "int8"), ((T, 1), "fp32")],
            [q, s], ["step1", (1e-6, 2e-2)], [])


if __name__ == "__main__":
    run("k88", share_expert_up_main, make_case)
