"""PyPTO's comparisons and `where` (pypto/select.py): corpus21's k190 top-1 mask
`where(eq(logits, amax(logits)), 1.0, 0.0)`, a leaky ReLU and a clamp written with
`where`, the operators `< <= > >=`, `logical_not`; each one `pto.select` (`npu.vsel`),
checked against numpy, both engines bit for bit; a comparison read as a tensor refused."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

H, N = 256, 64
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
COUNTS = (1, 13, 40)


def _post(post):
    """A bf16 projection (8-row tiles) whose f32 result goes through `post`."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            pypto.set_vec_tile_shapes(8, N)
            pypto.assemble(post(y), [i, 0], out)

    return k


def _run(post, golden, t: int) -> None:
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((N, H)) * 0.1).astype(ml_dtypes.bfloat16)
    x[0, :] = 0  # a row of zeros: every logit 0, ties everywhere (eq, le, ge, the mask's all ones)
    k = _post(post)
    out = np.zeros((t, N), np.float32)
    k(x, w, out)
    y = x.astype(np.float32) @ w.astype(np.float32).T
    want = golden(y)
    assert check(out, want).ok, np.abs(out - want).max()
    runs = [pto.run(pto.compile(k.trace(x, w, out)), [x, w], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0]) and np.array_equal(runs[0].outputs[0], out)
    assert runs[0].report.to_json() == runs[1].report.to_json()


FORMS = {
    "top1_mask": (
        lambda y: pypto.where(pypto.eq(y, pypto.amax(y, -1, keepdim=True)), 1.0, 0.0),
        lambda y: (y == y.max(-1, keepdims=True)).astype(np.float32),
    ),
    "leaky_relu_operator": (
        lambda y: pypto.where(y > 0, y, y * 0.1),
        lambda y: np.where(y > 0, y, y * np.float32(0.1)),
    ),
    "clamp_number_left": (  # `0.5 >= y` is `y <= 0.5`
        lambda y: pypto.where(pypto.ge(0.5, y), y, 0.5),
        lambda y: np.minimum(y, np.float32(0.5)),
    ),
    "logical_not_swaps": (
        lambda y: pypto.where(pypto.logical_not(y < pypto.full([1, N], -0.25, FP32)), y, -0.25),
        lambda y: np.where(~(y < -0.25), y, np.float32(-0.25)),
    ),
    "ne_of_two_tensors": (
        lambda y: pypto.where(pypto.ne(y, pypto.maximum(y, 0.0)), pypto.mul(y, y), y),
        lambda y: np.where(y != np.maximum(y, 0), y * y, y),
    ),
    "method_and_le": (
        lambda y: pypto.where(y.greater(0.2).logical_not(), pypto.where(y <= -0.2, -1.0, 0.0), 1.0),
        lambda y: np.where(~(y > 0.2), np.where(y <= -0.2, -1.0, 0.0), 1.0).astype(np.float32),
    ),
    "logical_and_band": (  # corpus23's k207: both comparisons, one select each
        lambda y: pypto.where(pypto.logical_and(y > -0.5, y < 0.5), y, 0.0),
        lambda y: np.where((y > -0.5) & (y < 0.5), y, np.float32(0)),
    ),
    "not_of_and": (
        lambda y: pypto.where(pypto.logical_not(pypto.logical_and(y > -0.5, pypto.lt(y, 0.5))), 0.0, y),
        lambda y: np.where(~((y > -0.5) & (y < 0.5)), np.float32(0), y),
    ),
    "minimum_of_a_full": (  # corpus23's k207: a pypto.full is maximum's / minimum's number
        lambda y: pypto.maximum(pypto.full([1, N], -0.5, FP32), pypto.minimum(y, pypto.full([1, N], 0.5, FP32))),
        lambda y: np.clip(y, np.float32(-0.5), np.float32(0.5)),
    ),
}


@pytest.mark.parametrize("t", COUNTS)
@pytest.mark.parametrize("form", FORMS, ids=str)
def test_where_of_a_comparison_runs_as_numpy_computes_it(form: str, t: int) -> None:
    _run(*FORMS[form], t)


def test_a_select_is_one_op_at_each_level() -> None:
    post = FORMS["top1_mask"][0]
    k = _post(post)
    x, w = np.ones((9, H), ml_dtypes.bfloat16), np.ones((N, H), ml_dtypes.bfloat16)
    module = k.trace(x, w, np.zeros((9, N), np.float32))
    assert "pto.select eq %" in str(module) and ", 1.000000e+00, 0.000000e+00" in str(module)
    npu_text = str(pto.compile(module).npu)
    assert npu_text.count('npu.vsel "eq"') == 2  # (the [8, 1] cascade's bodies; the immediates one-element vdups)
    assert "npu.vdup 1.000000e+00 -> %" in npu_text and "!npu.buf<1x1xf32, ub>" in npu_text


@pytest.mark.parametrize(
    ("post", "message"),
    [
        (lambda y: pypto.mul(y > 0, y), r"a comparison is read only as pypto.where's condition .* not as pypto.mul"),
        (lambda y: pypto.where(y, 1.0, 0.0), r"pypto.where's condition must be a comparison"),
        (lambda y: pypto.where(pypto.gt(1.0, 2.0), y, y), r"pypto.gt of two numbers"),
        (
            lambda y: pypto.where(y > 0, pypto.cast(y, BF16), y),
            r"pypto.where of DT_BF16 and DT_FP32: cast one first",
        ),
        (
            lambda y: pypto.where(pypto.cast(y, pypto.DT_INT32, pypto.CastMode.CAST_ROUND) > 0, y, y),
            r"pypto.gt of DT_INT32 values is not modelled",
        ),
    ],
    ids=["as_a_tensor", "not_a_comparison", "two_numbers", "two_dtypes", "int_compare"],
)
def test_a_comparison_out_of_place_is_refused_at_its_line(post, message: str) -> None:
    k = _post(post)
    x, w = np.ones((3, H), ml_dtypes.bfloat16), np.ones((N, H), ml_dtypes.bfloat16)
    with pytest.raises(pypto.BuildError, match=rf"test_pypto_select.py:\d+: error: pto.pypto: {message}"):
        k(x, w, np.zeros((3, N), np.float32))


@pytest.mark.parametrize("name", ["select_immediates", "select_column_chunks"])
def test_a_select_at_the_npu_level_matches_its_golden_in_both_engines(name: str) -> None:
    """The planner cases (Inputs/planner): immediates as one-element vdups, and selects in
    a column-tiled phase (each chunk's select reads the per-row sum)."""
    from kernels import parse

    from pto.frontend import api

    path = Path(__file__).parent / "Inputs" / "planner" / f"{name}.mlir"
    compiled = api.compile(parse(path.read_text(), str(path)))
    if name == "select_column_chunks":
        assert not compiled.warnings  # (cut into column chunks as pinned, not run in whole rows)
    a, b = (api.run(compiled, tokens=13, engine=e, golden=True) for e in ("interp", "compiled"))
    assert a.ok and b.ok and a.report.to_json() == b.report.to_json()
    assert all(np.array_equal(x, y) for x, y in zip(a.outputs, b.outputs, strict=True))
