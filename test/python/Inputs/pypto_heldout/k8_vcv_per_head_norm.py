"""SK-03 V -> C -> V with a post-processing V stage: pre-RMSNorm (pypto.rms_norm on the bf16 tile,
bf16 gamma passed directly) -> matmul (b_trans) -> reshape to [tile * H, D] (in place) ->
per-head RMSNorm over D with gamma_head -> reshape back -> bf16 -> assemble.
Loop written as pypto.loop(0, T, TILE) over row offsets with valid_shape tails.
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 512
H = 8
D = 64
N = H * D
TILE = 16
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def proj_head_norm(
    x: pypto.Tensor([T, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    gamma_head: pypto.Tensor([D], pypto.DT_FP32),
    out: pypto.Tensor([T, N], pypto.DT_BF16),
):
    t = x.shape[0]
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for off in pypto.loop(0, t, TILE, name="TOK_LOOP", idx_name="off"):
        rows = pypto.min(TILE, t - off)
        x_tile = pypto.view(x, [TILE, K], [off, 0], valid_shape=[rows, K])

        pypto.set_semantic_label("pre-rmsnorm")
        pypto.set_vec_tile_shapes(4, K)
        xn = pypto.rms_norm(x_tile, gamma, EPS)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([16, 16], [128, 512], [128, 256])
        q = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("per-head-rmsnorm")
        pypto.set_vec_tile_shapes(2 * H, D)
        q_heads = pypto.reshape(q, [TILE * H, D], inplace=True)
        qn = pypto.rms_norm(q_heads, gamma_head, EPS)
        q2 = pypto.reshape(qn, [TILE, N], inplace=True)
        pypto.set_vec_tile_shapes(4, N)
        pypto.assemble(pypto.cast(q2, pypto.DT_BF16), [off, 0], out)


def golden(x, gamma, w, gamma_head):
    import numpy as np

    xf = x.astype(np.float32)
    xn = xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float32)
    xn = xn.astype(x.dtype).astype(np.float32)
    q = (xn @ w.astype(np.float32).T).reshape(x.shape[0], H, D)
    qn = q / np.sqrt(np.mean(q * q, -1, keepdims=True) + EPS) * gamma_head
    return qn.reshape(x.shape[0], N)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([35, 16, 2] if os.environ.get("PTO") == "1" else [35])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(8)
        gamma = rng.uniform(0.5, 1.5, K).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((N, K)) * 0.05).astype(ml_dtypes.bfloat16)
        gamma_head = rng.uniform(0.5, 1.5, D).astype(np.float32)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, K)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), dtype=ml_dtypes.bfloat16)
            proj_head_norm(x, gamma, w, gamma_head, out)
            r = check(out, golden(x, gamma, w, gamma_head))
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(8)
        gamma = (torch.rand(K) + 0.5).to(torch.bfloat16)
        w = (torch.randn(N, K) * 0.05).to(torch.bfloat16)
        gamma_head = torch.rand(D) + 0.5
        for t in counts:
            x = torch.randn(t, K).to(torch.bfloat16)
            out = torch.zeros(t, N, dtype=torch.bfloat16)
            proj_head_norm(x, gamma, w, gamma_head, out)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(out.float()).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
