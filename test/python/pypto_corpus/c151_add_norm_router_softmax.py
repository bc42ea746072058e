"""c151 (2026-12-07, outside corpus32 (held-out batch A, k304-k313: fresh); its author's k313).

k313: V->C->V router. Fused residual add (h = x + resid, bf16, written out), RMSNorm written as
h * pow(sum(h*h)/H + eps, -0.5) * gamma (rank-1 fp32 [H]), bf16 matmul with gate weight [K=3072, N=64]
(no b_trans) -> fp32 logits, softmax post-op -> fp32 probs. Two outputs.
pypto.loop over 8-token tiles with unroll_list=[4, 2, 1] and valid_shape."""
import numpy as np
from batch_harness import pypto, run, bf16_round

H, N = 3072, 64
TILE = 8
EPS = 1e-6
T_DYN = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k313(x: pypto.Tensor([T_DYN, H], pypto.DT_BF16),
         resid: pypto.Tensor([T_DYN, H], pypto.DT_BF16),
         gamma: pypto.Tensor([H], pypto.DT_FP32),
         w_gate: pypto.Tensor([H, N], pypto.DT_BF16),
         h_out: pypto.Tensor([T_DYN, H], pypto.DT_BF16),
         probs: pypto.Tensor([T_DYN, N], pypto.DT_FP32)):
    t = x.shape[0]
    g = pypto.reshape(gamma, [1, H], inplace=True)
    for i in pypto.loop(0, (t + TILE - 1) // TILE, 1, name="ROUTER_LOOP", idx_name="i", unroll_list=[4, 2, 1]):
        r0 = i * TILE
        n = pypto.min(TILE, t - r0)
        pypto.set_semantic_label("add-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xt = pypto.view(x, [TILE, H], [r0, 0], valid_shape=[n, H])
        rt = pypto.view(resid, [TILE, H], [r0, 0], valid_shape=[n, H])
        h = pypto.cast(pypto.add(pypto.cast(xt, pypto.DT_FP32), pypto.cast(rt, pypto.DT_FP32)), pypto.DT_BF16)
        pypto.assemble(h, [r0, 0], h_out)
        hf = pypto.cast(h, pypto.DT_FP32)
        ms = pypto.div(pypto.sum(hf * hf, -1, keepdim=True), float(H))
        hn = hf * pypto.pow(ms + EPS, -0.5) * g
        hb = pypto.cast(hn, pypto.DT_BF16)
        pypto.set_semantic_label("router-linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [64, 64])
        logits = pypto.matmul(hb, w_gate, pypto.DT_FP32)
        pypto.set_semantic_label("router-softmax")
        pypto.set_vec_tile_shapes(TILE, N)
        p = pypto.softmax(logits, -1)
        pypto.assemble(p, [r0, 0], probs)


def make_case(T):
    rng = np.random.default_rng(313 + T)
    x = bf16_round(rng.standard_normal((T, H)).astype(np.float32))
    r = bf16_round(rng.standard_normal((T, H)).astype(np.float32))
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    w = bf16_round((rng.standard_normal((H, N)) * (2.0 / np.sqrt(H))).astype(np.float32))
    h = bf16_round(x + r)
    ms = (h * h).sum(-1, keepdims=True, dtype=np.float32) / np.float32(H)
    hb = bf16_round(h * np.power(ms + np.float32(EPS), np.float32(-0.5)) * g)
    lg = hb @ w
    e = np.exp(lg - lg.max(-1, keepdims=True))
    ref = e / e.sum(-1, keepdims=True)
    return ([(x, "bf16"), (r, "bf16"), (g, "fp32"), (w, "bf16")],
            [((T, H), "bf16"), ((T, N), "fp32")], [h, ref], [(1e-4, 0.0078125), (1e-5, 1e-3)], [])


if __name__ == "__main__":
    run("k313", k313, make_case)
