"""c132 (outside batch corpus21, k190): LayerNorm -> router MatMul (N = 64) -> clamp -> softmax + top-1 mask (V->C->V), fp16 input.

x [T, 5120] fp16, ln_w / ln_b [5120] fp16 (rank-1, used directly), w_router [64, 5120] fp16
(b_trans=True).  probs [T, 64] fp32 = softmax(max(logits, -8)), top1 [T, 64] fp32 = 1.0 where the
logit equals its row max (pypto.where on pypto.eq), else 0.0.
Token loop: pypto.loop over 32-token tiles, tail via valid_shape computed with SymbolicScalar.min,
runtime option valid_shape_optimize=1.
"""
import numpy as np
from batch_harness import pypto, run, fp16_round

H = 5120
E = 64
TILE = 32


@pypto.frontend.jit(runtime_options={"valid_shape_optimize": 1})
def k190_ln_router_softmax(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    ln_w: pypto.Tensor([H], pypto.DT_FP16),
    ln_b: pypto.Tensor([H], pypto.DT_FP16),
    w_router: pypto.Tensor([E, H], pypto.DT_FP16),
    probs: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    top1: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
):
    T = x.shape[0]
    for i in pypto.loop(0, (T + TILE - 1) // TILE, 1, name="router_loop", idx_name="i"):
        r0 = i * TILE
        nv = (T - r0).min(TILE)
        xt = pypto.view(x, [TILE, H], [r0, 0], valid_shape=[nv, H])

        pypto.set_semantic_label("ln")
        pypto.set_vec_tile_shapes(4, 2560)
        xf = pypto.cast(xt, pypto.DT_FP32)
        mu = pypto.sum(xf, -1, keepdim=True) * (1.0 / H)
        xc = xf - mu
        var = pypto.sum(xc * xc, -1, keepdim=True) * (1.0 / H)
        y = xc * pypto.rsqrt(var + 1e-5)
        y = y * pypto.cast(ln_w, pypto.DT_FP32) + pypto.cast(ln_b, pypto.DT_FP32)
        y16 = pypto.cast(y, pypto.DT_FP16)

        pypto.set_semantic_label("router")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [64, 64])
        logits = pypto.matmul(y16, w_router, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("softmax")
        pypto.set_vec_tile_shapes(TILE, E)
        logits = pypto.maximum(logits, -8.0)
        m = pypto.amax(logits, -1, keepdim=True)
        e = pypto.exp(logits - m)
        p = e / pypto.sum(e, -1, keepdim=True)
        hot = pypto.where(pypto.eq(logits, m), 1.0, 0.0)
        pypto.assemble(p, [r0, 0], probs)
        pypto.assemble(hot, [r0, 0], top1)


def make_case(T):
    rng = np.random.default_rng(190 + T)
    x = fp16_round((0.5 + rng.standard_normal((T, H))).astype(np.float32))
    lw = fp16_round((1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32))
    lb = fp16_round((0.05 * rng.standard_normal(H)).astype(np.float32))
    w = fp16_round((2.0 * rng.standard_normal((E, H)) / np.sqrt(H)).astype(np.float32))
    mu = x.sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / H)
    xc = x - mu
    var = (xc * xc).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / H)
    y = fp16_round(xc / np.sqrt(var + np.float32(1e-5)) * lw + lb)
    lg = y.astype(np.float64) @ w.astype(np.float64).T
    lg = np.maximum(lg, -8.0)
    m = lg.max(-1, keepdims=True)
    e = np.exp(lg - m)
    p = e / e.sum(-1, keepdims=True)
    hot = (lg == m).astype(np.float32)
    return ([(x, "fp16"), (lw, "fp16"), (lb, "fp16"), (w, "fp16")],
            [((T, E), "fp32"), ((T, E), "fp32")], [p.astype(np.float32), hot],
            [(1e-5, 1e-3), (0.0, 0.0)], [])


if __name__ == "__main__":
    run("k190_ln_router_softmax", k190_ln_router_softmax, make_case)
