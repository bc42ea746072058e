"""c106 (outside batch corpus18, k156) (fresh): bf16 V->C->V with the API names an author reaches for first.

* `T = pypto.frontend.dynamic("T")` and `pypto.Tensor[[T, H], pypto.DT_BF16]` subscript annotations
* RMSNorm by the builtin `pypto.rms_norm(x, gamma, 1e-6)` with a rank-1 bf16 gamma [4096]
* the matmul as the `@` operator (`xn @ w`, bf16 [K, N] weight, so a bf16 result)
* SiLU with Tensor methods `z * z.sigmoid()`
* tile count by symbolic arithmetic `(T + 15) // 16`, rows by `pypto.min(T - i * 16, 16)`, output via `out[...] = y`
  (setitem with a symbolic start and a Python-int width)
"""
import numpy as np

from batch_harness import PTO, bf16_round, pypto, run

H, N, TILE = 4096, 2048, 16
T = pypto.frontend.dynamic("T")
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(runtime_options=_RT)
def k156(
    x: pypto.Tensor[[T, H], pypto.DT_BF16],
    gamma: pypto.Tensor[[H], pypto.DT_BF16],
    w: pypto.Tensor[[H, N], pypto.DT_BF16],
    out: pypto.Tensor[[T, N], pypto.DT_BF16],
):
    n_tiles = (x.shape[0] + TILE - 1) // TILE
    for i in pypto.loop(n_tiles, name="TOK", idx_name="i"):
        rows = pypto.min(x.shape[0] - i * TILE, TILE)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[rows, H])
        pypto.set_vec_tile_shapes(4, H)
        xn = pypto.rms_norm(xt, gamma, 1e-6)
        pypto.set_cube_tile_shapes([16, 16], [128, 512], [256, 256])  # SIM: k [256, 512] -> [128, 512]
        z = xn @ w
        pypto.set_vec_tile_shapes(16, 512)
        zf = pypto.cast(z, pypto.DT_FP32)
        y = pypto.cast(zf * zf.sigmoid(), pypto.DT_BF16)
        out[i * TILE:i * TILE + TILE, :] = y


def make_case(Tn):
    rng = np.random.default_rng(156 + Tn)
    x = bf16_round(rng.standard_normal((Tn, H)))
    g = bf16_round(rng.uniform(0.5, 1.5, H))
    w = bf16_round(rng.standard_normal((H, N)) * 0.02)
    x64 = x.astype(np.float64)
    xn = bf16_round(x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * g)
    z = bf16_round(xn.astype(np.float64) @ w.astype(np.float64)).astype(np.float64)
    ref = bf16_round(z / (1 + np.exp(-z)))
    return [(x, "bf16"), (g, "bf16"), (w, "bf16")], [((Tn, N), "bf16")], [ref], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("c106", k156, make_case)
