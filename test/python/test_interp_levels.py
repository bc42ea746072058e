"""The pto and tile levels run too: every pto op against numpy, and tile-level token
loops with a tail (valid rows) and host-transposed loads."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from kernels import ROOT, example, lowered, parse

from pto.interp.golden import check
from pto.interp.machine import MachineError
from pto.interp.run import InputError, random_inputs, run, signature

T = "tensor<?x64xf32>"
R = "tensor<?x1xf32>"


@pytest.mark.parametrize(
    ("body", "ret", "fn"),
    [
        (f"pto.add %x, %y : {T}, {T} -> {T}", T, lambda x, y: x + y),
        (f"pto.sub %x, %y : {T}, {T} -> {T}", T, lambda x, y: x - y),
        (f"pto.mul %x, %y : {T}, {T} -> {T}", T, lambda x, y: x * y),
        (f"pto.div %x, %y : {T}, {T} -> {T}", T, lambda x, y: x / y),
        (f"pto.abs %x : {T} -> {T}", T, lambda x, y: np.abs(x)),
        (f"pto.sqrt %y : {T} -> {T}", T, lambda x, y: np.sqrt(y)),
        (f"pto.rsqrt %y : {T} -> {T}", T, lambda x, y: 1 / np.sqrt(y)),
        (f"pto.reciprocal %x : {T} -> {T}", T, lambda x, y: 1 / x),
        (f"pto.muls %x, 3.0 : {T} -> {T}", T, lambda x, y: 3 * x),
        (f"pto.adds %x, 3.0 : {T} -> {T}", T, lambda x, y: x + 3),
        (f"pto.reduce sum %x : {T} -> {R}", R, lambda x, y: x.sum(-1, keepdims=True)),
        (f"pto.reduce mean %x : {T} -> {R}", R, lambda x, y: x.mean(-1, keepdims=True)),
        (f"pto.reduce max %x : {T} -> {R}", R, lambda x, y: x.max(-1, keepdims=True)),
        (f"pto.reduce min %x : {T} -> {R}", R, lambda x, y: x.min(-1, keepdims=True)),
        (f"pto.reduce absmax %x : {T} -> {R}", R, lambda x, y: np.abs(x).max(-1, keepdims=True)),
        (
            f"pto.rms_norm %x eps = 1.0e-06 : {T} -> {T}",
            T,
            lambda x, y: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6),
        ),
        (f"pto.reshape %x : {T} -> tensor<?x8x8xf32>", "tensor<?x8x8xf32>", lambda x, y: x.reshape(-1, 8, 8)),
        (
            f"pto.cast %x floor : {T} -> tensor<?x64xbf16>",
            "tensor<?x64xbf16>",
            lambda x, y: (
                (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
                - np.where(
                    (x < 0) & ((x.view(np.uint32) & np.uint32(0xFFFF)) != 0),
                    2.0 ** (np.floor(np.log2(np.abs(x))) - 7),
                    0,
                )
            ),
        ),
    ],
)
def test_pto_op(body: str, ret: str, fn) -> None:
    m = parse(f"func.func @k(%x: {T}, %y: {T}) -> {ret} {{\n  %r = {body}\n  func.return %r : {ret}\n}}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 64)).astype(np.float32)
    y = (np.abs(rng.standard_normal((5, 64))) + 0.5).astype(np.float32)
    (got,) = run(m, [x, y]).outputs
    np.testing.assert_allclose(got.astype(np.float32), fn(x, y).astype(np.float32), rtol=1e-5, atol=1e-6)


def test_pto_matmul_transposes_quant_dequant() -> None:
    m = parse("""func.func @k(%a: tensor<64x16xf32>, %b: tensor<8x64xf32>, %s: tensor<8xf32>) -> (tensor<16x8xf32>, tensor<16x64xi8>) {
  %y = pto.matmul %a, %b a_trans b_trans : tensor<64x16xf32>, tensor<8x64xf32> -> tensor<16x8xf32>
  %at = pto.reshape %a : tensor<64x16xf32> -> tensor<16x64xf32>
  %q, %sc = pto.quant %at : tensor<16x64xf32> -> tensor<16x64xi8>, tensor<16x1xf32>
  %d = pto.dequant %y, %sc, %s : tensor<16x8xf32>, tensor<16x1xf32>, tensor<8xf32> -> tensor<16x8xf32>
  func.return %d, %q : tensor<16x8xf32>, tensor<16x64xi8>
}""")
    rng = np.random.default_rng(1)
    a, b, s = (rng.standard_normal(sh).astype(np.float32) for sh in ((64, 16), (8, 64), (8,)))
    d, q = run(m, [a, b, s]).outputs
    at = a.reshape(16, 64)
    amax = np.abs(at).max(-1, keepdims=True)
    np.testing.assert_array_equal(q, np.clip(np.rint(at * np.float32(127) / amax), -128, 127).astype(np.int8))
    np.testing.assert_allclose(d, (a.T @ b.T) * (amax / 127) * s, rtol=1e-5)


TILE = """func.func @k(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %r = arith.subi %t, %i : index
    %c16 = arith.constant 16 : index
    %n = arith.minui %r, %c16 : index
    %xt = tile.load %x[%i] valid %n : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.vec_stage "scale" -> (tensor<16x64xf32>) {
      %s = tile.muls %xt, 2.0 : tensor<16x64xf32> -> tensor<16x64xf32>
      tile.yield %s : tensor<16x64xf32>
    }
    %z = tile.cube_stage "mm" -> (tensor<16x64xf32>) {
      %wt = tile.load %w : tensor<64x64xf32> -> tensor<64x64xf32>
      %m = tile.matmul %y, %wt : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    tile.store %z, %out[%i] valid %n : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}"""


def test_tile_level_tail_loop() -> None:
    x = np.random.default_rng(2).standard_normal((37, 64)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    r = run(parse(TILE), [x, w])
    assert r.level == "tile"
    np.testing.assert_allclose(r.outputs[0], (2 * x) @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tokens", [3, 130])  # the remainder loop alone; both loops
def test_the_tile_level_example_computes_what_the_pto_level_kernel_does(tokens: int) -> None:
    """examples/levels/sk03_standard.tile.mlir (its remainder loop's norm had lost gamma)."""
    pto_m = example("sk03_standard.mlir")
    tile_m = parse((ROOT / "examples" / "levels" / "sk03_standard.tile.mlir").read_text())
    ins = random_inputs(signature(pto_m), tokens, 0)
    assert check(run(tile_m, ins).outputs[0], run(pto_m, ins).outputs[0], "bf16").ok


def test_tile_level_load_past_the_end_is_an_error() -> None:
    bad = TILE.replace(" valid %n", "")
    with pytest.raises(MachineError, match=r"load rows \[32, \+16\) are outside the tensor's 37 rows"):
        run(parse(bad), [np.zeros((37, 64), np.float32), np.zeros((64, 64), np.float32)])


def test_tile_level_host_transpose_and_reshape_match_pto() -> None:
    pto_m = example("hc_pre.mlir")
    tile_m = lowered(pto_m, "pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-assign-shapes")
    assert "host_transpose" in str(tile_m)
    inputs = random_inputs(signature(pto_m), 21, 4)
    (want,), (got,) = run(pto_m, inputs).outputs, run(tile_m, inputs).outputs
    assert check(got, want).ok


RECIPROCAL = """func.func @k(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  %r = pto.reciprocal %y : tensor<?x32xf32> -> tensor<?x32xf32>
  func.return %r : tensor<?x32xf32>
}"""


def test_reciprocal_at_the_pto_tile_and_npu_levels() -> None:
    """1 / x rounded once in f32, at every level (the npu level divides a vdup of ones)."""
    pto_m = parse(RECIPROCAL)
    tile_m = lowered(pto_m, "pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-assign-shapes")
    npu_m = lowered(pto_m)
    assert "tile.reciprocal" in str(tile_m)
    rng = np.random.default_rng(6)
    # small positive integers: the products are exact (and nonzero) in any order
    x = rng.integers(1, 4, (21, 64)).astype(np.float32)
    w = rng.integers(1, 4, (64, 32)).astype(np.float32)
    want = np.float32(1) / (x @ w)
    for m, level in ((pto_m, "pto"), (tile_m, "tile"), (npu_m, "npu")):
        r = run(m, [x, w])
        assert r.level == level
        np.testing.assert_array_equal(r.outputs[0], want)


def test_random_inputs_of_an_i32_input() -> None:
    """An i32 input gets integers spread over [-1000, 1000), from the seed."""
    m = parse("""func.func @k(%acc: tensor<?x64xi32>, %s: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %d = pto.dequant %acc, %s : tensor<?x64xi32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}""")
    acc, s = random_inputs(signature(m), 5, 3)
    assert acc.dtype == np.int32 and acc.shape == (5, 64) and s.dtype == np.float32
    assert -1000 <= acc.min() < -500 and 500 < acc.max() < 1000
    np.testing.assert_array_equal(random_inputs(signature(m), 5, 3)[0], acc)
    (got,) = run(m, [acc, s]).outputs
    np.testing.assert_array_equal(got, acc.astype(np.float32) * s)


def test_signature_errors() -> None:
    m = parse(f"func.func @k(%x: {T}, %y: tensor<?x8xf32>) -> {T} {{\n  func.return %x : {T}\n}}")
    with pytest.raises(InputError, match="input %y has 3 tokens but an earlier input has 2"):
        run(m, [np.zeros((2, 64), np.float32), np.zeros((3, 8), np.float32)])
    with pytest.raises(InputError, match=r"input %x must be \?x64xf32, got dtype bfloat16"):
        run(m, [np.zeros((2, 64), ml_dtypes.bfloat16), np.zeros((2, 8), np.float32)])
    tile_m = parse(TILE.replace(" {pto.output}", ""))
    with pytest.raises(InputError, match=r"marks its output arguments with \{pto.output\}"):
        run(tile_m, [np.zeros((2, 64), np.float32), np.zeros((64, 64), np.float32)])
