"""c96 (outside batch corpus17, k146) (copied): copied from PyPTO mainline models/glm_v4_5/glm_ffn_shared_expert_quant.py (share_expert_moe_main,
expert_infer_base) with symmetric_quantization_per_token, dequant_dynamic and swiglu from
glm_ffn_common_interface.py, all verbatim up to swiglu_out.
Changes: the down projection (second quant, w2 matmul, dequant) is dropped, and with it the w2/w2_scale inputs and
the mm2 tile shape; swiglu_out is cast to x_dtype and assembled into ffn_res [T, 192] with the source's own last two
lines; intermediate_size is read as w13.shape[1] // 2 (the source reads w2.shape[0]); run_mode SIM added.
SK-03: V->C->V. bf16 x [T,5120] -> per-token int8 quant (127/amax, 1/scale) -> int8 @ NZ int8 w13 [5120, 384] [K,N]
-> int32 -> dequant (x scale, bf16 w13_scale [384] unsqueezed) -> SwiGLU -> bf16.
Tolerance 2e-2 + 2e-2 (the source's test: rtol 2^-7, atol 1e-4 against torch_npu).
"""
import numpy as np
from batch_harness import PTO, pypto, run, bf16_round

_RT = {"device_sched_mode": 1}
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM


def symmetric_quantization_per_token(input_tensor):
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


def expert_infer_base(hidden_states, w13_params, ffn_res, tiling_params, offset_params):
    # 入参信息获取
    w13, w13_scale = w13_params
    unroll_offset, unroll_level = offset_params
    vec_tile_shape, mm1_cube_tile_shape = tiling_params

    hidden_size = hidden_states.shape[1]
    intermediate_size = w13.shape[1] // 2
    x_dtype = hidden_states.dtype

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

    out = pypto.cast(swiglu_out, x_dtype)
    pypto.assemble(out, hidden_states_offset, ffn_res)


@pypto.frontend.jit(
    runtime_options=_RT,
)
def share_expert_moe_main(
    hidden_states: pypto.tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    w13: pypto.tensor(),
    w13_scale: pypto.tensor(),
    ffn_res: pypto.tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
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
            ffn_res=ffn_res,
            tiling_params=[vec_tile_shape, mm1_cube_tile_shape],
            offset_params=[share_loop_idx, loop_base],
        )


H, I2 = 5120, 384


def make_case(T):
    rng = np.random.default_rng(146 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)).astype(np.float32))
    w = rng.integers(-127, 128, (H, I2)).astype(np.float32)
    ws = bf16_round(rng.uniform(2e-4, 6e-4, I2).astype(np.float32))
    amax = np.abs(x).max(-1, keepdims=True).astype(np.float32)
    sc = (np.float32(127.0) / amax).astype(np.float32)
    q = np.clip(np.rint((x * sc).astype(np.float32)), -127, 127)
    sdq = (np.float32(1.0) / sc).astype(np.float32)
    up = ((q.astype(np.float64) @ w.astype(np.float64)).astype(np.float32) * sdq).astype(np.float32) * ws[None, :]
    up = up.astype(np.float64)
    left, right = up[:, :I2 // 2], up[:, I2 // 2:]
    ref = bf16_round(left / (1.0 + np.exp(-left)) * right)
    return ([(x, "bf16"), (w, "int8"), (ws, "bf16")], [((T, I2 // 2), "bf16")], [ref], [(2e-2, 2e-2)], [])


if __name__ == "__main__":
    run("c96", share_expert_moe_main, make_case)
