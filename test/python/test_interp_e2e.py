"""End to end: every example lowered by the SK-03 pipeline and run at the npu level
matches its pto-level golden (the acceptance rule), writes every output element
exactly once, at every listed token count and for awkward unroll factor lists."""

from __future__ import annotations

import numpy as np
import pytest
from kernels import SK03_NAMES, example, lowered, lowered_example
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, i64

from pto.interp.golden import check
from pto.interp.run import random_inputs, run, signature

TOKENS = [1, 2, 15, 16, 17, 127, 128, 129, 300]
NAMES = SK03_NAMES
compiled = lowered_example


def check_run(pto_m, npu_m, tokens: int, seed: int = 0) -> None:
    inputs = random_inputs(signature(pto_m), tokens, seed)
    before = [x.copy() for x in inputs]
    want = run(pto_m, inputs).outputs
    got = run(npu_m, inputs)
    for x, b in zip(inputs, before, strict=True):
        assert np.array_equal(x.view(np.uint8), b.view(np.uint8)), "an input array was modified"
    for g, w, counts in zip(got.outputs, want, got.write_counts, strict=True):
        assert g.shape == w.shape
        assert not np.isnan(g.astype(np.float32)).any(), "an output element was never written"
        assert counts.min() == 1 and counts.max() == 1, (
            f"output elements written {counts.min()}..{counts.max()} times, not exactly once"
        )
        v = check(g, w)
        assert v.ok, v.describe("output")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tokens", TOKENS)
def test_example_matches_golden(name: str, tokens: int) -> None:
    check_run(*compiled(name), tokens)


@pytest.mark.parametrize("factors", ["4,3,1", "5,2", "128,64,32,16,8,1", "256,64,16,4,1", "16"])
@pytest.mark.parametrize("tokens", [1, 17, 129])
def test_factor_lists(factors: str, tokens: int) -> None:
    check_run(*compiled("sk03_standard.mlir", f"pto-sk03-pipeline{{factors={factors}}}"), tokens)


def test_factor_lists_mhc_pre() -> None:
    for factors in ("4,3,1", "5,2"):
        check_run(*compiled("hc_pre.mlir", f"pto-sk03-pipeline{{factors={factors}}}"), 23)


def test_cross_level_equivalence() -> None:
    """pto, tile and npu levels of one kernel give the same outputs."""
    pto_m = example("mla_wqa_qrmsnorm.mlir")
    tile_m = lowered(pto_m, "pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-assign-shapes")
    npu_m = lowered(tile_m, "tile-to-npu")
    inputs = random_inputs(signature(pto_m), 37, 3)
    a = run(pto_m, inputs)
    b = run(tile_m, inputs)
    c = run(npu_m, inputs)
    assert (a.level, b.level, c.level) == ("pto", "tile", "npu")
    for x, y, z in zip(a.outputs, b.outputs, c.outputs, strict=True):
        assert check(y, x).ok and check(z, x).ok and check(z, y).ok


def test_deterministic() -> None:
    pto_m, npu_m = compiled("indexer_query_linear_int8.mlir")
    inputs = random_inputs(signature(pto_m), 40, 1)
    r1, r2 = run(npu_m, inputs), run(npu_m, inputs)
    assert r1.report.cycles == r2.report.cycles
    assert r1.report.tensors == r2.report.tensors
    for x, y in zip(r1.outputs, r2.outputs, strict=True):
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize("nbuffer", [2, 3])
def test_cube_nbuffer_merges_cube_tasks(nbuffer: int) -> None:
    """cube_nbuffer_setting N merges N cube tasks of a body into one (PyPTO's meaning):
    the 16 output tiles of a 128-token body become ceil(16 / N) tasks; same numbers."""
    text = (compiled("sk03_standard.mlir")[0]).clone()
    f = next(iter(text.ops))
    setting = DictionaryAttr({"-1": IntegerAttr(nbuffer, i64)})
    f.attributes["pto.options"] = DictionaryAttr({"cube_nbuffer_setting": setting})
    npu_m = lowered(text)
    assert f'npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, {-(-16 // nbuffer)})' in str(npu_m)
    assert 'npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, 16)' in str(
        compiled("sk03_standard.mlir")[1]
    )
    check_run(text, npu_m, 130)


