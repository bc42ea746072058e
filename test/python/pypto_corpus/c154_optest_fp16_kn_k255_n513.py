"""c154 (2026-12-07, outside batch corpus34, k324-k335: odd K and N against ragged cube tiles; its author's k325).

k325: operator-test style (loop over m/n views, no RMSNorm), fp16 A[M,K] x B[K,N] (no trans) -> fp32,
K=255 (kL0=64, kL1=128 -> 127-wide tail), N=513 (view 256 -> views 256,256,1; nL0=nL1=128),
tiles [[64,64],[64,128],[128,128]] as PyPTO's E01/B02 cases; slicing syntax a[m0:m0+64, :] runs past M."""
import numpy as np
from batch_harness import pypto, run, bf16_round, fp16_round

K, N, MV, NV = 255, 513, 64, 256


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def kernel(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
    m = a.shape[0]
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [128, 128])
    m_loop = (m + MV - 1) // MV
    n_loop = (N + NV - 1) // NV
    for m_idx in pypto.loop(0, m_loop, 1, name="LOOP_M", idx_name="m_idx"):
        for n_idx in pypto.loop(0, n_loop, 1, name="LOOP_N", idx_name="n_idx"):
            a_view = a[m_idx * MV:m_idx * MV + MV, :]
            b_view = b[:, n_idx * NV:n_idx * NV + NV]
            o = pypto.matmul(a_view, b_view, out_dtype=pypto.DT_FP32)
            out[m_idx * MV:m_idx * MV + MV, n_idx * NV:n_idx * NV + NV] = o


def make_case(T):
    rng = np.random.default_rng(325 + T)
    a = fp16_round(rng.uniform(-1, 1, (T, K)).astype(np.float32))
    b = fp16_round(rng.uniform(-1, 1, (K, N)).astype(np.float32))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    return ([(a, "fp16"), (b, "fp16")], [((T, N), "fp32")], [ref], [(1e-3, 1e-3)], [])


if __name__ == "__main__":
    run("k325", kernel, make_case)
