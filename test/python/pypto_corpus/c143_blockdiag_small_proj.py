"""c143 (outside batch corpus22, k202): a tiny per-row projection (x [M, 16] @ w [16, 16]) made cube-friendly by a vector-built block-diagonal
weight (V -> C), from PyPTO's performance tuning guide.

Follows hicann/pypto docs/zh/tutorials/debug/performance.md (HEAD, "其他调优方法", matmul_kernel) verbatim:
set_vec_tile_shapes(64, 64); d = pypto.full([16, 16], 0.0, DT_BF16); four pypto.concat along dim 1 and one
along dim 0 build the [64, 64] block-diagonal c = diag(b, b, b, b); a reshaped [M, 16] -> [M/4, 64];
set_pass_options(cube_l1_reuse_setting={"DEFAULT": 9}); set_cube_tile_shapes([512,512],[64,64],[64,64], True);
e = matmul(a, c, DT_BF16); reshape back to [M, 16]; pypto.assemble(e, [0, 0], out).
The guide's shapes are (884736, 16) x (16, 16); here M = 256 * tokens (256, 9472, 51200 rows) and the reshape
sizes are written from a.shape instead of the guide's literals.  Added: the @pypto.frontend.jit decorator and
pypto.Tensor([], DT_BF16) annotations (the guide shows the body only).  PyPTO-forced: {"DEFAULT": 9} -> {-1: 9};
enable_split_k True -> False (bf16 output).
"""
import numpy as np

from batch_harness import pypto, run, bf16_round


@pypto.frontend.jit
def matmul_kernel(
    a: pypto.Tensor([], pypto.DT_BF16),
    b: pypto.Tensor([], pypto.DT_BF16),
    out: pypto.Tensor([], pypto.DT_BF16),
):
    rows = a.shape[0]
    # 构造c
    pypto.set_vec_tile_shapes(64, 64)
    d = pypto.full([16, 16], 0.0, pypto.DT_BF16)
    c1 = pypto.concat([b, d, d, d], 1)
    c2 = pypto.concat([d, b, d, d], 1)
    c3 = pypto.concat([d, d, b, d], 1)
    c4 = pypto.concat([d, d, d, b], 1)
    c = pypto.concat([c1, c2, c3, c4], 0)
    # a变形
    a = pypto.reshape(a, [rows // 4, 64])
    # 矩阵乘
    # guide: cube_l1_reuse_setting={"DEFAULT": 9}; PyPTO 0.2.0 takes int keys only (the string key raises
    # "Unable to cast Python instance of type <class 'dict'> to C++ type"), -1 is its default group
    pypto.set_pass_options(cube_l1_reuse_setting={-1: 9})
    # guide: enable_split_k True; PyPTO 0.2.0 refuses split-K (GM accumulation) with a bf16 output:
    # FC3001 "Output data type only support FP32 and INT32 when using GM accumulated" (K = 64 is one tile anyway)
    pypto.set_cube_tile_shapes([512, 512], [64, 64], [64, 64], False)
    e = pypto.matmul(a, c, pypto.DT_BF16)
    e = pypto.reshape(e, [rows, 16])
    pypto.assemble(e, [0, 0], out)


f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(202 + T)
    M = 256 * T
    a = bf16_round(rng.standard_normal((M, 16)).astype(f32))
    b = bf16_round((rng.standard_normal((16, 16)) / 4.0).astype(f32))
    ref = bf16_round((a.astype(np.float64) @ b.astype(np.float64)).astype(f32))
    return [(a, "bf16"), (b, "bf16")], [((M, 16), "bf16")], [ref], [(1e-4, 0.0078125)], []


if __name__ == "__main__":
    run("k202_blockdiag_small_proj", matmul_kernel, make_case)