@pytest.mark.parametrize("tokens", [1, 5, 37])
def test_column_tiled_reductions(tokens: int) -> None:
    """max/min/absmax accumulate over column chunks; a value using them is a second pass."""
    from kernels import ROOT, parse

    pto_m = parse((ROOT / "test" / "python" / "Inputs" / "column_reductions.mlir").read_text())
    npu_m = lowered(pto_m)
    text = str(npu_m)
    assert "npu.vmax" in text and "npu.vmin" in text and "!npu.buf<4x64xf32, ub>" in text
    assert "-3.40282347e+38" in text and "3.40282347e+38" in text  # the max/min identities
    check_run(pto_m, npu_m, tokens)


@pytest.mark.parametrize("tokens", [1, 17, 70, 130])
def test_l0_blocks_of_an_l1_tile(tokens: int) -> None:
    """mL0 < mL1 and nL0 < nL1: 2x2 L0 blocks per L1 tile, tails cut per block."""
    from kernels import ROOT, parse

    text = (
        (ROOT / "examples" / "sk03_standard.mlir")
        .read_text()
        .replace(
            '{pto.label = "linear"}',
            '{pto.label = "linear", pto.cube_tile = #pto.cube_tile<m = [64, 128], k = [128, 512], n = [32, 64]>}',
        )
    )
    pto_m = parse(text)
    npu_m = lowered(pto_m, "pto-sk03-pipeline{factors=128,1}")
    assert "!npu.buf<64x32xf32, l0c>" in str(npu_m)
    check_run(pto_m, npu_m, tokens)


def test_bodies_overlap_in_the_task_graph() -> None:
    """No barrier between bodies or stages: with 16-token bodies the cube tasks of an
    early body start before the vector tasks of the last body have ended, while every
    cube task of a body starts after that body's vector tasks end."""
    pto_m, npu_m = compiled("sk03_standard.mlir", "pto-sk03-pipeline{factors=16}")
    tasks = run(npu_m, random_inputs(signature(pto_m), 512, 0)).report.task_runs

    def of(label: str, body: int) -> list:
        return [e for e in tasks if e.name.startswith(f"{label}[{body},")]

    vec_end = [max(e.start + e.dur for e in of("rmsnorm.16", b)) for b in range(32)]
    cube_start = [min(e.start for e in of("linear.16", b)) for b in range(32)]
    assert min(cube_start[:4]) < vec_end[31]
    assert all(c >= v for c, v in zip(cube_start, vec_end, strict=True))


@pytest.mark.parametrize("tokens", [30, 45])
def test_tail_body(tokens: int) -> None:
    """A loop with a tail: the last body's missing vector and cube tiles move and store
    nothing (every output row written once), and the rows that exist get what a loop
    without a tail (step 1) computes."""
    from kernels import ROOT, parse

    text = (ROOT / "test" / "python" / "Inputs" / "tail_loop.mlir").read_text()
    tail_m = lowered(parse(text), "tile-assign-shapes,tile-to-npu")
    ones_m = lowered(
        parse(text.replace("step 32 tail", "step 1").replace("32x", "1x")), "tile-assign-shapes,tile-to-npu"
    )
    inputs = random_inputs(signature(parse(text)), tokens, 0)
    got, want = run(tail_m, inputs), run(ones_m, inputs)
    assert got.write_counts[0].min() == 1 and got.write_counts[0].max() == 1
    assert np.array_equal(got.outputs[0], want.outputs[0])


