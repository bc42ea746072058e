"""c109 (outside batch corpus18, k159) (fresh): W8A16 fp16 V->C->V with the weight dequantised (cast and scaled) before the token loop.

* int8 w [4096, 1024] ([N, K]) -> `pypto.cast(w, FP16) * w_scale` (fp16 [N, 1] per output channel) once, before the
  loop; then `pypto.matmul(xn, w16, FP32, b_trans=True)`
* RMSNorm: `((xf * xf).sum(-1, keepdim=True) * (1.0 / H) + eps).rsqrt()` (Tensor methods), gamma fp16 [H]
  `pypto.unsqueeze(gamma, 0)`
* + fp16 bias [N] (unsqueezed), GELU tanh form through sigmoid: `z * pypto.sigmoid(1.5957691 * (z + 0.044715 *
  z ** 3))` -> fp16
* `pypto.loop(0, n_tiles, 1, ...)` (start/stop/step) with `n_tiles = pypto.ceildiv(T, 32)`, rows
  `(T - i * 32).min(32)`, output by `pypto.assemble`
"""
import numpy as np

from batch_harness import PTO, fp16_round, pypto, run

H, N, TILE = 1024, 4096, 32
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(runtime_options=_RT)
def k159(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    w: pypto.Tensor([N, H], pypto.DT_INT8),
    w_scale: pypto.Tensor([N, 1], pypto.DT_FP16),
    bias: pypto.Tensor([N], pypto.DT_FP16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(16, H)  # SIM: (64, H) -> (16, H)
    w16 = pypto.cast(w, pypto.DT_FP16) * w_scale
    pypto.set_vec_tile_shapes(1, H)
    g = pypto.cast(pypto.unsqueeze(gamma, 0), pypto.DT_FP32)
    pypto.set_vec_tile_shapes(1, 1024)
    b = pypto.cast(pypto.unsqueeze(bias, 0), pypto.DT_FP32)
    n_tiles = pypto.ceildiv(t, TILE)
    for i in pypto.loop(0, n_tiles, 1, name="W8A16", idx_name="i"):
        rows = (t - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[rows, H])
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(xt, pypto.DT_FP32)
        inv = ((xf * xf).sum(-1, keepdim=True) * (1.0 / H) + 1e-6).rsqrt()
        xn = pypto.cast(xf * inv * g, pypto.DT_FP16)
        pypto.set_cube_tile_shapes([32, 32], [128, 512], [256, 256])  # SIM: k [256, 512] -> [128, 512]
        z = pypto.matmul(xn, w16, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(8, 1024)
        z = z + b
        y = z * pypto.sigmoid(1.5957691 * (z + 0.044715 * z ** 3))
        pypto.assemble(pypto.cast(y, pypto.DT_FP16), [i * TILE, 0], out)


def make_case(Tn):
    rng = np.random.default_rng(159 + Tn)
    x = fp16_round(rng.standard_normal((Tn, H)))
    g = fp16_round(rng.uniform(0.5, 1.5, H))
    w = rng.integers(-127, 128, size=(N, H)).astype(np.int8)
    ws = fp16_round(rng.uniform(0.5, 1.5, (N, 1)) / 127 / 16)
    bias = fp16_round(rng.uniform(-0.5, 0.5, N))
    w16 = fp16_round(w.astype(np.float64) * ws)
    x64 = x.astype(np.float64)
    xn = fp16_round(x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * g)
    z = xn.astype(np.float64) @ w16.astype(np.float64).T + bias
    ref = fp16_round(z / (1 + np.exp(-1.5957691 * (z + 0.044715 * z ** 3))))
    ins = [(x, "fp16"), (g, "fp16"), (w, "int8"), (ws, "fp16"), (bias, "fp16")]
    return ins, [((Tn, N), "fp16")], [ref], [(5e-3, 5e-3)], []


if __name__ == "__main__":
    run("c109", k159, make_case)
