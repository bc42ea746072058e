"""c142 (outside batch corpus22, k201): PyPTO's "manual split-K" projection from the Matmul performance guide (C -> V accumulate).

Follows hicann/pypto docs/zh/tutorials/debug/matmul_performance_guide.md (HEAD, section "K轴分核 / 手动构图方式")
verbatim: @pypto.frontend.jit without arguments, pypto.Tensor([], dtype) annotations, cube tiles
[128,128],[64,256],[256,256], set_vec_tile_shapes(32, 256) for the adds, a Python for over K chunks of
k_view_size with tensor slicing a[:, k0:k1] / b[k0:k1, :], one fp32 matmul per chunk collected in a list,
`partial_sum[0] += partial_sum[i]` (in-place tensor add), `out[:] = partial_sum[0]`.
This is the guide's case for "M, N small, K large": M = tokens (1, 37, 200), K = 4096 split into 4 chunks
of 1024, N = 512; fp16 in, fp32 out.  No token loop (the snippet has none).
"""
import numpy as np

from batch_harness import pypto, run, fp16_round

k_size = 4096
k_view_size = 1024
n_size = 512


@pypto.frontend.jit
def matmul_demo_kernel(
    a: pypto.Tensor([], pypto.DT_FP16),
    b: pypto.Tensor([], pypto.DT_FP16),
    out: pypto.Tensor([], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
    pypto.set_vec_tile_shapes(32, 256)  # 配置add切分大小

    partial_sum = []
    k_loop = (k_size + k_view_size - 1) // k_view_size  # 配置单核累加长度
    for k_idx in range(k_loop):
        a_view = a[:, k_idx * k_view_size: k_idx * k_view_size + k_view_size]
        b_view = b[k_idx * k_view_size: k_idx * k_view_size + k_view_size, :]
        res = pypto.matmul(a_view, b_view, pypto.DT_FP32)
        partial_sum.append(res)

    for i in range(1, len(partial_sum)):
        partial_sum[0] += partial_sum[i]

    out[:] = partial_sum[0]


f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(201 + T)
    a = fp16_round(rng.standard_normal((T, k_size)))
    b = fp16_round(rng.standard_normal((k_size, n_size)) / np.sqrt(k_size))
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(f32)
    return [(a, "fp16"), (b, "fp16")], [((T, n_size), "fp32")], [ref], [(1e-4, 1e-3)], []


if __name__ == "__main__":
    run("k201_manual_splitk_doc", matmul_demo_kernel, make_case)
