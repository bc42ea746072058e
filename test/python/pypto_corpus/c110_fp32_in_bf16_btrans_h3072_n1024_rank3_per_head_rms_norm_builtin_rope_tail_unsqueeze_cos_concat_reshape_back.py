"""c110 (outside batch corpus18, k160) (fresh): fp32 input, per-head (rank-3) norm and a rotary tail, V->C->V.

* pre-RMSNorm in fp32 with `pypto.rsqrt` and gamma fp32 [1, H] -> bf16
* bf16 @ w [1024, 3072] (`b_trans=True`) -> fp32 [t, 1024] -> `reshape([tile, 8, 128])`
* per-head norm by the builtin `pypto.rms_norm(z3, head_gamma, 1e-6)` with a rank-1 fp32 head gamma [128]
* RoPE on the last 64 of each head, rotate-half: x1 = view [.., 64:96], x2 = view [.., 96:128]; cos/sin fp32 [T, 32]
  viewed per tile and `pypto.unsqueeze(.., 1)` to [t, 1, 32]; o1 = x1*cos - x2*sin, o2 = x2*cos + x1*sin
* `pypto.concat([pass, o1, o2], -1)`, `reshape` back to [tile, 1024], bf16, `pypto.assemble`
* `pypto.loop_unroll(0, T, 1, unroll_list=[16, 4, 1])`
"""
import numpy as np

from batch_harness import PTO, bf16_round, pypto, run

H, NHEAD, HD, ROT = 3072, 8, 128, 64
N = NHEAD * HD
HALF = ROT // 2
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(runtime_options=_RT)
def k160(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    gamma: pypto.Tensor([1, H], pypto.DT_FP32),
    w: pypto.Tensor([N, H], pypto.DT_BF16),
    head_gamma: pypto.Tensor([HD], pypto.DT_FP32),
    cos: pypto.Tensor([pypto.DYNAMIC, HALF], pypto.DT_FP32),
    sin: pypto.Tensor([pypto.DYNAMIC, HALF], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    # SIM: pypto.rms_norm(z3, head_gamma) (its own [1, 1, 128] gamma reshape) -> FC0000 "Only allow to expand one
    # axis"; the gamma is expanded to [1, 8, 128] before the loop and multiplied after the builtin (no gamma).
    pypto.set_vec_tile_shapes(1, NHEAD, HD)
    hg = pypto.expand_clone(pypto.reshape(head_gamma, [1, 1, HD]), [1, NHEAD, HD])
    for t0, tile in pypto.loop_unroll(0, x.shape[0], 1, name="HEADS", idx_name="t0", unroll_list=[16, 4, 1]):
        xt = pypto.view(x, [tile, H], [t0, 0])
        pypto.set_vec_tile_shapes(4, H)
        inv = pypto.rsqrt(pypto.sum(xt * xt, -1, keepdim=True) * (1.0 / H) + 1e-6)
        xn = pypto.cast(xt * inv * gamma, pypto.DT_BF16)
        pypto.set_cube_tile_shapes([16, 16], [128, 512], [256, 256])  # SIM: k [256, 512] -> [128, 512] (L0B 131072 > 65536)
        z = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(4, NHEAD, HD)
        z3 = pypto.reshape(z, [tile, NHEAD, HD])
        zn = pypto.rms_norm(z3, None, 1e-6) * hg
        keep = pypto.view(zn, [tile, NHEAD, ROT], [0, 0, 0])
        x1 = pypto.view(zn, [tile, NHEAD, HALF], [0, 0, ROT])
        x2 = pypto.view(zn, [tile, NHEAD, HALF], [0, 0, ROT + HALF])
        c = pypto.unsqueeze(pypto.view(cos, [tile, HALF], [t0, 0]), 1)
        s = pypto.unsqueeze(pypto.view(sin, [tile, HALF], [t0, 0]), 1)
        o1 = x1 * c - x2 * s
        o2 = x2 * c + x1 * s
        y3 = pypto.concat([keep, o1, o2], -1)
        pypto.set_vec_tile_shapes(4, N)
        y = pypto.cast(pypto.reshape(y3, [tile, N]), pypto.DT_BF16)
        pypto.assemble(y, [t0, 0], out)


def make_case(Tn):
    rng = np.random.default_rng(160 + Tn)
    x = rng.standard_normal((Tn, H)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, (1, H)).astype(np.float32)
    w = bf16_round(rng.standard_normal((N, H)) * 0.02)
    hg = rng.uniform(0.5, 1.5, HD).astype(np.float32)
    ang = rng.uniform(0, 2 * np.pi, (Tn, HALF))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    x64 = x.astype(np.float64)
    xn = bf16_round(x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * g)
    z = (xn.astype(np.float64) @ w.astype(np.float64).T).reshape(Tn, NHEAD, HD)
    zn = z / np.sqrt((z * z).mean(-1, keepdims=True) + 1e-6) * hg
    c, s = cos[:, None, :].astype(np.float64), sin[:, None, :].astype(np.float64)
    x1, x2 = zn[..., ROT:ROT + HALF], zn[..., ROT + HALF:]
    y3 = np.concatenate([zn[..., :ROT], x1 * c - x2 * s, x2 * c + x1 * s], -1)
    ref = bf16_round(y3.reshape(Tn, N))
    ins = [(x, "fp32"), (g, "fp32"), (w, "bf16"), (hg, "fp32"), (cos, "fp32"), (sin, "fp32")]
    return ins, [((Tn, N), "bf16")], [ref], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("c110", k160, make_case)
