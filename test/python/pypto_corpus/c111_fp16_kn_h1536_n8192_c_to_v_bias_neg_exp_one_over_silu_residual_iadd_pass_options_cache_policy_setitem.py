"""c111 (outside batch corpus18, k161) (fresh): fp16 C->V with operator-style post-ops.

* `pypto.Tensor[[pypto.DYNAMIC, H], pypto.DT_FP16]` annotations; `x.view([tile, H], [t0, 0])` (the method)
* `x_t @ w` (fp16 [K, N] weight [1536, 8192]; `@` gives an fp16 result), then fp32
* `z += bias` (in-place operator), SiLU written `z * (1.0 / (1.0 + (-z).exp()))` (unary minus, Tensor.exp, a Python
  float over a tensor), `+ residual` (fp16 [T, N]), fp16 out written by `out[t0:t0 + tile, :] = y`
* jit pass_options `cube_l1_reuse_setting {-1: 4}`, `vec_nbuffer_setting {-1: 2}`; `w.set_cache_policy(
  pypto.CachePolicy.NONE_CACHEABLE, True)`; `set_semantic_label`
* `pypto.loop_unroll(0, T, 1, unroll_list=[16, 4, 1])`
"""
import numpy as np

from batch_harness import PTO, fp16_round, pypto, run

H, N = 1536, 8192
_RT = {"run_mode": pypto.RunMode.SIM} if not PTO else {}


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 4}, "vec_nbuffer_setting": {-1: 2}},
    runtime_options=_RT,
)
def k161(
    x: pypto.Tensor[[pypto.DYNAMIC, H], pypto.DT_FP16],
    w: pypto.Tensor[[H, N], pypto.DT_FP16],
    bias: pypto.Tensor[[1, N], pypto.DT_FP16],
    residual: pypto.Tensor[[pypto.DYNAMIC, N], pypto.DT_FP16],
    out: pypto.Tensor[[pypto.DYNAMIC, N], pypto.DT_FP16],
):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(1, 2048)
    b = pypto.cast(bias, pypto.DT_FP32)
    for t0, tile in pypto.loop_unroll(0, x.shape[0], 1, name="UP", idx_name="t0", unroll_list=[16, 4, 1]):
        x_t = x.view([tile, H], [t0, 0])
        pypto.set_semantic_label("up-linear")
        pypto.set_cube_tile_shapes([16, 16], [128, 512], [256, 256])  # SIM: k [256, 512] -> [128, 512]
        zh = x_t @ w
        pypto.set_semantic_label("bias-silu-residual")
        pypto.set_vec_tile_shapes(4, 2048)
        z = pypto.cast(zh, pypto.DT_FP32)
        z += b
        y = z * (1.0 / (1.0 + (-z).exp()))
        r = pypto.cast(residual.view([tile, N], [t0, 0]), pypto.DT_FP32)
        out[t0:t0 + tile, :] = pypto.cast(y + r, pypto.DT_FP16)


def make_case(Tn):
    rng = np.random.default_rng(161 + Tn)
    x = fp16_round(rng.standard_normal((Tn, H)))
    w = fp16_round(rng.standard_normal((H, N)) * 0.03)
    b = fp16_round(rng.uniform(-0.5, 0.5, (1, N)))
    res = fp16_round(rng.standard_normal((Tn, N)))
    z = fp16_round(x.astype(np.float64) @ w.astype(np.float64)).astype(np.float64) + b
    ref = fp16_round(z / (1 + np.exp(-z)) + res)
    ins = [(x, "fp16"), (w, "fp16"), (b, "fp16"), (res, "fp16")]
    return ins, [((Tn, N), "fp16")], [ref], [(5e-3, 5e-3)], []


if __name__ == "__main__":
    run("c111", k161, make_case)
