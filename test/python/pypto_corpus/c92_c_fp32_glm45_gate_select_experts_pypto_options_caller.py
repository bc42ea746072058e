"""c92 (outside batch corpus16, k137) (copied): GLM-4.5 gate, select_experts_mm_kernel -- fp32 hidden_states [T, 5120] @ fp32 gate weight
[160, 5120] (b_trans=True) -> router logits [T, 160] fp32.  pypto.loop over ceil(T/32) token tiles, pypto.view with
valid_shape, cube tiles [32,32],[512,1024],[16,16], result written by an open-ended slice setitem
`router_logits_out[bs_idx * 32:, 0:] = res`.  No vector pre/post work (the bare SK-03 projection).

Source: hicann/pypto models/glm_v4_5/glm_gate.py, select_experts_mm_kernel (jit new_ir=True) and
test_select_experts_mm (pass option enable_slice=False via @pypto.options, torch.rand inputs, tol 5e-3/5e-3).
Changes: runtime_options gets run_mode SIM (SIM only); the npu graph / gate() torch wrapper is dropped; the
@pypto.options decorator is kept on the wrapper that calls the kernel.
"""
import numpy as np

from batch_harness import PTO, pypto, run  # (the batch's _common.py)

NE, H = 160, 5120

_rt = {} if PTO else {"run_mode": pypto.RunMode.SIM}


@pypto.frontend.jit(runtime_options=_rt)  # source: new_ir=True (SIM refused it)
def select_experts_mm_kernel(
    hidden_states: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
    mm_weight: pypto.Tensor([], pypto.DT_FP32),
    router_logits_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
):
    # 3. 得到动态tensor的shape
    bs = hidden_states.shape[0]
    _ne = mm_weight.shape[0]
    h_num = hidden_states.shape[1]

    view_shape = (32, h_num)

    bs_loop = (bs + view_shape[0] - 1) // view_shape[0]

    # 4. 实现kernel逻辑，循环展开BS动态轴
    for bs_idx in pypto.loop(bs_loop, name="LOOP_MOE_MM_L0", idx_name="bs_idx"):
        # 5. 通过view得到tile_logits
        tile_hidden_states = pypto.view(
            hidden_states,
            view_shape,
            [bs_idx * view_shape[0], 0],
            valid_shape=[(bs - bs_idx * view_shape[0]).min(view_shape[0]), h_num],
        )

        pypto.set_cube_tile_shapes([32, 32], [512, 1024], [16, 16])

        res = pypto.matmul(tile_hidden_states, mm_weight, tile_hidden_states.dtype, b_trans=True)

        # 6. 将结果搬运到输出tensor上
        router_logits_out[bs_idx * view_shape[0]:, 0:] = res


def make_case(T):
    rng = np.random.default_rng(137 + T)
    x = rng.random((T, H), dtype=np.float32)
    w = rng.random((NE, H), dtype=np.float32)
    ref = (x.astype(np.float64) @ w.astype(np.float64).T).astype(np.float32)
    return [(x, "fp32"), (w, "fp32")], [((T, NE), "fp32")], [ref], [(5e-3, 5e-3)], []


@pypto.options(pass_options={"enable_slice": False})
def call(k, i, o, e):
    k(*i, *o)


if __name__ == "__main__":
    run("c92", select_experts_mm_kernel, make_case, call=call)
