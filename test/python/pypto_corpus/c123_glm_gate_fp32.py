"""c123 (outside batch corpus20, k173): GLM-4.5 MoE gate projection (fp32 x fp32, weight [N, K] used with b_trans).

Follows hicann/pypto models/glm_v4_5/glm_gate.py (tag r0.2.0): select_experts_mm_kernel,
near verbatim (the 32-row pypto.loop with a valid_shape .min() tail, set_cube_tile_shapes
([32, 32], [512, 1024], [16, 16]), matmul(..., b_trans=True), result written with
router_logits_out[bs_idx * 32:, 0:] = res).  Sizes as in the source: ne=160, h=5120.
"""
import numpy as np

from batch_harness import pypto, run


@pypto.frontend.jit(
    runtime_options={
    "stitch_cfgcache_size": 2500000},
    debug_options={"runtime_debug_mode": 3}
)
def select_experts_mm_kernel(
    hidden_states: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
    mm_weight: pypto.Tensor([], pypto.DT_FP32),
    router_logits_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)
):
    # 3. 得到动态tensor的shape
    bs = hidden_states.shape[0]
    ne = mm_weight.shape[0]
    h_num = hidden_states.shape[1]

    view_shape = (32, h_num)

    bs_loop = (bs + view_shape[0] - 1) // view_shape[0]

    # 4. 实现kernel逻辑，循环展开BS动态轴
    for bs_idx in pypto.loop(bs_loop, name="LOOP_MOE_MM_L0", idx_name="bs_idx"):

        # 5. 通过view得到tile_logits
        tile_hidden_states = pypto.view(hidden_states, view_shape,
                                        [bs_idx * view_shape[0], 0],
                                        valid_shape=[(bs - bs_idx * view_shape[0]).min(view_shape[0]),
                                                        h_num])

        pypto.set_cube_tile_shapes([32, 32], [512, 1024], [16, 16])

        res = pypto.matmul(tile_hidden_states, mm_weight, tile_hidden_states.dtype, b_trans=True)

        # 6. 将结果搬运到输出tensor上
        router_logits_out[bs_idx * view_shape[0]:, 0:] = res


NE, H = 160, 5120


def make_case(T):
    rng = np.random.default_rng(173 + T)
    x = rng.standard_normal((T, H)).astype(np.float32)
    w = (rng.standard_normal((NE, H)) / np.sqrt(H)).astype(np.float32)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    return [(x, "fp32"), (w, "fp32")], [((T, NE), "fp32")], [ref], [(5e-3, 5e-3)], []


if __name__ == "__main__":
    run("k173_glm_gate_fp32", select_experts_mm_kernel, make_case)
