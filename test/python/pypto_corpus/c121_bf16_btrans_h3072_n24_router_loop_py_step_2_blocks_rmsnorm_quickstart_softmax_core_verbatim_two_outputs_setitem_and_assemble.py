"""c121 (outside batch corpus19, k171) (fresh, tutorial style): bf16 router, h 3072, N 24, bf16 weight [24, 3072] with b_trans.
* Loop from examples/02_intermediate/controlflow/loop/loop.py `loop_basic_kernel`'s second loop: **a step of 2**
  (`for bs_idx in pypto.loop(0, n, new_step)`, rows `bs_idx * s : (bs_idx + new_step) * s`), here over 8-row blocks
  of the dynamic token axis with valid_shape `(bs - bs_idx * 8).min(16)`.
* quick_start.md's `softmax_core` verbatim (amax, sub, exp, sum, divide) on the fp32 logits.
* Two outputs: logits by an open-ended setitem `logits_out[bs_idx * s:, :] = z`, probs by `pypto.assemble`.
V->C->V: bf16 x -> fp32 RMSNorm (layer_norm.py's rms_norm_core body, in fp32) -> bf16 @ w^T (fp32) -> softmax.
"""
import numpy as np
from batch_harness import pypto, run, PTO, bf16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, N = 3072, 24
S = 8


def softmax_core(x: pypto.Tensor) -> pypto.Tensor:
    row_max = pypto.amax(x, dim=-1, keepdim=True)  # 计算行最大值
    sub = x - row_max                              # 值归一化
    exp = pypto.exp(sub)                           # 指数运算
    esum = pypto.sum(exp, dim=-1, keepdim=True)    # 求和
    return exp / esum                              # 概率归一化


def rms_norm_core(x: pypto.Tensor, gamma: pypto.Tensor, eps: float, hidden_size: float) -> pypto.Tensor:
    # Compute RMS: sqrt(mean(x^2) + eps)
    squared = x * x
    mean_sq = pypto.sum(squared, dim=-1, keepdim=True)
    mean_sq = mean_sq / hidden_size
    rms = pypto.sqrt((mean_sq + eps))
    normalized = x / rms
    return normalized * gamma


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def router_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    weight: pypto.Tensor([N, H], pypto.DT_BF16),
    logits_out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
    probs_out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    bs = x.shape[0]
    s = S
    n = (bs + s - 1) // s
    new_step = 2
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [32, 32])
    for bs_idx in pypto.loop(0, n, new_step):  # start, stop, step
        valid = (bs - bs_idx * s).min(new_step * s)
        xs = pypto.view(x, [new_step * s, H], [bs_idx * s, 0], valid_shape=[valid, H])
        pypto.set_vec_tile_shapes(4, H)
        xn = rms_norm_core(pypto.cast(xs, pypto.DT_FP32), gamma, 1e-6, H)
        z = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), weight, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(new_step * s, N)
        logits_out[bs_idx * s:, :] = z
        probs = softmax_core(z)
        pypto.assemble(probs, [bs_idx * s, 0], probs_out)


def make_case(T):
    rng = np.random.default_rng(171 + T)
    x = bf16_round(rng.standard_normal((T, H)))
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    w = bf16_round(rng.standard_normal((N, H)) * (3.0 / np.sqrt(H)))
    x64 = x.astype(np.float64)
    ms = (x64 * x64).mean(-1, keepdims=True)
    xn = bf16_round(x64 / np.sqrt(ms + 1e-6) * g)
    z = xn.astype(np.float64) @ w.astype(np.float64).T
    e = np.exp(z - z.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return ([(x, "bf16"), (g, "fp32"), (w, "bf16")], [((T, N), "fp32"), ((T, N), "fp32")], [z, p],
            [(2e-3, 2e-3), (1e-4, 5e-3)], [])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c121", router_kernel, make_case, call=call)
