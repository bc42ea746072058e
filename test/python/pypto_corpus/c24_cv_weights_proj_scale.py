import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# lightning_indexer "Weight-Compute" branch: no pre-norm; x @ weights_proj^T ([64, 7168], b_trans)
# then a constant softmax scale 1/sqrt(n_heads * head_dim) -> fp32 per-head weights.
H = 7168
NH = 64
HEAD_DIM = 128
SCALE = (NH * HEAD_DIM) ** -0.5
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def weights_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
                 w_proj: pypto.Tensor([NH, H], pypto.DT_BF16),
                 weights: pypto.Tensor([T, NH], pypto.DT_FP32)):
    for t0, tt in pypto.loop_unroll(0, x.shape[0], 1, name="W_LOOP", idx_name="t0", unroll_list=[64, 16, 1]):
        pypto.set_semantic_label("Weight-Linear")
        pypto.set_cube_tile_shapes([16, 64], [512, 1024], [64, 64])
        wv = pypto.matmul(pypto.view(x, [tt, H], [t0, 0], valid_shape=[tt, H]), w_proj, pypto.DT_FP32, b_trans=True)
        pypto.set_semantic_label("Weight-Compute")
        pypto.set_vec_tile_shapes(16, NH)
        pypto.assemble(pypto.mul(wv, SCALE), [t0, 0], weights)


def golden(x, w_proj):
    import numpy as np
    return (x.astype(np.float32) @ w_proj.astype(np.float32).T * np.float32(SCALE)).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(24)
        w = (rng.standard_normal((NH, H)) * 0.02).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, NH), np.float32)
            weights_proj(x, w, out)
            r = check(out, golden(x, w))
            print(t, r.describe("weights"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            weights_proj(torch.randn(t, H).bfloat16(), (torch.randn(NH, H) * 0.02).bfloat16(), torch.zeros(t, NH))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
