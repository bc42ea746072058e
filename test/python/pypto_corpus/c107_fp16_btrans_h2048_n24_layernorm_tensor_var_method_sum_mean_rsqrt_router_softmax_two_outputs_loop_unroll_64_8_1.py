"""c107 (outside batch corpus18, k157) (fresh): fp16 router with a LayerNorm written in Tensor methods, V->C->V.

* LayerNorm: `mu = xf.sum(-1, keepdim=True) * (1.0 / H)`, `var = xf.var(-1, correction=0, keepdim=True)` (the
  Tensor method), `(xf - mu) * (var + eps).rsqrt() * gamma + beta`; gamma/beta as [1, H] fp16 inputs cast once
  before the loop
* fp16 @ w [24, 2048] `b_trans=True`, fp32 out (N = 24 experts)
* post: logits (out 1) and `pypto.softmax(logits, -1)` (out 2)
* `pypto.loop_unroll(0, T, 1, unroll_list=[64, 8, 1])` with `x.view(...)` (the Tensor method) and Tensor.assemble
  (`out.assemble(tile, [t, 0])`)
"""
import numpy as np

from batch_harness import PTO, fp16_round, pypto, run

H, N = 2048, 24
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(runtime_options=_RT)
def k157(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([1, H], pypto.DT_FP16),
    beta: pypto.Tensor([1, H], pypto.DT_FP16),
    w: pypto.Tensor([N, H], pypto.DT_FP16),
    logits: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
    probs: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    b = pypto.cast(beta, pypto.DT_FP32)
    for t0, tile in pypto.loop_unroll(0, x.shape[0], 1, name="ROUTER", idx_name="t0", unroll_list=[64, 8, 1]):
        xt = x.view([tile, H], [t0, 0])
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(xt, pypto.DT_FP32)
        mu = xf.sum(-1, keepdim=True) * (1.0 / H)
        var = xf.var(-1, correction=0, keepdim=True)
        xn = (xf - mu) * (var + 1e-5).rsqrt() * g + b
        xh = pypto.cast(xn, pypto.DT_FP16)
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [32, 32])
        z = pypto.matmul(xh, w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(8, N)
        logits.assemble(z, [t0, 0])
        probs.assemble(pypto.softmax(z, -1), [t0, 0])


def make_case(Tn):
    rng = np.random.default_rng(157 + Tn)
    x = fp16_round(rng.standard_normal((Tn, H)) * 2 + 0.5)
    g = fp16_round(rng.uniform(0.5, 1.5, (1, H)))
    b = fp16_round(rng.uniform(-0.2, 0.2, (1, H)))
    w = fp16_round(rng.standard_normal((N, H)) * 0.03)
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
    xh = fp16_round((x64 - mu) / np.sqrt(var + 1e-5) * g + b)
    z = xh.astype(np.float64) @ w.astype(np.float64).T
    e = np.exp(z - z.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    ins = [(x, "fp16"), (g, "fp16"), (b, "fp16"), (w, "fp16")]
    return ins, [((Tn, N), "fp32"), ((Tn, N), "fp32")], [z, p], [(5e-3, 5e-3), (1e-4, 5e-3)], []


if __name__ == "__main__":
    run("c107", k157, make_case)