@pytest.mark.parametrize("reuse", [1, 2])
def test_cube_l1_reuse_keeps_weight_slices(reuse: int) -> None:
    """cube_l1_reuse_setting 2 (PyPTO's meaning): two row tiles of a weight column in one
    task, one after the other; the second reuses the weight slices L1 kept beside the
    streaming copies (5 of the 8 K slices for 32 x 512 and 64 x 512 bf16 slices): the
    weight is read for 2 x 11 slices per column, not 4 x 8; same numbers."""
    from kernels import ROOT, parse

    text = (
        (ROOT / "examples" / "sk03_standard.mlir")
        .read_text()
        .replace(
            '{pto.label = "linear"}',
            '{pto.label = "linear", pto.cube_tile = #pto.cube_tile<m = [32, 32], k = [512, 512], n = [64, 64]>}',
        )
    )
    pto_m = parse(text)
    f = next(iter(pto_m.ops))
    f.attributes["pto.options"] = DictionaryAttr(
        {"cube_l1_reuse_setting": DictionaryAttr({"-1": IntegerAttr(reuse, i64)})}
    )
    npu_m = lowered(pto_m, "pto-sk03-pipeline{factors=128}")
    ir = str(npu_m)
    tasks = 'npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, {})'
    assert tasks.format(64 // reuse) in ir
    kept = ir.count("npu.alloc l1 [196608] : !npu.buf<64x512xbf16, l1>")
    assert kept == (1 if reuse == 2 else 0)
    check_run(pto_m, npu_m, 128)
    w = run(npu_m, random_inputs(signature(pto_m), 128, 0)).report.tensors["w"]["hbm_read"]
    weight = 1024 * 4096 * 2
    assert w == (weight * 2 * 11 // 8 if reuse == 2 else weight * 4)


@pytest.mark.parametrize("tokens", [1, 17, 130])
def test_split_k_runs_and_sum(tokens: int) -> None:
    """Split-K as PyPTO cuts it: bf16 K = 4096 with kL1 = 512 in runs of 1024 (4 runs of
    2 slices), every run a cube task per output tile writing f32 partials, a vector task
    per output tile adding the 4 runs and casting to bf16; same numbers."""
    from kernels import ROOT, parse

    text = (
        (ROOT / "examples" / "sk03_standard.mlir")
        .read_text()
        .replace(
            '{pto.label = "linear"}',
            '{pto.label = "linear", pto.cube_tile = #pto.cube_tile<m = [32, 32], k = [64, 512], n = [256, 256], split_k>}',
        )
    )
    pto_m = parse(text)
    npu_m = lowered(pto_m, "pto-sk03-pipeline{factors=128,16,1}")
    ir = str(npu_m)
    assert 'npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, 64)' in ir  # 4 x 4 tiles x 4 runs
    assert 'npu.tasks "linear.128.sum" vector (%body_2, %task_2) in (%bodies128, 16) after ["linear.128"]' in ir
    assert "atomic_add" not in ir
    check_run(pto_m, npu_m, tokens)


def test_split_k_mhc_pre() -> None:
    check_run(*compiled("hc_pre.mlir", "pto-sk03-pipeline{factors=128,64,16}"), 150)


def test_weight_slice_in_halves() -> None:
    """128 x 512 activation and 256 x 512 weight slices (bf16): two copies of both do not
    fit L1, so the weight streams in halves, two copies of a half; same numbers."""
    from kernels import ROOT, parse

    text = (
        (ROOT / "examples" / "sk03_standard.mlir")
        .read_text()
        .replace(
            '{pto.label = "linear"}',
            '{pto.label = "linear", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [128, 512], n = [256, 256]>}',
        )
    )
    pto_m = parse(text)
    npu_m = lowered(pto_m, "pto-sk03-pipeline{factors=128,1}")
    # the 128-token loop only: in the 1-token loop the 16-row activation leaves room
    assert str(npu_m).count("npu.alloc l1 [393216] : !npu.buf<256x256xbf16, l1>") == 1
    check_run(pto_m, npu_m, 130)


SIDE = """func.func @mhc(%x: tensor<?x1024xbf16>, %w: tensor<24x1024xf32>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %xf = pto.cast %x none {pto.label = "pre"} : tensor<?x1024xbf16> -> tensor<?x1024xf32>
  %sq = pto.mul %xf, %xf {pto.label = "norm"} : tensor<?x1024xf32>, tensor<?x1024xf32> -> tensor<?x1024xf32>
  %ms = pto.reduce mean %sq : tensor<?x1024xf32> -> tensor<?x1xf32>
  %r = pto.sqrt %ms : tensor<?x1xf32> -> tensor<?x1xf32>
  %y = pto.matmul %xf, %w b_trans {pto.label = "linear"} : tensor<?x1024xf32>, tensor<24x1024xf32> -> tensor<?x24xf32>
  %o = pto.div %y, %r {pto.label = "out"} : tensor<?x24xf32>, tensor<?x1xf32> -> tensor<?x24xf32>
  func.return %o : tensor<?x24xf32>
}"""


@pytest.mark.parametrize("tokens", [1, 17])
def test_vector_stage_beside_the_cube(tokens: int) -> None:
    """A vector stage before the matmul whose results the cube does not read (the norm of
    mhc_pre) is a group of its own that the cube does not wait for; the stage after the
    cube waits for both (as PyPTO runs the reductions beside the cube); same numbers."""
    from kernels import parse

    pto_m = parse(SIDE)
    ir = str(lowered(pto_m, "pto-sk03-pipeline{factors=16,1}"))
    assert 'npu.tasks "norm.16" vector (%body_1, %task_1) in (%bodies16, 2) after ["pre.16"]' in ir
    assert 'npu.tasks "linear.16" cube (%body_2, %task_2) in (%bodies16, 1) after ["pre.16"]' in ir
    assert 'after ["linear.16", "norm.16"]' in ir
    check_run(pto_m, lowered(pto_m, "pto-sk03-pipeline{factors=16,1}"), tokens)
