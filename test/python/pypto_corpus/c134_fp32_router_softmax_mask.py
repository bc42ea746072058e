"""c134 (outside batch corpus23, k207): fp32 MoE router: RMSNorm -> gate linear -> clamp -> softmax -> threshold mask -> renormalise.

x [T, 7168] fp32 (fp32 activations in), gamma [7168] fp32 rank-1;
logits = xn @ w_gate^T, w_gate [64, 7168] fp32 ([N, K], b_trans=True), fp32 cube output;
logits clamped from below with where(logits < -8, -8, logits) and from above with pypto.minimum;
probs = pypto.softmax(logits, -1)                               -> out probs [T, 64] fp32
keep  = probs where (probs >= 0.25 * rowmax) and (probs > 0.005), else 0
route = keep / sum(keep)                                          -> out route [T, 64] fp32
Token loop: stepped pypto.loop(0, T, 8) with pypto.min tails; big vector tiles along K.
"""
import numpy as np
from batch_harness import pypto, run

H = 7168
E = 64
STEP = 8
LO, HI = -8.0, 8.0


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}},
    runtime_options={"stitch_function_max_num": 16},
)
def moe_router(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    w_gate: pypto.Tensor([E, H], pypto.DT_FP32),
    probs_out: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    route_out: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
):
    T = x.shape[0]
    pypto.set_vec_tile_shapes(STEP, E)
    hi_row = pypto.full([STEP, E], HI, pypto.DT_FP32)
    for s in pypto.loop(0, T, STEP, name="router", idx_name="s"):
        rows = pypto.min(STEP, T - s)
        xt = pypto.view(x, [STEP, H], [s, 0], valid_shape=[rows, H])

        pypto.set_semantic_label("router-rmsnorm")
        pypto.set_vec_tile_shapes(STEP, 1792)
        ms = pypto.sum(xt * xt, -1, keepdim=True) / float(H)
        xn = xt * pypto.rsqrt(ms + 1e-6) * gamma

        pypto.set_semantic_label("router-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [64, 64])
        logits = pypto.matmul(xn, w_gate, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("router-softmax-mask")
        pypto.set_vec_tile_shapes(STEP, E)
        logits = pypto.where(logits < LO, LO, logits)
        logits = pypto.minimum(logits, hi_row)
        probs = pypto.softmax(logits, -1)
        thr = pypto.amax(probs, -1, keepdim=True) * 0.25
        keep_mask = pypto.logical_and(pypto.ge(probs, thr), probs > 0.005)
        keep = pypto.where(keep_mask, probs, 0.0)
        route = keep / pypto.sum(keep, -1, keepdim=True)
        pypto.assemble(probs, [s, 0], probs_out)
        pypto.assemble(route, [s, 0], route_out)


def make_case(T):
    rng = np.random.default_rng(207 + T)
    x = rng.standard_normal((T, H)).astype(np.float32)
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    w = (3.0 * rng.standard_normal((E, H)) / np.sqrt(H)).astype(np.float32)
    xd = x.astype(np.float64)
    xn = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + 1e-6) * g
    lg = np.clip(xn @ w.astype(np.float64).T, LO, HI)
    p = np.exp(lg - lg.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    keep = np.where((p >= 0.25 * p.max(-1, keepdims=True)) & (p > 0.005), p, 0.0)
    route = keep / keep.sum(-1, keepdims=True)
    tol = (1e-5, 1e-3)
    return ([(x, "fp32"), (g, "fp32"), (w, "fp32")], [((T, E), "fp32"), ((T, E), "fp32")],
            [p.astype(np.float32), route.astype(np.float32)], [tol, tol], [])


if __name__ == "__main__":
    run("k207_fp32_router_softmax_mask", moe_router, make_case)
