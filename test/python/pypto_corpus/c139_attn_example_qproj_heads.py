"""c139 (outside batch corpus22, k195): PyPTO attention example, query projection + head split (C -> reshape/transpose post-processing).

Follows hicann/pypto examples/03_advanced/advanced_nn/attention/attention.py (HEAD,
attention_with_projection_kernel): the 3-D x broadcast 3-D weight projection
    q_flat = pypto.matmul(hidden_states [B, S, H], q_weight [1, H, N*D], out_dtype=DT_BF16)
on the whole input before the loop, reshape to [B, S, N, D], pypto.transpose(q, 1, 2) (BSND -> BNSD),
then the LOOP_L0_bIdx batch loop with 4-D views (view_shape / valid_shape) and the slice store
output_tensor[b_offset:, ...] = ...  Inside the loop the source goes on to attention (two more matmuls);
this segment instead stores the scaled per-head query (q * 1/sqrt(D), the source's `scale`), i.e. the
"projection + split heads" post-processing that feeds attention.  Cube/vec tiles verbatim.
Changes: batch B = tokens here (S = 16 rows each) instead of the constant BATCH_SIZE 2, so the
annotations are the untyped pypto.Tensor() (shape and dtype taken from the call, as the PyPTO matmul tests
do) instead of static tuples; k/v projections left out (one matmul); sizes H = N*D = 1024 (N 8, D 128)
instead of 512 (8 x 64); min((idx + 1) * tile_b, BATCH_SIZE) written ((idx + 1) * tile_b).min(BATCH_SIZE)
(Python's min on the symbolic idx raises ValueError "Not concrete value").  (Tried first: [pypto.DYNAMIC, S, H] annotations - a tuple holding DYNAMIC raises
ValueError "Invalid value type"; as a list, PyPTO refuses the whole-tensor matmul before the loop:
Errcode FC3000 "operand1 dim[0] = -1, must be > 0".)
"""
import numpy as np

from batch_harness import pypto, run, bf16_round

SEQ_LEN = 16
NUM_HEADS = 8
HEAD_DIM = 128
HIDDEN_SIZE = 1024


@pypto.frontend.jit()
def attention_qproj_heads_kernel(
    hidden_states: pypto.Tensor(),
    q_weight: pypto.Tensor(),
    output_tensor: pypto.Tensor(),
):
    BATCH_SIZE = hidden_states.shape[0]
    tile_b = 1
    b_loop = BATCH_SIZE // tile_b

    scale = 1.0 / (HEAD_DIM**0.5)
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    pypto.set_vec_tile_shapes(1, 16, 8, HEAD_DIM)

    q_flat = pypto.matmul(hidden_states, q_weight, out_dtype=pypto.DT_BF16)

    q = pypto.reshape(q_flat, [BATCH_SIZE, SEQ_LEN, NUM_HEADS, HEAD_DIM])

    q = pypto.transpose(q, 1, 2)

    for idx in pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        b_offset = idx * tile_b
        b_offset_end = ((idx + 1) * tile_b).min(BATCH_SIZE)
        view_shape = [tile_b, NUM_HEADS, SEQ_LEN, HEAD_DIM]
        valid_shape = [b_offset_end - b_offset, NUM_HEADS, SEQ_LEN, HEAD_DIM]
        q_view = pypto.view(q, view_shape, [b_offset, 0, 0, 0], valid_shape=valid_shape)

        q_scaled = pypto.mul(q_view, scale)
        output_tensor[b_offset:, ...] = q_scaled


f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(195 + T)
    hs = bf16_round(rng.standard_normal((T, SEQ_LEN, HIDDEN_SIZE)).astype(f32))
    w = bf16_round((rng.standard_normal((1, HIDDEN_SIZE, NUM_HEADS * HEAD_DIM)) / np.sqrt(HIDDEN_SIZE)).astype(f32))
    qf = bf16_round((hs.astype(np.float64) @ w[0].astype(np.float64)).astype(f32))
    q = qf.reshape(T, SEQ_LEN, NUM_HEADS, HEAD_DIM).transpose(0, 2, 1, 3)
    ref = bf16_round(q * f32(1.0 / HEAD_DIM ** 0.5))
    return ([(hs, "bf16"), (w, "bf16")], [((T, NUM_HEADS, SEQ_LEN, HEAD_DIM), "bf16")], [ref],
            [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k195_attn_example_qproj_heads", attention_qproj_heads_kernel, make_case)
