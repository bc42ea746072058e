#!/usr/bin/env python3
"""c85 (outside batch corpus11, k103) (fresh, my own style): fp32 router with N = 24 and a grouped softmax into a rank-3 output.

SK-03 C -> V: x [T, 1024] fp32 @ w_router [1024, 24] fp32 ([K, N]) -> logits fp32 [T, 24] (output 1) ->
* (1 / temperature) -> reshape [t, 3, 8] -> softmax over the 8 experts of each group -> probs [T, 3, 8] (output 2, rank 3).
Style: pypto.loop over (T + 15) // 16 tiles (pypto.ceil_div(T, 16) is refused by SIM 0.2.0), tail rows via valid_shape=[(T - i*16).min(16), ...] on the view, the
matmul result and the reshape; pypto.softmax; python helper.
"""
import numpy as np

from batch_harness import PTO, pypto, run  # (the batch's _common.py)

H, E, G = 1024, 24, 3
TILE = 16
TEMP = 0.7


def group_softmax(logits, rows, valid_rows):
    scaled = logits * (1.0 / TEMP)
    g = pypto.reshape(scaled, [rows, G, E // G], valid_shape=[valid_rows, G, E // G])
    return pypto.softmax(g, dim=-1)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def router(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    w_router: pypto.Tensor([H, E], pypto.DT_FP32),
    logits_out: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    probs_out: pypto.Tensor([pypto.DYNAMIC, G, E // G], pypto.DT_FP32),
):
    T = x.shape[0]
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [32, 32])
    for i in pypto.loop((T + TILE - 1) // TILE, name="router_tiles", idx_name="i"):  # pypto.ceil_div(T, TILE): SIM 0.2.0 AttributeError SymbolicScalar .dtype
        valid = (T - i * TILE).min(TILE)
        pypto.set_vec_tile_shapes(TILE, 256)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[valid, H])
        logits = pypto.matmul(xt, w_router, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(TILE, E)
        pypto.assemble(logits, [i * TILE, 0], logits_out)
        pypto.set_vec_tile_shapes(TILE, G, E // G)
        probs = group_softmax(logits, TILE, valid)
        pypto.assemble(probs, [i * TILE, 0, 0], probs_out)


rng = np.random.default_rng(103)
W = rng.normal(0, 0.05, (H, E)).astype(np.float32)


def make_case(T):
    x = rng.normal(0, 1, (T, H)).astype(np.float32)
    lg = (x.astype(np.float64) @ W.astype(np.float64)).astype(np.float32)
    s = (lg / TEMP).reshape(T, G, E // G)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    return ([(x, "fp32"), (W, "fp32")], [((T, E), "fp32"), ((T, G, E // G), "fp32")], [lg, p],
            [(2e-2, 2e-2)] * 2, [])


if __name__ == "__main__":
    run("k103", router, make_case)
