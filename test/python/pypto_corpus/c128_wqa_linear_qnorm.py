"""c128 (outside batch corpus21, k184): MatMul -> RMSNorm (C->V), the MLA 'wqa-linear -> q-rmsnorm' segment.

x [T, 2048] bf16 @ wq_a [2048, 512] bf16 (weight laid out [K, N], no transpose, written with
the `@` operator so the product comes back as bf16), then PyPTO's built-in pypto.rms_norm
with the rank-1 gamma [512] bf16 passed directly, output qr [T, 512] bf16.
Token loop: plain pypto.loop over ceil(T/16) tiles; the tail tile gets
valid_shape = min(16, T - off) (pypto.min on symbolic scalars).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

HID = 2048
Q_LORA = 512
TILE = 16


@pypto.frontend.jit
def k184_wqa_linear_qnorm(
    x: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    wq_a: pypto.Tensor([HID, Q_LORA], pypto.DT_BF16),
    gamma_cq: pypto.Tensor([Q_LORA], pypto.DT_BF16),
    qr: pypto.Tensor([pypto.DYNAMIC, Q_LORA], pypto.DT_BF16),
    eps: float = 1e-6,
):
    n_tok = x.shape[0]
    n_tiles = (n_tok + TILE - 1) // TILE
    for i in pypto.loop(n_tiles, name="tok_tiles", idx_name="i"):
        off = i * TILE
        rows = pypto.min(TILE, n_tok - off)
        xt = pypto.view(x, [TILE, HID], [off, 0], valid_shape=[rows, HID])

        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 512], [64, 64])
        q = xt @ wq_a                      # bf16 result

        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(8, Q_LORA)
        qn = pypto.rms_norm(q, gamma_cq, eps)   # fp32 inside, back to bf16
        pypto.assemble(qn, [off, 0], qr)


def make_case(T):
    rng = np.random.default_rng(1840 + T)
    x = bf16_round(rng.standard_normal((T, HID)).astype(np.float32))
    w = bf16_round((rng.standard_normal((HID, Q_LORA)) / np.sqrt(HID)).astype(np.float32))
    g = bf16_round((0.4 + 0.05 * rng.standard_normal(Q_LORA)).astype(np.float32))
    q = bf16_round((x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))
    ms = (q * q * np.float32(1.0 / Q_LORA)).sum(-1, keepdims=True, dtype=np.float32)
    y = q / np.sqrt(ms + np.float32(1e-6)) * g
    ref = bf16_round(y.astype(np.float32))
    return ([(x, "bf16"), (w, "bf16"), (g, "bf16")], [((T, Q_LORA), "bf16")], [ref],
            [(1e-4, 0.0078125)], [1e-6])


if __name__ == "__main__":
    run("k184_wqa_linear_qnorm", k184_wqa_linear_qnorm, make_case)
