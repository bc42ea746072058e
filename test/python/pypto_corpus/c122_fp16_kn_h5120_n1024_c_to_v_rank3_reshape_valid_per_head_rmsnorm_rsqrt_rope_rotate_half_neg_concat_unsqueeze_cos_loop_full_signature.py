"""c122 (outside batch corpus19, k172) (fresh, tutorial style): fp16, h 5120, N 1024 = 8 heads x 128, fp16 weight [K,N]; C->V.
* Loop with the full signature from docs/zh/tutorials/development/loops.md:
  `pypto.loop(0, b_loop, 1, name="LOOP_ROPE", idx_name="b_idx", submit_before_loop=False)`.
* Helpers that return tensors (tensor_operation.md's `softmax_core` style): `per_head_rms_norm` (sum of squares
  / d, `pypto.rsqrt`, * gamma) and `rotate_half` (two pypto.view halves, `pypto.neg`, `pypto.concat`).
* `pypto.reshape(z, [16, 8, 128], valid_shape=[valid, 8, 128])` and back; cos/sin [T,128] fp32 views
  `pypto.unsqueeze(.., 1)` to [16, 1, 128]; head gamma given as [1, 8, 128] fp32.
C->V: fp16 x [T,5120] @ fp16 w [5120,1024] (fp32) -> [t,8,128] -> per-head RMSNorm * gamma -> RoPE
x*cos + rotate_half(x)*sin -> [t,1024] -> fp16.
"""
import numpy as np
from batch_harness import pypto, run, PTO, fp16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, HEADS, D = 5120, 8, 128
N = HEADS * D
TILE = 16


def per_head_rms_norm(x: pypto.Tensor, gamma: pypto.Tensor, eps: float) -> pypto.Tensor:
    squared = x * x
    mean_sq = pypto.sum(squared, dim=-1, keepdim=True) / D
    return x * pypto.rsqrt(mean_sq + eps) * gamma


def rotate_half(x: pypto.Tensor) -> pypto.Tensor:
    t, h, d = x.shape
    x1 = pypto.view(x, [t, h, d // 2], [0, 0, 0])
    x2 = pypto.view(x, [t, h, d // 2], [0, 0, d // 2])
    return pypto.concat([pypto.neg(x2), x1], -1)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def qk_norm_rope_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    weight: pypto.Tensor([H, N], pypto.DT_FP16),
    head_gamma: pypto.Tensor([1, HEADS, D], pypto.DT_FP32),
    cos: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    sin: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    output: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    bs = x.shape[0]
    b_loop = (bs + TILE - 1) // TILE
    pypto.set_cube_tile_shapes([16, 16], [128, 512], [128, 256])
    for b_idx in pypto.loop(0, b_loop, 1, name="LOOP_ROPE", idx_name="b_idx", submit_before_loop=False):
        b_offset = b_idx * TILE
        valid = (bs - b_offset).min(TILE)
        x_view = pypto.view(x, [TILE, H], [b_offset, 0], valid_shape=[valid, H])
        z = pypto.matmul(x_view, weight, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(4, HEADS, D)
        z3 = pypto.reshape(z, [TILE, HEADS, D], valid_shape=[valid, HEADS, D])
        zn = per_head_rms_norm(z3, head_gamma, 1e-6)
        cos_v = pypto.unsqueeze(pypto.view(cos, [TILE, D], [b_offset, 0], valid_shape=[valid, D]), 1)
        sin_v = pypto.unsqueeze(pypto.view(sin, [TILE, D], [b_offset, 0], valid_shape=[valid, D]), 1)
        roped = zn * cos_v + rotate_half(zn) * sin_v
        y = pypto.reshape(roped, [TILE, N], valid_shape=[valid, N])
        pypto.set_vec_tile_shapes(TILE, 512)
        pypto.assemble(pypto.cast(y, pypto.DT_FP16), [b_offset, 0], output)


def make_case(T):
    rng = np.random.default_rng(172 + T)
    x = fp16_round(rng.standard_normal((T, H)))
    w = fp16_round(rng.standard_normal((H, N)) / np.sqrt(H))
    g = (1.0 + 0.1 * rng.standard_normal((1, 1, D))).repeat(HEADS, 1).astype(np.float32)
    pos = np.arange(T)[:, None] + 3
    inv = 10000.0 ** (-np.arange(D // 2) / (D // 2))
    ang = np.concatenate([pos * inv, pos * inv], -1)
    c, s = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    z = (x.astype(np.float64) @ w.astype(np.float64)).reshape(T, HEADS, D)
    zn = z / np.sqrt((z * z).mean(-1, keepdims=True) + 1e-6) * g
    rh = np.concatenate([-zn[..., D // 2:], zn[..., :D // 2]], -1)
    ro = zn * c[:, None, :] + rh * s[:, None, :]
    ref = fp16_round(ro.reshape(T, N))
    return ([(x, "fp16"), (w, "fp16"), (g, "fp32"), (c, "fp32"), (s, "fp32")], [((T, N), "fp16")], [ref],
            [(5e-3, 5e-3)], [])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c122", qk_norm_rope_kernel, make_case, call=call)
