"""c148 (outside batch corpus27, k252): PyPTO matmul operator test, per-tensor quant matmul: int8 x int8^T (b_trans) with an int32
bias, per-tensor dequant scale and ReLU fused into the matmul's fixpipe (extend_params) -> fp16,
tiled by an M/N double pypto.loop with slice views and slice-assignment output
(C with its post-op: bias + dequant + ReLU).

Source: hicann/pypto python/tests/st/operation/matmul/test_matmul_quant.py
  (`matmul_quant_pertensor_kernel`, `fixpipe_mask_scale`; `MatmulQuantConfig` from
  python/tests/st/operation/matmul/testcase/matmul_quant_test_case.py; case "PERTENSOR01":
  int8 in, int32 bias, fp16 out, RELU, b_trans, viewshape [39, 113], tileshape
  [[64, 64], [64, 128], [128, 128]], k 255, n 511; all verbatim incl. the debug_options decorator
  and `pypto.Tensor([DYNAMIC, DYNAMIC])` annotations without dtype).

Changes:
- m (129 in the case) is the token count T; k 255 and n 511 kept.
- torch/torch_npu parts of `fixpipe_mask_scale` and `get_torch_dtype` are not used (numpy golden);
  the scale goes through the same 0xFFFFE000 mantissa mask as the source's test.
"""

from dataclasses import dataclass
import struct

import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round  # noqa: F401


def fixpipe_mask_scale(scale_input):
    mask = 0xFFFFE000
    packed = struct.pack('f', np.float32(scale_input))
    as_int = struct.unpack('I', packed)[0]
    masked_int = as_int & mask
    golden_scale = struct.unpack('f', struct.pack('I', masked_int))[0]

    scale_input_float = golden_scale

    return scale_input_float, np.float32(golden_scale)


@dataclass
class MatmulQuantConfig:
    shape: tuple[int, int, int]
    tile_shape: tuple[list, list, list]
    view_shape: tuple[int, int]
    out_dtype: pypto.DataType
    quant_type: int
    relu_type: int = 0
    scale_value: float = 0.0
    a_trans: bool = False
    b_trans: bool = False
    a_format: str = "ND"
    b_format: str = "ND"

    DTYPE_CONFIG = {
        "DT_FP16": {"pto": pypto.DT_FP16, "atol": 1e-3, "rtol": 1e-3},
        "DT_FP32": {"pto": pypto.DT_FP32, "atol": 1e-3, "rtol": 1e-3},
        "DT_BF16": {"pto": pypto.DT_BF16, "atol": 1e-2, "rtol": 1e-2},
        "DT_INT8": {"pto": pypto.DT_INT8, "atol": 1, "rtol": 0},
        "DT_INT32": {"pto": pypto.DT_INT32, "atol": 0, "rtol": 0},
    }

    @classmethod
    def from_test_case(cls, case: dict) -> "MatmulQuantConfig":
        fixpipe_info = case.get("fixpipe_info", {})
        relu_type = 1 if fixpipe_info.get("relu_type") == "RELU" else 0

        return cls(
            shape=(case["m"], case["k"], case["n"]),
            tile_shape=tuple(case["tileshape"]),
            view_shape=tuple(case["viewshape"]),
            out_dtype=cls.DTYPE_CONFIG[case["c_dtype"]]["pto"],
            quant_type=fixpipe_info.get("quant_type", 1),
            relu_type=relu_type,
            a_trans=case["a_trans"],
            b_trans=case["b_trans"],
            a_format=case.get("a_format", "ND"),
            b_format=case.get("b_format", "ND"),
        )

    @classmethod
    def get_tolerance(cls, dtype_str: str) -> tuple[float, float]:
        info = cls.DTYPE_CONFIG[dtype_str]
        return info["atol"], info["rtol"]


@pypto.frontend.jit(debug_options={"runtime_debug_mode": 0, "compile_debug_mode": 0})
def matmul_quant_pertensor_kernel(
    a_tensor: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
    b_tensor: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
    bias_tensor: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
    out_tensor: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
    config: MatmulQuantConfig,
):
    scale = float(MatmulQuantConfig.scale_value)
    m, k, n = config.shape
    m_view, n_view = config.view_shape
    pypto.set_cube_tile_shapes(*config.tile_shape)

    m_loop = (m + m_view - 1) // m_view
    n_loop = (n + n_view - 1) // n_view

    relu_mode = pypto.ReLuType.RELU if config.relu_type == 1 else pypto.ReLuType.NO_RELU

    for m_idx in pypto.loop(0, m_loop, 1, name="QUANT_LOOP_L0_mIdx", idx_name="quant_m_idx"):
        for n_idx in pypto.loop(0, n_loop, 1, name="QUANT_LOOP_L0_nIdx", idx_name="quant_n_idx"):
            if config.a_trans:
                a_view = a_tensor[0:k, m_idx * m_view:m_idx * m_view + m_view]
            else:
                a_view = a_tensor[m_idx * m_view:m_idx * m_view + m_view, 0:k]

            if config.b_trans:
                b_view = b_tensor[n_idx * n_view:n_idx * n_view + n_view, 0:k]
            else:
                b_view = b_tensor[0:k, n_idx * n_view:n_idx * n_view + n_view]
            bias_view = bias_tensor[0:1, n_idx * n_view:n_idx * n_view + n_view]
            out_view = pypto.matmul(
                a_view,
                b_view,
                out_dtype=config.out_dtype,
                a_trans=config.a_trans,
                b_trans=config.b_trans,
                extend_params={"bias_tensor": bias_view, "scale": scale, "relu_type": relu_mode},
            )

            out_tensor[
                m_idx * m_view:m_idx * m_view + m_view,
                n_idx * n_view:n_idx * n_view + n_view,
            ] = out_view


K, N = 255, 511


def make_case(T):
    rng = np.random.default_rng(252 + T)
    case = {
        "id": "PERTENSOR01",
        "name": "int8_pertensor_relu_fp16",
        "m": T,
        "k": K,
        "n": N,
        "a_dtype": "DT_INT8",
        "b_dtype": "DT_INT8",
        "c_dtype": "DT_FP16",
        "bias_dtype": "DT_INT32",
        "a_format": "ND",
        "b_format": "ND",
        "a_trans": False,
        "b_trans": True,
        "viewshape": [39, 113],
        "tileshape": [[64, 64], [64, 128], [128, 128]],
        "fixpipe_info": {"quant_type": 1, "relu_type": "RELU"},
        "extend_params": {},
        "products": ["950", "910"],
    }
    config = MatmulQuantConfig.from_test_case(case)
    a = rng.integers(-5, 6, (T, K)).astype(np.float32)
    b = rng.integers(-5, 6, (N, K)).astype(np.float32)
    bias = rng.integers(-5, 6, (1, N)).astype(np.float32)
    scale_input, golden_scale = fixpipe_mask_scale(rng.uniform(0.1, 2.0))
    MatmulQuantConfig.scale_value = scale_input
    mm = a.astype(np.int64) @ b.astype(np.int64).T + bias.astype(np.int64)
    mm = np.maximum(mm, 0)
    ref = fp16_round(mm.astype(np.float32) * golden_scale)
    ins = [(a, "int8"), (b, "int8"), (bias, "int32")]
    outs = [((T, N), "fp16")]
    return ins, outs, [ref], [MatmulQuantConfig.get_tolerance("DT_FP16")], [config]


if __name__ == "__main__":
    run("k252_matmul_quant_pertensor_relu", matmul_quant_pertensor_kernel, make_case)
