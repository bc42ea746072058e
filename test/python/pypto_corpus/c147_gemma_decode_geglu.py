"""c147 (outside batch corpus26, k242): Gemma-style decode MLP front half: (1 + gamma) RMSNorm -> fused gate_up projection (N = 8192) -> GELU-tanh gating.

x [b, 1, 2048] bf16 (decode: one token per sequence, reshaped in place to [b, 2048]),
gamma [2048] bf16 (Gemma scaling x * (1 + gamma)), w_gate_up [8192(N), 2048(K)] bf16 (b_trans=True,
rows 0..4095 = gate, 4096..8191 = up). out [b, 1, 4096] bf16 = gelu_tanh(gate) * up.
Written with tensor methods (.reshape/.sum/.view), 1-argument loop_unroll, bare @pypto.frontend.jit.
"""
import math

import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round  # noqa: F401

H = 2048
INTER = 4096
EPS = 1e-6
GELU_C = math.sqrt(2.0 / math.pi)


def gelu_tanh(g):
    inner = (g + g * g * g * 0.044715) * GELU_C
    tanh = 1.0 - 2.0 / (pypto.exp(inner * 2.0) + 1.0)
    return g * 0.5 * (tanh + 1.0)


@pypto.frontend.jit
def gemma_geglu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, 1, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_BF16),
    w_gate_up: pypto.Tensor([2 * INTER, H], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, 1, INTER], pypto.DT_BF16),
):
    b = x.shape[0]
    x_2d = x.reshape([b, H], inplace=True)
    pypto.set_vec_tile_shapes(1, H)
    gamma_p1 = pypto.cast(gamma.reshape([1, H], inplace=True), pypto.DT_FP32) + 1.0

    for b_idx, b_tile in pypto.loop_unroll(b, unroll_list=[32, 8]):
        x_tile = x_2d.view([b_tile, H], [b_idx, 0])

        pypto.set_semantic_label("pre-ffn-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(x_tile, pypto.DT_FP32)
        ms = (xf * xf).sum(-1, keepdim=True) / H
        xn = pypto.cast(xf / pypto.sqrt(ms + EPS) * gamma_p1, pypto.DT_BF16)

        pypto.set_semantic_label("gate-up-linear")
        pypto.set_cube_tile_shapes([16, 32], [256, 1024], [128, 256])
        gu = pypto.matmul(xn, w_gate_up, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("geglu")
        pypto.set_vec_tile_shapes(4, 1024)
        gate = gu[:, :INTER]
        up = gu[:, INTER:]
        h = pypto.cast(gelu_tanh(gate) * up, pypto.DT_BF16)
        pypto.assemble(h.reshape([b_tile, 1, INTER]), [b_idx, 0, 0], out)


def make_case(T):
    rng = np.random.default_rng(242 + T)
    x = bf16_round(rng.standard_normal((T, 1, H)).astype(np.float32))
    gamma = bf16_round((0.3 * rng.standard_normal(H)).astype(np.float32))
    w = bf16_round((rng.standard_normal((2 * INTER, H)) / np.sqrt(H)).astype(np.float32))
    xf = x.reshape(T, H).astype(np.float64)
    xn = bf16_round((xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + EPS) * (1.0 + gamma)).astype(np.float32))
    gu = xn.astype(np.float64) @ w.astype(np.float64).T
    g, u = gu[:, :INTER], gu[:, INTER:]
    gel = 0.5 * g * (1.0 + np.tanh(GELU_C * (g + 0.044715 * g ** 3)))
    h = bf16_round((gel * u).astype(np.float32)).reshape(T, 1, INTER)
    return ([(x, "bf16"), (gamma, "bf16"), (w, "bf16")],
            [((T, 1, INTER), "bf16")], [h], [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k242_gemma_decode_geglu", gemma_geglu_kernel, make_case)
