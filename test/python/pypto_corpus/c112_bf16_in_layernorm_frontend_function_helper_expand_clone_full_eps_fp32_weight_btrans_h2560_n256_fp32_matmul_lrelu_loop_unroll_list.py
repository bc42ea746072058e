"""c112 (outside batch corpus18, k162) (fresh): bf16 input, LayerNorm in an `@pypto.frontend.function` helper, fp32 matmul, V->C->V.

* `NT = pypto.frontend.dynamic("num_tokens")`, tuple annotations `pypto.Tensor((NT, H), pypto.DT_BF16)`
* helper `layer_norm(xf, g, b, rows)` marked `@pypto.frontend.function`: mean `pypto.sum(xf, -1, keepdim=True) / H`,
  `xc = xf - mean`, `var = pypto.sum(xc * xc, -1, keepdim=True) * (1.0 / H)`, `pypto.add(var, pypto.full([TILE, 1],
  1e-5, FP32, valid_shape=[rows, 1]))`, `pypto.sqrt`, `xc / std`, gamma/beta `expand_clone`d to [TILE, H] before
  the loop; fp32 out
* fp32 @ fp32 w [256, 2560] (`b_trans=True`, fp32 out), + bias [1, N] fp32, `pypto.lrelu(z, 0.1)` -> fp32
* `pypto.loop(n_tiles, name=..., idx_name=..., unroll_list=[2, 1])` with `n_tiles = (NT + 7) // 8`, valid rows
  `pypto.min(8, NT - i * 8)`; output `pypto.assemble`
"""
import numpy as np

from batch_harness import PTO, bf16_round, pypto, run

H, N, TILE = 2560, 256, 8
NT = pypto.frontend.dynamic("num_tokens")
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.function
def layer_norm(xf, g, b, rows, dst):  # SIM: a parameter named `out` (the kernel has an `out`) -> F21005 "mix assemble and common operation for same output"
    mean = pypto.sum(xf, -1, keepdim=True) / H
    xc = xf - mean
    var = pypto.sum(xc * xc, -1, keepdim=True) * (1.0 / H)
    std = pypto.sqrt(pypto.add(var, pypto.full([TILE, 1], 1e-5, pypto.DT_FP32, valid_shape=[rows, 1])))
    dst.move(xc / std * g + b)  # SIM: `return` -> "Return statements are not allowed. Use an out parameter"


@pypto.frontend.jit(runtime_options=_RT)
def k162(
    x: pypto.Tensor((NT, H), pypto.DT_BF16),
    gamma: pypto.Tensor((1, H), pypto.DT_FP32),
    beta: pypto.Tensor((1, H), pypto.DT_FP32),
    w: pypto.Tensor((N, H), pypto.DT_FP32),
    bias: pypto.Tensor((1, N), pypto.DT_FP32),
    out: pypto.Tensor((NT, N), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TILE, 512)
    g = pypto.expand_clone(gamma, [TILE, H])
    b = pypto.expand_clone(beta, [TILE, H])
    n_tiles = (x.shape[0] + TILE - 1) // TILE
    for i in pypto.loop(n_tiles, name="LN_FP32", idx_name="i", unroll_list=[2, 1]):
        rows = pypto.min(TILE, x.shape[0] - i * TILE)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[rows, H])
        pypto.set_vec_tile_shapes(TILE, 512)
        xn = pypto.tensor([TILE, H], pypto.DT_FP32, "xn")
        layer_norm(pypto.cast(xt, pypto.DT_FP32), g, b, rows, xn)
        pypto.set_cube_tile_shapes([16, 16], [128, 256], [128, 128])
        z = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(TILE, N)
        # SIM: pypto.lrelu(z + bias, 0.1) -> F92001 "No pipe type corresponding to opcode is found. opcode=LReLU"
        zb = z + bias
        y = pypto.maximum(zb, zb * 0.1)
        pypto.assemble(y, [i * TILE, 0], out)


def make_case(Tn):
    rng = np.random.default_rng(162 + Tn)
    x = bf16_round(rng.standard_normal((Tn, H)) * 1.5 - 0.3)
    g = rng.uniform(0.5, 1.5, (1, H)).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, (1, H)).astype(np.float32)
    w = (rng.standard_normal((N, H)) * 0.02).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, (1, N)).astype(np.float32)
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    xc = x64 - mu
    xn = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * g + b
    z = xn @ w.astype(np.float64).T + bias
    ref = np.where(z > 0, z, 0.1 * z)
    ins = [(x, "bf16"), (g, "fp32"), (b, "fp32"), (w, "fp32"), (bias, "fp32")]
    return ins, [((Tn, N), "fp32")], [ref], [(1e-3, 1e-3)], []


if __name__ == "__main__":
    run("c112", k162, make_case)
