#!/usr/bin/env python3
"""c90 (outside batch corpus14, k119) (copied): GLM-4.5 `models/glm_v4_5/glm_moe_fusion_mix.py` `moe_fusion_kernel`, the "share start" segment
(shared expert up-projection) up to `swiglu(up_proj_dequant)`, with `swiglu` from `glm_ffn_common_interface.py`.

SK-03 V -> C -> V with the K axis split BY HAND: per-token int8 quant of the whole row (amax over 5120), then for
each of 10 K chunks of 512: quant of the chunk (RINT -> ROUND -> TRUNC sat), int8 @ w13 NZ view [512, 384] -> int32
partial; the partials are summed into `up_proj` (pypto.full(0) + adds), then dequant (x scale [t,1] x w13 scale
[1,384] bf16 -> fp32), then swiglu (view left/right halves, exp/div form) -> bf16 out [T, 192].
Kept from the model: jit runtime/pass options, combine_axis, loop_unroll with unroll_list=powers_of_2(16) (a set),
rank-1 scale reshaped inplace before the loop, `pypto.tensor` scratch filled by assemble.
Dropped: the gate/select part (another N-split matmul + topk) and the down projection (second matmul).
SIM forced: the model's `set_pass_options(sg_set_scope=(10002, False, True))` triples -> `RuntimeError: std::bad_cast`
at the next op; with int scopes `Errcode: FFFFFF!` (log: 'Cannot mix cube and vector op on a CV seperate platform');
all sg_set_scope calls dropped (the model is marked soc 950).
Added: the final cast to bf16 and `pypto.assemble(..., [bs_idx, 0], swiglu_res)` so the stage has an output.
"""
import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)


def powers_of_2(n: int) -> set:
    result = set()
    power = 0
    while True:
        current = 1 << power
        if current > n:
            break
        result.add(current)
        power += 1
    return result


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


