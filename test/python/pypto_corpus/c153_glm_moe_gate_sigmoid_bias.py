"""c153 (2026-12-07, outside corpus33 (held-out batch B, k314-k323: from hicann/pypto's model code); its author's k323).

k323: GLM-4.5 MoE fusion, the gate segment (V -> C -> V): hidden (bf16) cast fp32, gate
matmul with the fp32 router weight (b_trans=True, (ne, hidden) layout), sigmoid, + e_score bias
(broadcast built row by row into a scratch tensor by pypto.assemble) -> router scores.
Token loop: loop_unroll over powers of two up to 32, tokens sliced with hidden_states[a:b, :].

Source: hicann/pypto models/glm_v4_5/glm_moe_fusion.py
        @883e7dfb018da764a65fd2c2f8c1e1d2de2d2471 (moe_fusion_kernel lines 115-183: decorator,
        preamble, loop head, "gate start" .. "gate end", "select start" up to the bias add;
        powers_of_2 helper verbatim)
Changes for 0.2.0 / self-containment:
  - the kernel stops after `topk_weights_add = pypto.add(topk_weights, e_score_bias_2d_cast)`: the
    group top-k / scatter / gather routing and the shared-expert FFN (two more int8 matmuls, SK-06)
    are dropped with their inputs (w13, w13_scale, w2, w2_scale) and outputs (ids_k, ffn_res) and
    the scalars topk_group / num_expert_group; the two tensors the select stage consumes are
    written out instead, in the source's slice-assignment form:
        weight_k[bs_idx:bs_idx + tile_batch, :] = topk_weights          (sigmoid, fp32)
        score_k[bs_idx:bs_idx + tile_batch, :] = topk_weights_add       (sigmoid + bias, fp32)
  - runtime_options gains "run_mode": pypto.RunMode.SIM.
  - shapes kept at source size (hidden 5120, ne 160).
"""
import numpy as np

from batch_harness import pypto, run, bf16_round


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
    weight_k: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32, format=ND),
    score_k: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32, format=ND),
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

        # 7. 按照计算图实现运算逻辑，设置set_vec_tile_shapes时应尽可能用满UB，但不要超过UB的大小。
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

        weight_k[bs_idx:bs_idx + tile_batch, :] = topk_weights
        score_k[bs_idx:bs_idx + tile_batch, :] = topk_weights_add


# ---------------------------------------------------------------- golden (numpy)
HID, NE = 5120, 160


def make_case(T):
    rng = np.random.default_rng(323 + T)
    hs = bf16_round(rng.standard_normal((T, HID)).astype(np.float32))
    mm_weight = (rng.standard_normal((NE, HID)) * 0.02).astype(np.float32)
    bias = bf16_round(rng.uniform(0, 1, NE).astype(np.float32))

    logits = (hs.astype(np.float64) @ mm_weight.astype(np.float64).T).astype(np.float32)
    sig = (1.0 / (1.0 + np.exp(-logits.astype(np.float64)))).astype(np.float32)
    add = sig + bias[None, :]

    ins = [(hs, "bf16"), (mm_weight, "fp32"), (bias, "bf16")]
    outs = [((T, NE), "fp32"), ((T, NE), "fp32")]
    tol = (1e-4, 1e-3)   # fp32 pipeline, K = 5120
    return ins, outs, [sig, add], [tol, tol], []


if __name__ == "__main__":
    run("k323_glm_moe_gate_sigmoid_bias", moe_gate_kernel, make_case)
