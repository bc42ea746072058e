"""c108 (outside batch corpus18, k158) (fresh): W8A8 bf16 V->C->V, quant written in another algebraically equivalent form.

* RMSNorm primitives with the `**` operator: `ms = pypto.sum(xf ** 2, -1, keepdim=True) / H` (divide by a Python int),
  `xn = xf * (ms + eps).rsqrt() * gamma` (gamma bf16 [H] `unsqueeze(0)`d and cast before the loop) -> bf16
* per-token quant: `amax = pypto.abs(xq).amax(-1, keepdim=True)`, `scale = amax * (1.0 / 127)`,
  `q = pypto.clip(xq * scale.reciprocal(), -127.0, 127.0)`, int8 via `cast(FP32->INT32, CAST_ROUND)` -> FP16 -> INT8
* `q_i8 @ w` (the operator; int8 [K, N] weight [7168, 1536] -> int32)
* dequant `acc * scale * w_scale` (fp32 [1, N]) -> SwiGLU on `view`s of the two halves: `g * g.sigmoid() * u` -> bf16
  [T, 768]
* `pypto.loop_unroll(0, T, 1, unroll_list=[32, 8, 1])`, `x.view(...)`, `pypto.assemble`
Golden: the codes follow the written fp32 order (s = fl(amax * fl(1/127)), r = fl(1/s), fl(x * r), clip, round half
away from zero).
"""
import numpy as np

from batch_harness import PTO, bf16_round, pypto, run

H, N = 7168, 1536
NH = N // 2
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(runtime_options=_RT)
def k158(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_BF16),
    w: pypto.Tensor([H, N], pypto.DT_INT8),
    w_scale: pypto.Tensor([1, N], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, NH], pypto.DT_BF16),
):
    pypto.set_vec_tile_shapes(1, 1024)
    g = pypto.cast(gamma.unsqueeze(0), pypto.DT_FP32)
    for t0, tile in pypto.loop_unroll(0, x.shape[0], 1, name="W8A8", idx_name="t0", unroll_list=[32, 8, 1]):
        xt = x.view([tile, H], [t0, 0])
        pypto.set_vec_tile_shapes(4, 1024)
        xf = pypto.cast(xt, pypto.DT_FP32)
        ms = pypto.sum(xf ** 2, -1, keepdim=True) / H
        xn = pypto.cast(xf * (ms + 1e-6).rsqrt() * g, pypto.DT_BF16)
        xq = pypto.cast(xn, pypto.DT_FP32)
        amax = pypto.abs(xq).amax(-1, keepdim=True)
        scale = amax * (1.0 / 127)
        q = pypto.clip(xq * scale.reciprocal(), -127.0, 127.0)
        q_i32 = pypto.cast(q, pypto.DT_INT32, pypto.CastMode.CAST_ROUND)
        q_i8 = pypto.cast(pypto.cast(q_i32, pypto.DT_FP16), pypto.DT_INT8, pypto.CastMode.CAST_TRUNC)
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [256, 256])  # SIM: k [512, 1024] -> [256, 1024] (L0B)
        acc = q_i8 @ w
        pypto.set_vec_tile_shapes(8, 768)
        deq = pypto.cast(acc, pypto.DT_FP32) * scale * w_scale
        gate = pypto.view(deq, [tile, NH], [0, 0])
        up = pypto.view(deq, [tile, NH], [0, NH])
        y = pypto.cast(gate * gate.sigmoid() * up, pypto.DT_BF16)
        pypto.assemble(y, [t0, 0], out)


def make_case(Tn):
    rng = np.random.default_rng(158 + Tn)
    x = bf16_round(rng.standard_normal((Tn, H)))
    g = bf16_round(rng.uniform(0.5, 1.5, H))
    w = rng.integers(-127, 128, size=(H, N)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, (1, N)) / 127 / 64).astype(np.float32)
    x64 = x.astype(np.float64)
    xn = bf16_round(x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * g)
    f = np.float32
    amax = np.abs(xn).max(-1, keepdims=True).astype(f)
    s = (amax * f(f(1.0) / f(127))).astype(f)
    r = (f(1.0) / s).astype(f)
    v = np.clip((xn.astype(f) * r).astype(f), -127, 127)
    codes = (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)
    acc = (codes.astype(np.float64) @ w.astype(np.float64)).astype(np.int64)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    deq = acc.astype(np.float64) * s.astype(np.float64) * ws.astype(np.float64)
    ga, up = deq[:, :NH], deq[:, NH:]
    ref = bf16_round(ga / (1 + np.exp(-ga)) * up)
    return [(x, "bf16"), (g, "bf16"), (w, "int8"), (ws, "fp32")], [((Tn, NH), "bf16")], [ref], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("c108", k158, make_case)
