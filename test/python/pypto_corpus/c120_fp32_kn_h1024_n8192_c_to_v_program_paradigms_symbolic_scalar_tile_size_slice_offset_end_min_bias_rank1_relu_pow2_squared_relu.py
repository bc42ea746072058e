"""c120 (outside batch corpus19, k170) (fresh, tutorial style): fp32, h 1024, N 8192, fp32 weight [K,N]; C->V.
Loop as docs/zh/tutorials/introduction/program_paradigms.md's "动态Shape处理" (`dynamic_softmax`):
`batch_size = input_tensor.shape[0]`, **`tile_size = pypto.symbolic_scalar(16)`**, loop count from it (ceil
here, the tutorial floors), `offset = idx * tile_size`, and Python slices `input_tensor[offset:end, :]` /
`output_tensor[offset:end, :] = ...` with the end clamped `(offset + tile_size).min(batch_size)`.
Post-ops from tensor_operation.md: rank-1 bias add, `pypto.relu`, `pypto.pow(x, 2)` (squared ReLU).
C->V: fp32 x [T,1024] @ fp32 w [1024,8192] (fp32) -> + bias -> relu -> pow 2 -> fp32 out.
"""
import numpy as np
from batch_harness import pypto, run, PTO

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, N = 1024, 8192


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def linear_squared_relu_kernel(
    input_tensor: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    weight: pypto.Tensor([H, N], pypto.DT_FP32),
    bias: pypto.Tensor([N], pypto.DT_FP32),
    output_tensor: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([16, 16], [64, 256], [128, 256])
    pypto.set_vec_tile_shapes(16, 512)
    # 获取动态维度
    batch_size = input_tensor.shape[0]
    tile_size = pypto.symbolic_scalar(16)
    loop_count = (batch_size + tile_size - 1) // tile_size
    # 循环处理
    for idx in pypto.loop(0, loop_count, 1, name="LOOP_BATCH"):
        offset = idx * tile_size
        end = (offset + tile_size).min(batch_size)
        # 提取当前Tile
        # SIM: input_tensor[offset:end, :] with the clamped end -> 0.2.0 TypeError: Cannot convert symbols to int
        x_view = pypto.view(input_tensor, [16, H], [offset, 0], valid_shape=[end - offset, H])
        z = pypto.matmul(x_view, weight, pypto.DT_FP32)
        z = pypto.relu(z + bias)
        # 组装结果
        output_tensor[offset:, :] = pypto.pow(z, 2)  # SIM: was output_tensor[offset:end, :] (same TypeError)


def make_case(T):
    rng = np.random.default_rng(170 + T)
    x = rng.standard_normal((T, H)).astype(np.float32)
    w = (rng.standard_normal((H, N)) / np.sqrt(H)).astype(np.float32)
    b = (0.3 * rng.standard_normal(N)).astype(np.float32)
    z = x.astype(np.float64) @ w.astype(np.float64) + b
    ref = np.maximum(z, 0.0) ** 2
    return [(x, "fp32"), (w, "fp32"), (b, "fp32")], [((T, N), "fp32")], [ref], [(1e-3, 1e-3)], []


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c120", linear_squared_relu_kernel, make_case, call=call)
