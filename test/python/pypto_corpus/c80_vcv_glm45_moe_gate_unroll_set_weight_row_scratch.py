#!/usr/bin/env python3
"""c80 (outside batch corpus10, k89): GLM-4.5 MoE router, gate + the first select steps, copied from models/glm_v4_5/glm_moe_fusion.py
(moe_fusion_kernel, "gate start" .. "reshape/amax" part; topk/scatter/gather and the experts dropped).

SK-03 V -> C -> V: hidden_states [T, 5120] bf16 (row slice hidden_states[bs_idx:bs_idx + tile_batch, :]) ->
cast fp32 -> @ mm_weight [160, 5120] fp32 (cast fp32 -> fp32 as in the model), b_trans=True, fp32 logits ->
sigmoid -> + e_score_bias (bf16 [160], reshaped inplace to [1, 160], copied row by row into a
pypto.tensor([tile_batch, ne], dt, "name") scratch with a python for + assemble, then cast) ->
reshape [tile_batch, num_expert_group, group_unit] -> amax per group.
Outputs (3): scores fp32 [T, 160], scores_for_choice fp32 [T, 160], group_weight fp32 [T, 1]
(GLM-4.5 uses num_expert_group = 1, so group_unit = 160), all written by out[bs_idx:bs_idx + tile_batch, :] = y.
Model idioms: format=ND annotations, pypto.Tensor([]) weights, unroll_list=powers_of_2(32) (a set),
min(tile_batch, 4) vec tiles, combine_axis, cube_l1_reuse_setting pass option, device_sched_mode.
"""
import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)

H, NE = 5120, 160


def check_cond(cond, msg):
    if not cond:
        raise ValueError(msg)


def powers_of_2(n: int) -> set[int]:
    check_cond(n > 0, "n must be positive")
    result = set()
    power = 0
    while True:
        current = 1 << power
        if current > n:
            break
        result.add(current)
        power += 1
    return result


ND = pypto.TileOpFormat.TILEOP_ND
NZ = pypto.TileOpFormat.TILEOP_NZ


@pypto.frontend.jit(
    runtime_options={"device_sched_mode": 1, "stitch_function_max_num": 128, "run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2}},
)
def moe_gate_kernel(
    hidden_states: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16, format=ND),
    mm_weight: pypto.Tensor([], pypto.DT_FP32, format=ND),
    e_score_bias_input: pypto.Tensor([], pypto.DT_BF16, format=ND),
    scores_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32, format=ND),
    scores_choice_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32, format=ND),
    group_weight_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32, format=ND),
    num_expert_group,
):
    # 3. 得到动态tensor的shape
    bs = hidden_states.shape[0]

    ne = mm_weight.shape[0]

    pypto.experimental.set_operation_options(combine_axis=True)

    # 4. 定义动态函数
    pypto.set_vec_tile_shapes(ne)
    e_score_bias_2d = pypto.reshape(e_score_bias_input, [1, ne], inplace=True)  # (160) -> (1,160)

    # 4. 实现kernel逻辑，循环展开BS动态轴
    for bs_idx, tile_batch in pypto.loop_unroll(
        0, bs, 1, name="LOOP_MOE_FUSION_L0", idx_name="bs_idx", unroll_list=powers_of_2(32)
    ):
        # 5. 通过view得到tile_logits
        tile_hidden_states = hidden_states[bs_idx:bs_idx + tile_batch, :]

        # gate start
        pypto.set_vec_tile_shapes(min(tile_batch, 4), 5120)
        tile_hidden_states_fp32 = pypto.cast(tile_hidden_states, pypto.DT_FP32)
        mm_weight_fp32 = pypto.cast(mm_weight, pypto.DT_FP32)
        pypto.set_cube_tile_shapes([min(tile_batch, 32), min(tile_batch, 32)], [512, 1024], [16, 16])
        res = pypto.matmul(tile_hidden_states_fp32, mm_weight_fp32, tile_hidden_states_fp32.dtype, b_trans=True)
        # gate end

        # select start
        tile_logits = res
        view_first = 1

        pypto.set_vec_tile_shapes(view_first, ne)
        tile_logits_fp32 = pypto.cast(tile_logits, pypto.DT_FP32)
        e_score_bias_2d_tile = pypto.tensor([tile_batch, ne], e_score_bias_2d.dtype, "e_score_bias_2d_tile")
        for tmp_idx in range(tile_batch):
            pypto.assemble(e_score_bias_2d, [tmp_idx, 0], e_score_bias_2d_tile)
        e_score_bias_2d_cast = pypto.cast(e_score_bias_2d_tile, tile_logits_fp32.dtype)

        # sigmoid
        topk_weights = pypto.sigmoid(tile_logits_fp32)  # (bs, ne) fp32

        # add
        topk_weights_add = pypto.add(topk_weights, e_score_bias_2d_cast)  # (8, 160) fp32
        # reshape
        group_unit = ne // num_expert_group
        r1 = pypto.reshape(topk_weights_add, [tile_batch, num_expert_group, group_unit])

        # amax
        pypto.set_vec_tile_shapes(view_first, num_expert_group, group_unit)
        max1 = pypto.amax(r1, -1, False)
        group_weight = max1

        pypto.set_vec_tile_shapes(view_first, ne)
        scores_out[bs_idx:bs_idx + tile_batch, :] = topk_weights
        scores_choice_out[bs_idx:bs_idx + tile_batch, :] = topk_weights_add
        group_weight_out[bs_idx:bs_idx + tile_batch, :] = group_weight


rng = np.random.default_rng(89)
W = (rng.standard_normal((NE, H)) * 0.02).astype(np.float32)
BIAS = bf16_round(rng.uniform(-0.5, 0.5, (NE,)))


def make_case(T):
    x = bf16_round(rng.standard_normal((T, H)))
    logits = (x.astype(np.float64) @ W.T.astype(np.float64)).astype(np.float32)
    s = 1.0 / (1.0 + np.exp(-logits))
    sc = s + BIAS[None, :]
    gw = sc.max(-1, keepdims=True)
    return ([(x, "bf16"), (W, "fp32"), (BIAS, "bf16")],
            [((T, NE), "fp32"), ((T, NE), "fp32"), ((T, 1), "fp32")],
            [s, sc, gw], [(2e-2, 2e-2)] * 3, [1])


if __name__ == "__main__":
    run("k89", moe_gate_kernel, make_case)
