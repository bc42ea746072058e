"""c129 (outside batch corpus21, k185): RMSNorm -> fused gate/up MatMul -> SwiGLU (V->C->V), fp16 end to end.

x [T, 1024] fp16, gamma [1024] fp16, w_gu [1024, 2*1408] fp16 in [K, N] layout (gate columns
first, then up columns), out [T, 1408] fp16 = silu(gate) * up.
Style: small helper functions, Tensor methods (.sum/.sigmoid/.mul), column slicing h[:, a:b],
loop_unroll with [32, 8] (1 appended), fp16 intermediate before the cube.
"""
import numpy as np
from batch_harness import pypto, run, fp16_round

D = 1024
I = 1408


def _rmsnorm_fp16(x16, g_row, eps):
    xf = pypto.cast(x16, pypto.DT_FP32)
    var = (xf * xf).sum(-1, keepdim=True) / float(D)
    y = xf / pypto.sqrt(var + eps)
    return pypto.cast(y.mul(g_row), pypto.DT_FP16)


def _swiglu(h):
    gate = h[:, :I]
    up = h[:, I:]
    return gate * gate.sigmoid() * up


@pypto.frontend.jit(runtime_options={"device_sched_mode": 1})
def k185_fp16_swiglu_proj(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
    gamma: pypto.Tensor([D], pypto.DT_FP16),
    w_gu: pypto.Tensor([D, 2 * I], pypto.DT_FP16),
    out: pypto.Tensor([pypto.DYNAMIC, I], pypto.DT_FP16),
):
    eps = 1e-5
    tokens = x.shape[0]
    pypto.set_vec_tile_shapes(1, D)
    g_row = pypto.cast(pypto.reshape(gamma, [1, D]), pypto.DT_FP32)

    for t0, tt in pypto.loop_unroll(0, tokens, 1, name="swiglu_loop", idx_name="t0", unroll_list=[32, 8]):
        pypto.set_vec_tile_shapes(8, D)
        xn = _rmsnorm_fp16(x[t0:t0 + tt, :], g_row, eps)

        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 256])
        h = pypto.matmul(xn, w_gu, pypto.DT_FP32)

        pypto.set_vec_tile_shapes(8, 704)
        y = _swiglu(h)
        out[t0:t0 + tt, :] = pypto.cast(y, pypto.DT_FP16)


def make_case(T):
    rng = np.random.default_rng(185 + T)
    x = fp16_round(rng.standard_normal((T, D)).astype(np.float32))
    g = fp16_round((1.0 + 0.1 * rng.standard_normal(D)).astype(np.float32))
    w = fp16_round((1.3 * rng.standard_normal((D, 2 * I)) / np.sqrt(D)).astype(np.float32))
    var = (x * x).sum(-1, keepdims=True, dtype=np.float32) / np.float32(D)
    xn = fp16_round((x / np.sqrt(var + np.float32(1e-5))) * g)
    h = (xn.astype(np.float64) @ w.astype(np.float64))
    gt, up = h[:, :I], h[:, I:]
    y = gt / (1.0 + np.exp(-gt)) * up
    ref = fp16_round(y.astype(np.float32))
    return ([(x, "fp16"), (g, "fp16"), (w, "fp16")], [((T, I), "fp16")], [ref],
            [(1e-4, 2e-3)], [])


if __name__ == "__main__":
    run("k185_fp16_swiglu_proj", k185_fp16_swiglu_proj, make_case)