ND = pypto.TileOpFormat.TILEOP_ND
NZ = pypto.TileOpFormat.TILEOP_NZ
H, I = 5120, 192


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM, "device_sched_mode": 1, "stitch_function_max_num": 128},
    pass_options={"cube_l1_reuse_setting": {-1: 2}, "cube_nbuffer_setting": {2: 2}},
)
def moe_fusion_share_kernel(
    hidden_states: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16, format=ND),
    w13: pypto.Tensor([H, 2 * I], pypto.DT_INT8, format=NZ),
    w13_scale: pypto.Tensor([2 * I], pypto.DT_BF16, format=ND),
    swiglu_res: pypto.Tensor([pypto.DYNAMIC, I], pypto.DT_BF16, format=ND),
):
    bs = hidden_states.shape[0]
    pypto.experimental.set_operation_options(combine_axis=True)

    # tiling config
    vec_tile_shape = (4, 5120)
    mm1_cube_tile_shape = (8, 256, 192)
    hidden_size = hidden_states.shape[1]
    intermediate_size = I

    pypto.set_vec_tile_shapes(intermediate_size * 2)
    w13_scale_2d = pypto.reshape(w13_scale, [1, intermediate_size * 2], inplace=True)  # (384) -> (1,384)
    for bs_idx, tile_batch in pypto.loop_unroll(
        0, bs, 1, name="LOOP_MOE_FUSION_L0", idx_name="bs_idx", unroll_list=powers_of_2(16)
    ):
        tile_hidden_states = hidden_states[bs_idx:bs_idx + tile_batch, :]

        # share start
        pypto.set_vec_tile_shapes(1, intermediate_size * 2)
        w13_scale_2d_fp32 = pypto.cast(w13_scale_2d, pypto.DT_FP32, pypto.CastMode.CAST_NONE)

        pypto.set_vec_tile_shapes(vec_tile_shape[0], vec_tile_shape[1])
        hidden_states_offset = [bs_idx, 0]
        k_split_shape = 512
        k_split = hidden_size // k_split_shape
        matmul_res = []
        up_proj = pypto.full([tile_batch, intermediate_size * 2], 0, pypto.DT_INT32)
        hidden_states_scale = pypto.tensor([tile_batch, 1], pypto.DT_FP32, "hidden_states_scale")
        for ki in range(k_split):
            # dynamic per_token_quant
            # (SIM) sg_set_scope dropped
            pypto.set_vec_tile_shapes(vec_tile_shape[0], vec_tile_shape[1])
            x_fp32 = pypto.cast(tile_hidden_states, pypto.DT_FP32)
            x_abs = pypto.abs(x_fp32)
            x_max = pypto.amax(x_abs, -1, True)
            pypto.set_vec_tile_shapes(tile_batch, k_split_shape)
            shape_0, shape_1 = x_max.shape[:2]
            x_scale = pypto.div(pypto.full([shape_0, shape_1], 127.0, pypto.DT_FP32), x_max)
            x_mul = pypto.mul(x_fp32[:, ki * k_split_shape:ki * k_split_shape + k_split_shape], x_scale)
            x_int32 = pypto.cast(x_mul, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
            x_fp16 = pypto.cast(x_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
            hidden_states_quant = pypto.cast(
                x_fp16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON
            )
            hidden_states_scale_tmp = pypto.div(pypto.full([shape_0, shape_1], 1.0, pypto.DT_FP32), x_scale)
            pypto.assemble(hidden_states_scale_tmp, [0, 0], hidden_states_scale)
            kn = pypto.view(w13, [k_split_shape, intermediate_size * 2], [ki * k_split_shape, 0])
            # up_proj的matmul计算
            pypto.set_cube_tile_shapes(
                [tile_batch, tile_batch],
                [mm1_cube_tile_shape[1], mm1_cube_tile_shape[1] * 2],
                [mm1_cube_tile_shape[2], mm1_cube_tile_shape[2]],
            )
            res_tmp = pypto.matmul(hidden_states_quant, kn, pypto.DT_INT32)
            # (SIM) sg_set_scope dropped
            matmul_res.append(res_tmp)
        for ki in range(k_split):
            # (SIM) sg_set_scope dropped
            pypto.set_vec_tile_shapes(8, intermediate_size * 2)
            up_proj = pypto.add(up_proj, matmul_res[ki])

        # dequant
        pypto.set_vec_tile_shapes(8, intermediate_size * 2)
        up_proj_fp32 = pypto.cast(up_proj, pypto.DT_FP32, pypto.CastMode.CAST_NONE)
        hidden_states_scale_fp32 = pypto.cast(hidden_states_scale, pypto.DT_FP32, pypto.CastMode.CAST_NONE)
        up_proj_dequant_scale_2 = pypto.mul(up_proj_fp32, hidden_states_scale_fp32)
        up_proj_dequant = pypto.mul(up_proj_dequant_scale_2, w13_scale_2d_fp32)
        swiglu_out = swiglu(up_proj_dequant)
        # (SIM) sg_set_scope dropped
        # added: store the stage's result
        pypto.assemble(pypto.cast(swiglu_out, hidden_states.dtype), hidden_states_offset, swiglu_res)


def make_case(T):
    rng = np.random.default_rng(119 + T)
    x = bf16_round(rng.random((T, H)) * 0.05)
    wf = bf16_round(rng.random((H, 2 * I)) * 0.05)
    # gen_quan_per_channel_weight_nz (per column of [K, N])
    mx = np.abs(wf).max(axis=0, keepdims=True)
    sq = (127.0 / mx).astype(np.float32)
    w8 = np.trunc(np.round(wf * sq)).clip(-128, 127).astype(np.int8)
    wscale = bf16_round((1.0 / sq).reshape(-1))
    xf = x.astype(np.float32)
    amax = np.abs(xf).max(-1, keepdims=True)
    xs = (np.float32(127.0) / amax).astype(np.float32)
    q = np.trunc(np.round(xf * xs)).clip(-128, 127).astype(np.int64)
    acc = (q.astype(np.float64) @ w8.astype(np.float64)).astype(np.int64)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    up = acc.astype(np.float64) * (1.0 / xs.astype(np.float64)) * wscale.reshape(1, -1)
    left, right = up[:, :I], up[:, I:]
    ref = bf16_round(left / (1.0 + np.exp(-left)) * right)
    return [(x, "bf16"), (w8, "int8"), (wscale, "bf16")], [((T, I), "bf16")], [ref], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("c90", moe_fusion_share_kernel, make_case)
