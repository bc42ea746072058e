"""c137 (outside batch corpus23, k210): wide q_b projection (N = 8192) with interleaved RoPE on each head's rope half (V -> C -> V).

qr [T, 1024] bf16 -> RMSNorm (gamma [1024]) -> bf16
  -> q = xn @ wq_b^T, wq_b [8192, 1024] bf16 in NZ format, [N, K] with b_trans=True, cube emits bf16
  -> [t, 64 heads, 128] = [nope 64 | rope 64]; rope part interleaved (pairs (2i, 2i+1)):
       r = rope as [t, 64, 32, 2];  even = r[..., 0:1], odd = r[..., 1:2]
       rot = concat([-odd, even], -1);  out_rope = r * cos + rot * sin   (cos/sin [T, 64] pair-repeated)
  -> out [T, 64, 128] bf16 = concat([nope, out_rope], -1)
Token loop: loop_unroll [16, 2] (+1).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

D_IN = 1024
NH = 64
HD = 128
NOPE = 64
ROPE = 64


def interleaved_rope(r4, c4, s4):
    even = pypto.view(r4, [r4.shape[0], NH, ROPE // 2, 1], [0, 0, 0, 0])
    odd = pypto.view(r4, [r4.shape[0], NH, ROPE // 2, 1], [0, 0, 0, 1])
    rot = pypto.concat([pypto.mul(odd, -1.0), even], -1)
    return r4 * c4 + rot * s4


@pypto.frontend.jit(runtime_options={"stitch_function_max_num": 32})
def qb_rope_interleaved(
    qr: pypto.Tensor([pypto.DYNAMIC, D_IN], pypto.DT_BF16),
    gamma: pypto.Tensor([D_IN], pypto.DT_BF16),
    wq_b: pypto.Tensor([NH * HD, D_IN], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    cos: pypto.Tensor([pypto.DYNAMIC, ROPE], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, ROPE], pypto.DT_BF16),
    q_out: pypto.Tensor([pypto.DYNAMIC, NH, HD], pypto.DT_BF16),
):
    T = qr.shape[0]
    wq_b.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for t0, tt in pypto.loop_unroll(0, T, 1, name="qb", idx_name="t0", unroll_list=[16, 2]):
        pypto.set_vec_tile_shapes(4, D_IN)
        xf = pypto.cast(qr[t0:t0 + tt, :], pypto.DT_FP32)
        xn = xf * pypto.rsqrt((xf * xf).sum(-1, keepdim=True) * (1.0 / D_IN) + 1e-6) * pypto.cast(gamma, pypto.DT_FP32)
        xn = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 256])
        q = pypto.matmul(xn, wq_b, pypto.DT_BF16, b_trans=True)

        pypto.set_vec_tile_shapes(4, 8, HD)
        q3 = pypto.reshape(q, [tt, NH, HD])
        nope = q3[:, :, 0:NOPE]
        rope = pypto.cast(q3[:, :, NOPE:HD], pypto.DT_FP32)

        pypto.set_vec_tile_shapes(4, 4, ROPE // 2, 8)
        r4 = pypto.reshape(rope, [tt, NH, ROPE // 2, 2])
        c4 = pypto.reshape(pypto.cast(cos[t0:t0 + tt, :], pypto.DT_FP32), [tt, 1, ROPE // 2, 2])
        s4 = pypto.reshape(pypto.cast(sin[t0:t0 + tt, :], pypto.DT_FP32), [tt, 1, ROPE // 2, 2])
        rr = pypto.reshape(interleaved_rope(r4, c4, s4), [tt, NH, ROPE])

        pypto.set_vec_tile_shapes(4, 8, HD)
        q_out[t0:t0 + tt, :, :] = pypto.concat([nope, pypto.cast(rr, pypto.DT_BF16)], -1)


def make_case(T):
    rng = np.random.default_rng(210 + T)
    x = bf16_round(rng.standard_normal((T, D_IN)).astype(np.float32))
    g = bf16_round((1.0 + 0.1 * rng.standard_normal(D_IN)).astype(np.float32))
    w = bf16_round((rng.standard_normal((NH * HD, D_IN)) / np.sqrt(D_IN)).astype(np.float32))
    pos = np.arange(T, dtype=np.float32)[:, None] * 0.7 + 1.0
    inv = 1.0 / (10000.0 ** (np.arange(0, ROPE, 2, dtype=np.float32) / ROPE))
    ang = np.repeat(pos * inv, 2, axis=-1)
    cos = bf16_round(np.cos(ang).astype(np.float32))
    sin = bf16_round(np.sin(ang).astype(np.float32))

    ss = (x * x).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / D_IN)
    xn = bf16_round(x * (np.float32(1.0) / np.sqrt(ss + np.float32(1e-6))) * g)
    q = bf16_round((xn.astype(np.float64) @ w.astype(np.float64).T).astype(np.float32)).reshape(T, NH, HD)
    r = q[..., NOPE:]
    rot = np.empty_like(r)
    rot[..., 0::2] = -r[..., 1::2]
    rot[..., 1::2] = r[..., 0::2]
    rr = bf16_round(r * cos[:, None, :] + rot * sin[:, None, :])
    ref = np.concatenate([q[..., :NOPE], rr], -1)
    return ([(x, "bf16"), (g, "bf16"), (w, "bf16"), (cos, "bf16"), (sin, "bf16")],
            [((T, NH, HD), "bf16")], [ref], [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k210_qb_wide_interleaved_rope", qb_rope_interleaved, make_case)
