import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen2-style q projection with a bias: RMSNorm -> matmul ([N, K], b_trans) -> + bias (bf16 rank-1,
# cast to fp32 before the loop) -> reshaped to heads and assembled into a 3-D [T, heads, head_dim] output.
H = 2048
HEADS = 16
HD = 128
N = HEADS * HD
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def q_proj_heads(x: pypto.Tensor([T, H], pypto.DT_BF16),
                 ln: pypto.Tensor([H], pypto.DT_BF16),
                 wq: pypto.Tensor([N, H], pypto.DT_BF16),
                 bq: pypto.Tensor([N], pypto.DT_BF16),
                 q: pypto.Tensor([T, HEADS, HD], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(N)
    bias32 = pypto.cast(bq, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(H)
    ln32 = pypto.cast(ln, pypto.DT_FP32)
    for t0, m in pypto.loop_unroll(0, x.shape[0], 1, name="QL", idx_name="t0", unroll_list=[16, 4, 1]):
        pypto.set_semantic_label("input_layernorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [m, H], [t0, 0], valid_shape=[m, H]), pypto.DT_FP32)
        var = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.cast(pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(var, EPS))), ln32), pypto.DT_BF16)
        pypto.set_semantic_label("q_proj")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        qq = pypto.matmul(xn, wq, pypto.DT_FP32, b_trans=True)
        pypto.set_semantic_label("q_bias")
        pypto.set_vec_tile_shapes(4, N)
        qq = pypto.cast(pypto.add(qq, bias32), pypto.DT_BF16)
        pypto.set_vec_tile_shapes(4, HEADS, HD)
        q3 = pypto.reshape(qq, [m, HEADS, HD])
        pypto.assemble(q3, [t0, 0, 0], q)


def golden(x, ln, wq, bq):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf * xf, 1, keepdims=True) + EPS) * ln.astype(np.float32)).astype(bf)
    qq = xn.astype(np.float32) @ wq.astype(np.float32).T + bq.astype(np.float32)
    return qq.astype(bf).reshape(-1, HEADS, HD)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(26)
        ln = rng.uniform(0.5, 1.5, H).astype(bf)
        wq = (rng.standard_normal((N, H)) * 0.02).astype(bf)
        bq = rng.standard_normal(N).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            q = np.zeros((t, HEADS, HD), bf)
            q_proj_heads(x, ln, wq, bq, q)
            r = check(q, golden(x, ln, wq, bq))
            print(t, r.describe("q"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            q_proj_heads(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(), (torch.randn(N, H) * 0.02).bfloat16(),
                         torch.randn(N).bfloat16(), torch.zeros(t, HEADS, HD).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
