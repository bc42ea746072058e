"""c133 (outside batch corpus23, k203): Qwen3-style query projection, heads-first output (V -> C -> V).

x [T, 2560] bf16 -> RMSNorm (rank-1 gamma [2560] used directly) -> bf16
  -> matmul with w_q [2560, 1024] bf16 stored in NZ format, [K, N] layout (no b_trans),
     product rounded to bf16 by the cube (out_dtype DT_BF16)
  -> reshape in place to [t, 8, 128], per-head RMSNorm (q_norm, gamma [128]) on rank-3 tiles
  -> bf16, RoPE "rotate half" with cos/sin [T, 128] broadcast over the heads
  -> out [8, T, 128] bf16, heads first, written head by head with out[h, a:b, :] = ...
Token loop: loop_unroll with [32, 8] (1 appended by PyPTO).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

HID = 2560
NH = 8
HD = 128
EPS = 1e-6


def rotate_half(t):
    half = HD // 2
    lo = t[:, :, :half]
    hi = t[:, :, half:]
    return pypto.concat([hi * -1.0, lo + 0.0], -1)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"stitch_function_max_num": 64},
)
def qwen_q_proj(
    x: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    gamma: pypto.Tensor([HID], pypto.DT_BF16),
    w_q: pypto.Tensor([HID, NH * HD], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    q_gamma: pypto.Tensor([HD], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, HD], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, HD], pypto.DT_BF16),
    q_out: pypto.Tensor([NH, pypto.DYNAMIC, HD], pypto.DT_BF16),
):
    n_tok = x.shape[0]
    w_q.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    # per-head gamma as a [1, NH, HD] fp32 row (PyPTO broadcasts one axis per operand)
    pypto.set_vec_tile_shapes(1, NH, HD)
    qg_row = pypto.expand_clone(pypto.cast(pypto.reshape(q_gamma, [1, 1, HD]), pypto.DT_FP32), [1, NH, HD])

    for t0, tt in pypto.loop_unroll(0, n_tok, 1, name="q_tok", idx_name="t0", unroll_list=[32, 8]):
        xs = x[t0:t0 + tt, :]

        pypto.set_semantic_label("q-pre-rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xf = pypto.cast(xs, pypto.DT_FP32)
        ms = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / HID)
        xn = xf * pypto.rsqrt(ms + EPS) * pypto.cast(gamma, pypto.DT_FP32)
        xn = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([16, 16] if tt < 32 else [32, 32], [256, 512], [128, 256])
        q = pypto.matmul(xn, w_q, pypto.DT_BF16)

        pypto.set_semantic_label("q-headnorm-rope")
        pypto.set_vec_tile_shapes(4, NH, HD)
        q3 = pypto.reshape(q, [tt, NH, HD], inplace=True)
        q3f = pypto.cast(q3, pypto.DT_FP32)
        hs = pypto.sum(q3f * q3f, -1, keepdim=True) * (1.0 / HD)
        qn = q3f * pypto.rsqrt(hs + EPS) * qg_row
        qn = pypto.cast(pypto.cast(qn, pypto.DT_BF16), pypto.DT_FP32)

        c3 = pypto.reshape(pypto.cast(cos[t0:t0 + tt, :], pypto.DT_FP32), [tt, 1, HD])
        s3 = pypto.reshape(pypto.cast(sin[t0:t0 + tt, :], pypto.DT_FP32), [tt, 1, HD])
        qr = pypto.cast(qn * c3 + rotate_half(qn) * s3, pypto.DT_BF16)

        for h in range(NH):
            q_out[h, t0:t0 + tt, :] = qr[:, h, :]


def make_case(T):
    rng = np.random.default_rng(203 + T)
    x = bf16_round(rng.standard_normal((T, HID)).astype(np.float32))
    g = bf16_round((1.0 + 0.1 * rng.standard_normal(HID)).astype(np.float32))
    w = bf16_round((rng.standard_normal((HID, NH * HD)) / np.sqrt(HID)).astype(np.float32))
    qg = bf16_round((1.0 + 0.1 * rng.standard_normal(HD)).astype(np.float32))
    pos = np.arange(T, dtype=np.float32)[:, None] + 3.0
    inv = 1.0 / (10000.0 ** (np.arange(0, HD, 2, dtype=np.float32) / HD))
    ang = np.concatenate([pos * inv, pos * inv], -1)
    cos = bf16_round(np.cos(ang).astype(np.float32))
    sin = bf16_round(np.sin(ang).astype(np.float32))

    ms = (x * x).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / HID)
    xn = bf16_round(x * (np.float32(1.0) / np.sqrt(ms + np.float32(EPS))) * g)
    q = bf16_round((xn.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))
    q3 = q.reshape(T, NH, HD)
    hs = (q3 * q3).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / HD)
    qn = bf16_round(q3 * (np.float32(1.0) / np.sqrt(hs + np.float32(EPS))) * qg)
    rot = np.concatenate([-qn[..., HD // 2:], qn[..., :HD // 2]], -1)
    qr = bf16_round(qn * cos[:, None, :] + rot * sin[:, None, :])
    ref = np.ascontiguousarray(qr.transpose(1, 0, 2))
    return ([(x, "bf16"), (g, "bf16"), (w, "bf16"), (qg, "bf16"), (cos, "bf16"), (sin, "bf16")],
            [((NH, T, HD), "bf16")], [ref], [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k203_qwen_q_headnorm_rope_hfirst", qwen_q_proj, make_case)
