import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# The "out-of-the-box" tuned SK-03: every knob of the DeepSeek-V4 kernels at once.
# Unroll [128, 64, 32, 16, 8, 1], NONE_CACHEABLE weight read once per iteration, per-stage labels,
# stitch_function_max_num / device_sched_mode, vec tile (16, 512).
HIDDEN = 4096
OUT_DIM = 2048
EPS = 1e-6
UNROLL_LIST = [128, 64, 32, 16, 8, 1]
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 32, "device_sched_mode": 1},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2},
                  "cube_nbuffer_setting": {-1: 1}},
)
def tuned_linear(hidden_states: pypto.Tensor([T, HIDDEN], pypto.DT_BF16),
                 rms_weight: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                 proj_weight: pypto.Tensor([OUT_DIM, HIDDEN], pypto.DT_BF16),
                 output: pypto.Tensor([T, OUT_DIM], pypto.DT_BF16)):
    proj_weight.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(1, 512)
    rms_w2 = pypto.reshape(rms_weight, [1, HIDDEN])
    rms_w2 = pypto.cast(rms_w2, pypto.DT_FP32)
    tokens = hidden_states.shape[0]
    for tok, unroll in pypto.loop_unroll(0, tokens, 1, name="TOK", idx_name="tok", unroll_list=UNROLL_LIST):
        pypto.set_semantic_label("Pre-RMSNorm")
        pypto.set_vec_tile_shapes(16, 512)
        hs = pypto.view(hidden_states, [unroll, HIDDEN], [tok, 0], valid_shape=[unroll, HIDDEN])
        hs32 = pypto.cast(hs, pypto.DT_FP32)
        variance = pypto.mul(pypto.sum(pypto.mul(hs32, hs32), -1, keepdim=True), 1.0 / HIDDEN)
        hs32 = pypto.mul(hs32, pypto.rsqrt(pypto.add(variance, EPS)))
        normed = pypto.cast(pypto.mul(hs32, rms_w2), pypto.DT_BF16)
        pypto.set_semantic_label("Linear")
        if unroll >= 64:
            pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 256])
        else:
            pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        projected = pypto.matmul(normed, proj_weight, pypto.DT_BF16, b_trans=True)
        pypto.assemble(projected, [tok, 0], output)


def golden(hidden_states, rms_weight, proj_weight):
    import numpy as np, ml_dtypes
    h = hidden_states.astype(np.float32)
    h = h * (1.0 / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + EPS))
    n = (h * rms_weight.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    return (n @ proj_weight.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(16)
        rw = rng.uniform(0.5, 1.5, HIDDEN).astype(ml_dtypes.bfloat16)
        pw = (rng.standard_normal((OUT_DIM, HIDDEN)) * 0.015).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            hs = rng.standard_normal((t, HIDDEN)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, OUT_DIM), ml_dtypes.bfloat16)
            tuned_linear(hs, rw, pw, out)
            r = check(out, golden(hs, rw, pw))
            print(t, r.describe("output"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            tuned_linear(torch.randn(t, HIDDEN).bfloat16(), torch.ones(HIDDEN).bfloat16(),
                         (torch.randn(OUT_DIM, HIDDEN) * 0.015).bfloat16(), torch.zeros(t, OUT_DIM).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
