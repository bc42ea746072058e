"""The compiled engine against the xDSL interpreter: the same outputs bit for bit and
the same figures exactly (report, trace events, write counts) on every example, the
same run-time errors at the same op, determinism, and the timing-only mode."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from kernels import ROOT, SK03_NAMES, context, example, lowered, lowered_example, parse

from pto.diagnostics import DiagnosticError
from pto.dialects.common import RoundMode
from pto.driver.parse import LocatingParser
from pto.driver.verify import verify_each
from pto.frontend import api
from pto.interp import numerics as nx
from pto.interp.machine import MachineError
from pto.interp.run import ENGINES, random_inputs, run, signature, unread_inputs
from pto.interp.scheduler import DeadlockError
from pto.tools import pto_run

NAMES = SK03_NAMES


def kernel(name: str, factors: str | None = None):
    return lowered_example(name, f"pto-sk03-pipeline{{factors={factors}}}" if factors else "pto-sk03-pipeline")


def same(a, b) -> None:
    """Two runs agree on every output bit, every reported figure and trace event."""
    for x, y in zip(a.outputs, b.outputs, strict=True):
        assert x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))
    for x, y in zip(a.write_counts, b.write_counts, strict=True):
        assert np.array_equal(x, y)
    assert a.report.to_json() == b.report.to_json()
    assert a.report.events == b.report.events


def both(npu_m, inputs, **kw):
    return [run(npu_m, inputs, trace=True, engine=e, **kw) for e in ("interp", "compiled")]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tokens", [1, 17, 40])
def test_engines_agree_on_every_example(name: str, tokens: int) -> None:
    pto_m, npu_m = kernel(name)
    inputs = random_inputs(signature(pto_m), tokens, tokens)
    ref, got = both(npu_m, inputs)
    same(ref, got)
    assert ref.report.events and ref.report.cycles > 0


@pytest.mark.parametrize(
    ("name", "factors"),
    [("sk03_standard.mlir", "4,3,1"), ("hc_pre.mlir", "5,2"), ("indexer_query_linear_int8.mlir", "4,3,1")],
)
def test_engines_agree_on_factor_lists(name: str, factors: str) -> None:
    pto_m, npu_m = kernel(name, factors)
    same(*both(npu_m, random_inputs(signature(pto_m), 17, 1)))


@pytest.mark.parametrize("numerics", [True, False])
def test_engines_agree_on_a_weight_stage(numerics: bool) -> None:
    """W8A16: a group of vector tasks outside the token loops writes the widened weight
    to GM; the cube groups wait for all of it."""
    path = ROOT / "test" / "lowering" / "Inputs" / "w8a16.mlir"
    pto_m = parse(path.read_text(), str(path))
    npu_m = lowered(pto_m.clone(), "pto-sk03-pipeline{factors=16,1}")
    inputs = random_inputs(signature(pto_m), 21, 3)
    ref, got = both(npu_m, inputs, numerics=numerics)
    same(ref, got)
    if numerics:
        x, w, s = (a.astype(np.float32) for a in inputs)
        want = x @ (w * s).astype(np.float16).astype(np.float32)
        np.testing.assert_allclose(got.outputs[0], want, rtol=1e-3, atol=1e-2)
    stages = {st["stage"]: st for st in ref.report.to_json()["stages"]}
    assert stages["weight"]["tasks"] == 4 and stages["weight"]["kind"] == "vector"
    # (the only vector tasks: every cube task starts after the last of them ends)
    vec_end = max(e.start + e.dur for e in ref.report.events if e.core.startswith("aiv"))
    assert min(e.start for e in ref.report.events if e.core.startswith("aic")) >= vec_end


def test_a_weight_stage_reads_a_rank_1_gamma_by_columns() -> None:
    """corpus23's k211: `w * cast(gamma)` before the loop, gamma's cast under the rank-1
    tile PyPTO gives it; the stage is tiled (8, 256) and each task loads its [256] of
    gamma (the whole row here)."""
    path = ROOT / "test" / "lowering" / "Inputs" / "weight_gamma_fold.mlir"
    pto_m = parse(path.read_text(), str(path))
    npu_m = lowered(pto_m.clone(), "pto-sk03-pipeline{factors=8,1}")
    inputs = random_inputs(signature(pto_m), 11, 5)
    ref, got = both(npu_m, inputs)
    same(ref, got)
    x, w, g = (a.astype(np.float32) for a in inputs)
    want = x @ (w * g).astype(ml_dtypes.bfloat16).astype(np.float32).T
    np.testing.assert_allclose(got.outputs[0], want, rtol=1e-4, atol=1e-4)
    stages = {st["stage"]: st for st in ref.report.to_json()["stages"]}
    assert stages["weight"]["tasks"] == 128 // 8


def test_compiled_runs_are_deterministic() -> None:
    pto_m, npu_m = kernel("mla_wkv_rmsnorm.mlir")
    inputs = random_inputs(signature(pto_m), 33, 0)
    same(run(npu_m, inputs, trace=True, engine="compiled"), run(npu_m, inputs, trace=True, engine="compiled"))


# ------------------------------------------------------------------------- timing only


@pytest.mark.parametrize("engine", ["interp", "compiled"])
def test_timing_only_reports_what_the_full_run_does(engine: str) -> None:
    pto_m, npu_m = kernel("indexer_query_linear_int8.mlir")
    inputs = random_inputs(signature(pto_m), 21, 0)
    full = run(npu_m, inputs, trace=True, engine=engine)
    fast = run(npu_m, inputs, trace=True, engine=engine, numerics=False)
    assert fast.report.to_json() == full.report.to_json()
    assert fast.report.events == full.report.events
    # the values are never read (GM holds read-only views of them): zeros time the same
    zeros = run(npu_m, unread_inputs(signature(pto_m), 21), trace=True, engine=engine, numerics=False)
    assert zeros.report.to_json() == full.report.to_json() and zeros.report.events == full.report.events
    assert all(np.array_equal(x, y) for x, y in zip(fast.write_counts, full.write_counts, strict=True))
    # nothing computed: the outputs are as they start (the minimum of i8 / NaN)
    assert not any(
        np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(fast.outputs, full.outputs, strict=True)
    )


@pytest.mark.parametrize("engine", ["interp", "compiled"])
def test_a_timing_only_run_fills_no_workspace(engine: str) -> None:
    """The standard kernel's RMSNorm workspace (t x 4096 bf16, 8 MB here) is one poison
    element seen at every index in a timing-only run: the run's peak is its output's
    (2 MB) and the model's tables (4-6 MB; the output's write counts are made only when
    read), not 8 MB more."""
    import tracemalloc

    pto_m, npu_m = kernel("sk03_standard.mlir")
    inputs = unread_inputs(signature(pto_m), 1024)
    tracemalloc.start()
    try:
        run(npu_m, inputs, engine=engine, numerics=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 2 * 2**20 < peak < 10 * 2**20


# ------------------------------------------------------------------------- hand-written programs

UB = "!npu.buf<8x64xf32, ub>"
GM = "!npu.buf<8x64xf32, gm>"
ARGS = f"%x: {GM}, %out: {GM} {{pto.output}}"


def launch(body: str, vector: int = 1) -> str:
    return f"func.func @k({ARGS}) {{\n  npu.launch vector {vector} (%v) {{\n{body}\n  }}\n  func.return\n}}"


def cube_launch(body: str) -> str:
    return f"func.func @k({ARGS}) {{\n  npu.launch cube 1 (%v) {{\n{body}\n  }}\n  func.return\n}}"


def graph(body: str, vector: int = 2) -> str:
    return (
        f"func.func @k({ARGS}) {{\n  %c1 = arith.constant 1 : index\n  npu.graph cube 1 vector {vector} {{\n"
        f"{body}\n  }}\n  func.return\n}}"
    )


# scf.for carrying values, scf.if with results, arith ops the compiler leaves to xDSL
# (select, andi, index_cast), cross-core flags between two cores, a barrier.
LOOPS = launch(
    f"""
    %a = npu.alloc ub [0] : {UB}
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %first = arith.cmpi eq, %v, %c0 : index
    %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %c0) -> (index) {{
      %odd = arith.andi %i, %c1 : index
      %t = arith.cmpi ne, %odd, %c0 : index
      %k = arith.select %t, %c3, %c1 : index
      %n = arith.addi %acc, %k : index
      scf.yield %n : index
    }}
    %r = scf.if %first -> (index) {{
      npu.dma mte2 %x[0, 0] -> %a[0, 0] : {GM} -> {UB}
      npu.barrier all
      npu.vmuls %a, 2.0 -> %a : {UB} -> {UB}
      npu.set_flag vector -> mte3, 0
      npu.wait_flag vector -> mte3, 0
      npu.dma mte3 %a[0, 0] -> %out[0, 0] : {UB} -> {GM}
      npu.cross_core_set 5
      scf.yield %s : index
    }} else {{
      npu.cross_core_wait 5, %c1
      npu.dma mte2 %out[0, 0] -> %a[0, 0] : {GM} -> {UB}
      scf.yield %c0 : index
    }}
    %w = arith.index_cast %r : index to i64""",
    vector=2,
)


def test_engines_agree_on_loops_branches_fallback_ops_and_cross_core_flags() -> None:
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    ref, got = both(parse(LOOPS), [x])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[0], 2 * x)


# views, a GM workspace of a core program, dim, reshape, a column copy
VIEWS = launch(f"""
    %n = npu.dim %x, 0 : {GM}
    %ws = npu.alloc gm (%n) : !npu.buf<?x64xf32, gm>
    %wide = npu.reshape %ws : !npu.buf<?x64xf32, gm> -> !npu.buf<?x2x32xf32, gm>
    %low = npu.view %x at [4, 0] : {GM} -> !npu.buf<4x64xf32, gm>
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %b = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    npu.dma mte2 %low[0, 0] -> %a[0, 0] : !npu.buf<4x64xf32, gm> -> !npu.buf<4x64xf32, ub>
    npu.set_flag mte2 -> vector, 0
    npu.wait_flag mte2 -> vector, 0
    npu.vdup 0.0 -> %b : !npu.buf<4x64xf32, ub>
    npu.vcopy %a [cols 8] -> %b [cols 40] width 16 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
    npu.set_flag vector -> mte3, 0
    npu.wait_flag vector -> mte3, 0
    npu.dma mte3 %b[0, 0] -> %ws[0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<?x64xf32, gm>
    npu.dma mte3 %b[0, 0] -> %out[4, 0] : !npu.buf<4x64xf32, ub> -> {GM}
    npu.dma mte3 %b[0, 0] -> %out[0, 0] : !npu.buf<4x64xf32, ub> -> {GM}""")


def test_engines_agree_on_views_workspaces_and_column_copies() -> None:
    x = np.random.default_rng(4).standard_normal((8, 64)).astype(np.float32)
    ref, got = both(parse(VIEWS), [x])
    same(ref, got)
    assert np.array_equal(got.outputs[0][4:, 40:56], x[4:, 8:24]) and "ws" in got.report.tensors


def test_a_program_is_compiled_once_per_region_and_again_after_a_change(monkeypatch) -> None:
    """Runs of one module reuse its programs; an op's attribute replaced in place (the
    vcopy's width) or an op erased makes the run compile anew, with the new meaning, and
    so does a deep copy of the module."""
    import copy

    from xdsl.dialects.builtin import IntegerAttr

    from pto.dialects import npu
    from pto.interp import compiled

    compiles = []
    real = compiled.compile_region
    monkeypatch.setattr(compiled, "compile_region", lambda r, label, hot: compiles.append(label) or real(r, label, hot))
    module = parse(VIEWS)
    x = np.random.default_rng(4).standard_normal((8, 64)).astype(np.float32)
    first = run(module, [x])
    again = run(module, [x])
    assert compiles == ["vector"]
    same(first, again)
    vcopy = next(op for op in module.walk() if isinstance(op, npu.VCopyOp))
    vcopy.properties["width"] = IntegerAttr.from_index_int_value(8)
    narrower = run(module, [x])
    ref = run(module, [x], engine="interp")
    assert compiles == ["vector"] * 2
    same(ref, narrower)
    out = narrower.outputs[0]
    assert np.array_equal(out[4:, 40:48], x[4:, 8:16]) and not out[4:, 48:56].any()
    vcopy.detach()
    vcopy.erase()
    run(module, [x])
    assert compiles == ["vector"] * 3
    copied = copy.deepcopy(module)  # carries the cached program, of the original's ops
    run(copied, [x])
    assert compiles == ["vector"] * 4


@pytest.mark.parametrize("hot", [0, 7, 10**9])
def test_engines_agree_with_hot_and_plain_groups(monkeypatch, hot: int) -> None:
    """A graph group of at least `HOT` tasks runs its hot program (GM copies written out),
    a smaller one its plain program; every group hot with 0, none with a huge `HOT`, some
    of each with 7: the run is the interpreter's either way."""
    from pto.interp import compiled

    monkeypatch.setattr(compiled, "HOT", hot)
    for name, tokens in (("sk03_standard.mlir", 40), ("hc_pre.mlir", 9)):
        pto_m, npu_m = kernel(name)
        same(*both(npu_m, random_inputs(signature(pto_m), tokens, 2)))


# A tail's tiles past the tensor's last row: no rows, so no access, but outside the
# hot copy's bounds test: its slow path runs (`_STORE_COLD` / `_LOAD_COLD`) and the
# program goes on.
TAIL = graph(f"""    %n = arith.constant 4 : index
    npu.tasks "tail" vector (%b, %i) in (%n, 1) {{
      %a = npu.alloc ub [0] : !npu.buf<2x64xf32, ub>
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c8 = arith.constant 8 : index
      %r = arith.muli %b, %c3 : index
      %past = arith.maxui %r, %c8 : index
      %left = arith.subi %past, %r : index
      %rows = arith.minui %left, %c2 : index
      npu.dma mte2 %x[%r, 0] -> %a[0, 0] rows %rows : {GM} -> !npu.buf<2x64xf32, ub>
      npu.set_flag mte2 -> vector, 0
      npu.wait_flag mte2 -> vector, 0
      npu.vmuls %a, 2.0 -> %a : !npu.buf<2x64xf32, ub> -> !npu.buf<2x64xf32, ub>
      npu.set_flag vector -> mte3, 0
      npu.wait_flag vector -> mte3, 0
      npu.dma mte3 %a[0, 0] -> %out[%r, 0] rows %rows : !npu.buf<2x64xf32, ub> -> {GM}
    }}""")


def test_a_hot_copys_slow_path_keeps_the_pipe_tables(monkeypatch) -> None:
    from pto.interp import codegen, compiled

    monkeypatch.setattr(compiled, "HOT", 0)
    slow, real = [], codegen.states_in
    monkeypatch.setattr(codegen, "states_in", lambda core, entries: slow.append(1) or real(core, entries))
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    runs = {numerics: both(parse(TAIL), [x], numerics=numerics) for numerics in (True, False)}
    for ref, got in runs.values():
        same(ref, got)
    assert len(slow) == 4  # the last task's two copies, in each mode
    written = [0, 1, 3, 4, 6, 7]
    np.testing.assert_array_equal(runs[True][1].outputs[0][written], 2 * x[written])


def test_a_hot_program_is_compiled_only_for_a_group_of_many_tasks(monkeypatch) -> None:
    from pto.interp import compiled

    tiers = []
    real = compiled.compile_region
    monkeypatch.setattr(
        compiled, "compile_region", lambda r, label, hot: tiers.append((label, hot)) or real(r, label, hot)
    )
    monkeypatch.setattr(compiled, "HOT", 5)
    pto_m, _ = kernel("sk03_standard.mlir")
    npu_m = lowered(pto_m)  # a fresh module: nothing compiled yet
    r = run(npu_m, unread_inputs(signature(pto_m), 40), numerics=False)
    ran = r.report.to_json()["tasks"]["groups"]
    hot = [label for label, h in tiers if h]
    assert sorted(hot) == sorted(label for label, n in ran.items() if n >= 5) and hot
    # each group that ran compiled once, in one tier (one plain: 4 tasks); none that did not
    assert sorted(label for label, _ in tiers) == sorted(ran) and len(hot) < len(tiers)


def test_a_region_whose_plain_program_ran_many_tasks_runs_hot_from_then_on(monkeypatch) -> None:
    """A group of fewer than `HOT` tasks runs plain, until its region's plain program has
    been given `HOT_AGAIN` tasks over the module's runs: from the next run on it runs
    hot, and the run is still the interpreter's."""
    from pto.interp import compiled

    tiers: dict[tuple[str, bool], int] = {}  # (label, hot) -> the run that compiled it, from 0
    real = compiled.compile_region

    def compile_region(r, label: str, hot: bool):
        tiers.setdefault((label, hot), len(runs))
        return real(r, label, hot)

    monkeypatch.setattr(compiled, "compile_region", compile_region)
    monkeypatch.setattr(compiled, "HOT", 10)
    monkeypatch.setattr(compiled, "HOT_AGAIN", 10)
    pto_m, _ = kernel("sk03_standard.mlir")
    npu_m = lowered(pto_m)
    inputs = random_inputs(signature(pto_m), 40, 4)
    ref = run(npu_m, inputs, engine="interp")
    runs: list = []
    for _ in range(4):
        runs.append(run(npu_m, inputs, engine="compiled"))
        same(ref, runs[-1])
    tasks = ref.report.to_json()["tasks"]["groups"]
    small = {label: n for label, n in tasks.items() if n < 10}
    assert small and any(n >= 10 for n in tasks.values())
    for label, n in tasks.items():  # hot once earlier runs gave its plain program 10 tasks
        first_hot = 0 if n >= 10 else -(-10 // n)
        assert tiers.get((label, True)) == (first_hot if first_hot < len(runs) else None), label
        assert tiers.get((label, False)) == (None if n >= 10 else 0), label


@pytest.mark.parametrize("hot", [0, 10**9])
def test_the_groups_of_one_loops_unroll_factors_share_one_code_object(monkeypatch, hot: int) -> None:
    """The same ops on tiles of other sizes (the loop's groups of 32 and 8 tokens at
    t=40) are one source, compiled once, each program with its own numbers; in both
    tiers, and the run is the interpreter's."""
    from pto.interp import codegen, compiled

    programs = {}
    real = compiled.compile_region
    monkeypatch.setattr(compiled, "HOT", hot)
    monkeypatch.setattr(codegen, "_CODES", codegen.OrderedDict())
    monkeypatch.setattr(compiled, "compile_region", lambda r, label, h: programs.setdefault(label, real(r, label, h)))
    pto_m, _ = kernel("sk03_standard.mlir")
    npu_m = lowered(pto_m)
    same(*both(npu_m, random_inputs(signature(pto_m), 40, 3)))
    assert sorted(programs) == ["linear.32", "linear.8", "rmsnorm.32", "rmsnorm.8"]
    for kind in ("linear", "rmsnorm"):
        big, small = programs[f"{kind}.32"], programs[f"{kind}.8"]
        assert big.fn.__code__ is small.fn.__code__ and big.fn.__globals__ is not small.fn.__globals__
    assert len(codegen._CODES) == 2


def test_the_code_kept_is_bounded_and_the_least_recently_used_goes_first(monkeypatch) -> None:
    from pto.interp import codegen

    monkeypatch.setattr(codegen, "_CODES", codegen.OrderedDict())
    monkeypatch.setattr(codegen, "CODE_KEPT", 2)
    a, b, c = (codegen._code(f"x = {i}\n", "t") for i in range(3))
    assert list(codegen._CODES) == ["x = 1\n", "x = 2\n"]
    assert codegen._code("x = 1\n", "t") is b and codegen._code("x = 0\n", "t") is not a
    assert list(codegen._CODES) == ["x = 1\n", "x = 0\n"]


# flags waited for by the scalar unit and by a pipe (a store of a buffer the vector
# pipe never wrote: only the flag holds it), two sets of one flag queued and consumed in
# order (the compiled engine inlines them)
FLAGS = launch(
    f"""
    %a = npu.alloc ub [0] : {UB}
    %b = npu.alloc ub [4096] : {UB}
    npu.dma mte2 %x[0, 0] -> %a[0, 0] : {GM} -> {UB}
    npu.set_flag mte2 -> scalar, 0
    npu.dma mte2 %x[0, 0] -> %b[0, 0] : {GM} -> {UB}
    npu.set_flag mte2 -> scalar, 0
    npu.wait_flag mte2 -> scalar, 0
    npu.vmuls %a, 3.0 -> %a : {UB} -> {UB}
    npu.wait_flag mte2 -> scalar, 0
    npu.vadd %a, %b -> %a : {UB}, {UB} -> {UB}
    npu.set_flag vector -> mte3, 1
    npu.set_flag vector -> mte3, 1
    npu.wait_flag vector -> mte3, 1
    npu.dma mte3 %b[0, 0] -> %out[0, 0] : {UB} -> {GM}
    npu.wait_flag vector -> mte3, 1
    npu.dma mte3 %a[0, 0] -> %out[0, 0] : {UB} -> {GM}""",
    vector=3,
)


def test_engines_agree_on_scalar_and_pipe_flags_queued_twice() -> None:
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    ref, got = both(parse(FLAGS), [x])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[0], 4 * x)


def test_engines_agree_on_cube_ops() -> None:
    from test_interp_npu import CUBE, CUBE_ARGS
    from test_interp_npu import kernel as cube_kernel

    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    same(*both(parse(cube_kernel("", CUBE_ARGS.replace("%b:", "%bt:"), vector=0, cube=CUBE)), [a, b]))
    # a fixpipe to GM that adds into it (split-K's) is not written out: its generic path
    plain = parse(cube_kernel("", CUBE_ARGS.replace("%b:", "%bt:"), vector=0, cube=CUBE))
    atomic = CUBE.replace("-> %o1[0, 0] :", "-> %o1[0, 0] atomic_add :").replace(
        "npu.barrier all",
        "npu.fixpipe %acc[0, 0] -> %o1[0, 0] : !npu.buf<32x16xi32, l0c> -> !npu.buf<32x16xi32, gm>\n      npu.barrier all",
    )
    ref, got = both(parse(cube_kernel("", CUBE_ARGS.replace("%b:", "%bt:"), vector=0, cube=atomic)), [a, b])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[1], 2 * run(plain, [a, b]).outputs[1])


@pytest.mark.parametrize(("bt", "split"), [(True, False), (False, False), (True, True)])
def test_engines_agree_on_ragged_k_and_n_tiles(bt: bool, split: bool) -> None:
    """K = 255 in 128-wide slices and N = 200 in 64-column tiles: the tail copies of valid
    columns (`cols`), zero-filled past them, and the fixpipe's tail store, run per task
    (the stacked numerics leave them out) and timed alike; a [K, N] weight's K tail is its
    rows; with split-K (K = 1000) the last run holds the ragged slice and the sum group's last
    column tile is ragged too."""
    import pto.pypto as pypto

    kk = 1000 if split else 255  # (split-K: runs of one 128 slice, the last 104 wide)
    w_shape = [200, kk] if bt else [kk, 200]

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, kk], pypto.DT_BF16), b: pypto.Tensor(w_shape, pypto.DT_BF16),
          out: pypto.Tensor([pypto.DYNAMIC, 200], pypto.DT_FP32)):  # fmt: skip
        pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 64], enable_split_k=split)
        for i, p in pypto.loop_unroll(0, a.shape[0], 1, unroll_list=[16, 1]):
            pypto.assemble(pypto.matmul(pypto.view(a, [p, kk], [i, 0]), b, pypto.DT_FP32, b_trans=bt), [i, 0], out)

    rng = np.random.default_rng(4)
    a = rng.standard_normal((37, kk)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(w_shape).astype(ml_dtypes.bfloat16)
    npu_m = api.compile(k.trace(a, b, np.zeros((37, 200), np.float32))).npu
    assert "cols %ncols" in str(npu_m) and ('.sum" vector' in str(npu_m)) == split
    ref, got = both(npu_m, [a, b])
    same(ref, got)
    want = a.astype(np.float64) @ (b.astype(np.float64).T if bt else b.astype(np.float64))
    np.testing.assert_allclose(got.outputs[0], want, rtol=1e-4, atol=1e-3)
    timing = run(npu_m, [a, b], trace=True, engine="compiled", numerics=False)
    assert timing.report.to_json() == got.report.to_json()


A0, B0, ACC = "!npu.buf<32x64xi8, l0a>", "!npu.buf<64x16xi8, l0b>", "!npu.buf<32x16xi32, l0c>"

# An i8 product accumulated 17 times (sums above 2^24), stored, then added again.
BIG_SUMS = f"""func.func @k(%a: !npu.buf<32x64xi8, gm>, %b: !npu.buf<64x16xi8, gm>,
    %o: !npu.buf<32x16xi32, gm> {{pto.output}}) {{
  npu.launch cube 1 (%c) {{
      %a1 = npu.alloc l1 [0] : !npu.buf<32x64xi8, l1>
      %b1 = npu.alloc l1 [2048] : !npu.buf<64x16xi8, l1>
      %a0 = npu.alloc l0a [0] : {A0}
      %b0 = npu.alloc l0b [0] : {B0}
      %acc = npu.alloc l0c [0] : {ACC}
      %t = arith.constant true
      npu.dma mte2 %a[0, 0] -> %a1[0, 0] : !npu.buf<32x64xi8, gm> -> !npu.buf<32x64xi8, l1>
      npu.dma mte2 %b[0, 0] -> %b1[0, 0] : !npu.buf<64x16xi8, gm> -> !npu.buf<64x16xi8, l1>
      npu.dma mte1 %a1[0, 0] -> %a0[0, 0] : !npu.buf<32x64xi8, l1> -> {A0}
      npu.dma mte1 %b1[0, 0] -> %b0[0, 0] : !npu.buf<64x16xi8, l1> -> {B0}
      npu.mmad %a0, %b0 -> %acc : {A0}, {B0} -> {ACC}
{"".join(f"      npu.mmad %a0, %b0 -> %acc acc %t : {A0}, {B0} -> {ACC}{chr(10)}" for _ in range(16))}\
      npu.fixpipe %acc[0, 0] -> %o[0, 0] : {ACC} -> !npu.buf<32x16xi32, gm>
      npu.barrier all
      npu.fixpipe %acc[0, 0] -> %o[0, 0] atomic_add : {ACC} -> !npu.buf<32x16xi32, gm>
  }}
  func.return
}}"""


def test_an_integer_atomic_add_is_exact() -> None:
    """An i32 fixpipe that adds into GM adds integers: a sum above 2^24 keeps its low
    bits (it went through f32)."""
    a = np.full((32, 64), 127, np.int8)
    b = np.full((64, 16), 127, np.int8)
    b[0, 0] = 126
    ref, got = both(parse(BIG_SUMS), [a, b])
    same(ref, got)
    once = 17 * (a.astype(np.int64) @ b.astype(np.int64))
    assert once.max() > 2**24
    np.testing.assert_array_equal(got.outputs[0], 2 * once)


def float_atomic(dst: str, first: str, then: str) -> str:
    """An f32 product fixpiped to a `dst` output (round mode `first`), then added into
    it (`then`)."""
    a, b, acc = "!npu.buf<16x8xf32, {}>", "!npu.buf<8x16xf32, {}>", "!npu.buf<16x16xf32, l0c>"
    out = f"!npu.buf<16x16x{dst}, gm>"
    return f"""func.func @k(%a: {a.format("gm")}, %b: {b.format("gm")}, %o: {out} {{pto.output}}) {{
  npu.launch cube 1 (%c) {{
      %a1 = npu.alloc l1 [0] : {a.format("l1")}
      %b1 = npu.alloc l1 [512] : {b.format("l1")}
      %a0 = npu.alloc l0a [0] : {a.format("l0a")}
      %b0 = npu.alloc l0b [0] : {b.format("l0b")}
      %acc = npu.alloc l0c [0] : {acc}
      npu.dma mte2 %a[0, 0] -> %a1[0, 0] : {a.format("gm")} -> {a.format("l1")}
      npu.dma mte2 %b[0, 0] -> %b1[0, 0] : {b.format("gm")} -> {b.format("l1")}
      npu.dma mte1 %a1[0, 0] -> %a0[0, 0] : {a.format("l1")} -> {a.format("l0a")}
      npu.dma mte1 %b1[0, 0] -> %b0[0, 0] : {b.format("l1")} -> {b.format("l0b")}
      npu.mmad %a0, %b0 -> %acc : {a.format("l0a")}, {b.format("l0b")} -> {acc}
      npu.fixpipe %acc[0, 0] -> %o[0, 0]{first} : {acc} -> {out}
      npu.barrier all
      npu.fixpipe %acc[0, 0] -> %o[0, 0]{then} atomic_add : {acc} -> {out}
  }}
  func.return
}}"""


@pytest.mark.parametrize(("dst", "mode"), [("f32", None), ("bf16", RoundMode.TRUNC), ("f16", RoundMode.CEIL)])
def test_a_float_atomic_add_adds_in_f32_and_rounds_the_sum_once(dst: str, mode: RoundMode | None) -> None:
    """A fixpipe that adds into a float output: f32 adds the f32 accumulator; bf16/f16
    widen the stored value, add in f32 and round the sum once, with the fixpipe's mode."""
    rng = np.random.default_rng(7)
    # multiples of 1/8: every product and sum is exact in f32, whatever the order
    a = (rng.integers(-512, 512, (16, 8)) / 8).astype(np.float32)
    b = (rng.integers(-512, 512, (8, 16)) / 8).astype(np.float32)
    first, then = ("", "") if mode is None else (" round rint", f" round {mode.value}")
    ref, got = both(parse(float_atomic(dst, first, then)), [a, b])
    same(ref, got)
    acc = a @ b
    assert got.outputs[0].dtype == nx.DTYPES[dst]
    if mode is None:
        np.testing.assert_array_equal(got.outputs[0], 2 * acc)
        return
    total = nx.f32(nx.cast(acc, "f32", dst, RoundMode.RINT)) + acc
    want = nx.cast(total, "f32", dst, mode)
    assert not np.array_equal(want, nx.cast(total, "f32", dst, RoundMode.RINT))  # the mode shows
    np.testing.assert_array_equal(got.outputs[0].view(np.uint16), want.view(np.uint16))


# Buffers carried through a loop are block arguments, not `npu.alloc` results: every op
# on them takes the compiled engine's generic path (a DMA between L1 and a carried L0
# buffer is neither written-out kind).
CARRIED_CUBE = f"""cube 1 (%c) {{
      %a1 = npu.alloc l1 [0] : !npu.buf<32x64xi8, l1>
      %b1 = npu.alloc l1 [2048] : !npu.buf<64x16xi8, l1>
      %a0 = npu.alloc l0a [0] : {A0}
      %b0 = npu.alloc l0b [0] : {B0}
      %acc = npu.alloc l0c [0] : {ACC}
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %x, %y, %z = scf.for %i = %c0 to %c2 step %c1 iter_args(%p = %a0, %q = %b0, %r = %acc) -> ({A0}, {B0}, {ACC}) {{
        npu.dma mte2 %a[0, 0] -> %a1[0, 0] : !npu.buf<32x64xi8, gm> -> !npu.buf<32x64xi8, l1>
        npu.dma mte2 %b[0, 0] -> %b1[0, 0] : !npu.buf<64x16xi8, gm> -> !npu.buf<64x16xi8, l1>
        npu.dma mte1 %a1[0, 0] -> %p[0, 0] : !npu.buf<32x64xi8, l1> -> {A0}
        npu.dma mte1 %b1[0, 0] -> %q[0, 0] : !npu.buf<64x16xi8, l1> -> {B0}
        %t = arith.cmpi ne, %i, %c0 : index
        npu.mmad %p, %q -> %r acc %t : {A0}, {B0} -> {ACC}
        scf.yield %p, %q, %r : {A0}, {B0}, {ACC}
      }}
      npu.fixpipe %z[0, 0] -> %o1[0, 0] : {ACC} -> !npu.buf<32x16xi32, gm>
    }}"""
CARRIED_VECTOR = launch(f"""    %a = npu.alloc ub [0] : {UB}
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%b = %a) -> ({UB}) {{
      npu.dma mte2 %x[0, 0] -> %b[0, 0] : {GM} -> {UB}
      npu.vmuls %b, 2.0 -> %b : {UB} -> {UB}
      npu.dma mte3 %b[0, 0] -> %out[0, 0] : {UB} -> {GM}
      scf.yield %b : {UB}
    }}""")


def test_engines_agree_on_ops_over_buffers_carried_through_a_loop() -> None:
    from test_interp_npu import CUBE_ARGS
    from test_interp_npu import kernel as cube_kernel

    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    ref, got = both(parse(cube_kernel("", CUBE_ARGS, vector=0, cube=CARRIED_CUBE)), [a, b])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[1], (2 * (a.astype(np.int64) @ b)).astype(np.int32))
    x = rng.standard_normal((8, 64)).astype(np.float32)
    ref, got = both(parse(CARRIED_VECTOR), [x])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[0], 2 * x)


ERRORS = {
    "out of bounds": (
        graph("""    %n = arith.constant 3 : index
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
      %a = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
      %c4 = arith.constant 4 : index
      %r = arith.muli %b, %c4 : index
      npu.dma mte2 %x[%r, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<8x64xf32, ub>
    }"""),
        MachineError,
        r"source \[4, \+8\) of axis 0 is outside x",
    ),
    "flag never set": (
        graph("""    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      npu.wait_flag mte2 -> vector, 3
    }"""),
        MachineError,
        "aiv0: wait_flag mte2 -> vector, 3 was never set",
    ),
    "deadlock in a graph": (
        graph("""    %n = arith.constant 3 : index
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
      npu.cross_core_wait 9, %c1
    }"""),
        DeadlockError,
        "aiv0 waits for cross-core flag 9",
    ),
    # The verifier lets a graph's block hold any op (it checks that an npu.tasks is
    # directly inside one, not what an npu.graph is inside).
    "a graph in a graph's block": (
        graph("""    npu.graph cube 1 vector 1 {
    }"""),
        MachineError,
        "'npu.graph' cannot nest",
    ),
    "deadlock in a launch": (
        launch(
            """    %n = arith.constant 3 : index
    npu.cross_core_wait 9, %n""",
            vector=2,
        ),
        DeadlockError,
        "aiv0 waits for cross-core flag 9",
    ),
    "outside a ub buffer": (
        launch(f"""    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %c2 = arith.constant 2 : index
    npu.dma mte2 %x[0, 0] -> %a[%c2, 0] rows %c2 : {GM} -> !npu.buf<4x64xf32, ub>"""),
        MachineError,
        r"destination \[2, \+4\) of axis 0 is outside ub buffer at offset 0",
    ),
    # The compiled engine writes an on-chip copy out with the checks of its dynamic offsets
    # (a static one outside is the verifier's error).
    "on-chip copy outside by a dynamic offset": (
        cube_launch("""    %a = npu.alloc l1 [0] : !npu.buf<8x64xbf16, l1>
    %b = npu.alloc l0a [0] : !npu.buf<4x32xbf16, l0a>
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    scf.for %i = %c2 to %c3 step %c2 {
      %k = arith.muli %i, %c2 : index
      npu.dma mte1 %a[%k, 0] -> %b[0, 0] : !npu.buf<8x64xbf16, l1> -> !npu.buf<4x32xbf16, l0a>
      %c = arith.muli %k, %c2 : index
      npu.dma mte1 %a[%c, 16] -> %b[0, 0] : !npu.buf<8x64xbf16, l1> -> !npu.buf<4x32xbf16, l0a>
    }"""),
        MachineError,
        r"source \[8, \+4\) of axis 0 is outside l1 buffer at offset 0",
    ),
    # A copy between GM and an allocated buffer is written out under a test of its
    # offsets, the GM tensor's shape known only at run time.
    "store outside by a dynamic offset": (
        launch(f"""    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %c5 = arith.constant 5 : index
    npu.dma mte3 %a[0, 0] -> %out[%c5, 0] : !npu.buf<4x64xf32, ub> -> {GM}"""),
        MachineError,
        r"destination \[5, \+4\) of axis 0 is outside out",
    ),
    "fixpipe outside by a dynamic offset": (
        cube_launch("""    %acc = npu.alloc l0c [0] : !npu.buf<4x64xf32, l0c>
    %c5 = arith.constant 5 : index
    npu.fixpipe %acc[0, 0] -> %out[%c5, 0] : !npu.buf<4x64xf32, l0c> -> !npu.buf<8x64xf32, gm>"""),
        MachineError,
        r"destination \[5, \+4\) of axis 0 is outside out",
    ),
    # Undefined in arith and scf: errors at the op, not Python's (the compiled engine
    # tests a divisor or a step it does not know to be a constant that is fine).
    "division by zero": (
        launch("""    %c4 = arith.constant 4 : index
    %q = arith.divui %c4, %v : index"""),
        MachineError,
        "'arith.divui' divides by zero",
    ),
    "remainder by a constant zero in a task": (
        graph("""    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      %c0 = arith.constant 0 : index
      %r = arith.remui %b, %c0 : index
    }"""),
        MachineError,
        "'arith.remui' divides by zero",
    ),
    "ceil-division by zero in a task": (
        graph("""    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      %r = arith.ceildivui %c1, %b : index
    }"""),
        MachineError,
        "'arith.ceildivui' divides by zero",
    ),
    "signed division by zero": (
        launch("""    %r = arith.divsi %v, %v : index"""),
        MachineError,
        "'arith.divsi' divides by zero",
    ),
    "signed remainder by zero": (
        launch("""    %r = arith.remsi %v, %v : index"""),
        MachineError,
        "'arith.remsi' divides by zero",
    ),
    "floor division by zero": (
        launch("""    %r = arith.floordivsi %v, %v : index"""),
        MachineError,
        "'arith.floordivsi' divides by zero",
    ),
    "shift left by a negative amount": (
        launch("""    %m = arith.constant -1 : index
    %r = arith.shli %v, %m : index"""),
        MachineError,
        r"'arith.shli' shifts by a negative amount \(-1\)",
    ),
    "shift right by a negative amount": (
        launch("""    %m = arith.constant -2 : index
    %r = arith.shrsi %v, %m : index"""),
        MachineError,
        r"'arith.shrsi' shifts by a negative amount \(-2\)",
    ),
    "loop of step zero": (
        launch("""    %c3 = arith.constant 3 : index
    scf.for %i = %v to %c3 step %v {
    }"""),
        MachineError,
        "'scf.for' step must be positive, got 0",
    ),
    "loop of a negative step": (
        launch("""    %c3 = arith.constant 3 : index
    %m = arith.constant -1 : index
    scf.for %i = %c3 to %v step %m {
    }"""),
        MachineError,
        "'scf.for' step must be positive, got -1",
    ),
}


@pytest.mark.parametrize(
    ("expr", "row"),
    [
        ("arith.divui %c7, %c2", 3),
        ("arith.remui %c7, %c2", 1),
        ("arith.ceildivui %c7, %c2", 4),
        ("arith.divui %c7, %two", 3),  # (a divisor the compiled engine tests)
        ("arith.divsi %c7, %c2", 3),
        ("arith.remsi %c7, %c2", 1),
        ("arith.floordivsi %c7, %c2", 3),
        ("arith.shli %c1, %c2", 4),
        ("arith.shrsi %c7, %c1", 3),
    ],
)
def test_checked_index_arithmetic_computes_its_values(expr: str, row: int) -> None:
    """The divisions and shifts tested for undefined operands compute as before: the
    result, a row offset, picks the row copied."""
    text = launch(f"""    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c7 = arith.constant 7 : index
    %two = arith.addi %c1, %c1 : index
    %r = {expr} : index
    %a = npu.alloc ub [0] : !npu.buf<1x64xf32, ub>
    npu.dma mte2 %x[%r, 0] -> %a[0, 0] : {GM} -> !npu.buf<1x64xf32, ub>
    npu.set_flag mte2 -> mte3, 0
    npu.wait_flag mte2 -> mte3, 0
    npu.dma mte3 %a[0, 0] -> %out[0, 0] : !npu.buf<1x64xf32, ub> -> {GM}""")
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    ref, got = both(parse(text), [x])
    same(ref, got)
    np.testing.assert_array_equal(got.outputs[0][0], x[row])


@pytest.mark.parametrize("numerics", [True, False])
@pytest.mark.parametrize("case", ERRORS)
def test_engines_report_the_same_error_at_the_same_op(case: str, numerics: bool) -> None:
    text, kind, message = ERRORS[case]
    module = LocatingParser(context(), text, "<test>").parse_module()  # (a graph in a graph does not verify)
    errors = []
    for engine in ("interp", "compiled"):
        with pytest.raises(kind, match=message) as e:
            run(module, [np.ones((8, 64), np.float32)], engine=engine, numerics=numerics)
        errors.append(e.value)
    assert str(errors[0]) == str(errors[1])
    assert getattr(errors[0], "op", None) is getattr(errors[1], "op", None)


def test_a_target_given_to_run_without_a_path_the_kernel_uses_is_an_error_at_the_copy() -> None:
    """The verifier checked the kernel's copies against its own target; a target given to
    `run` is checked too, before any op runs, a copy that never runs included."""
    from pto.targets import load_target

    module = parse(
        launch(f"""    %a = npu.alloc ub [0] : {UB}
    %no = arith.constant false
    scf.if %no {{
      npu.dma mte2 %x[0, 0] -> %a[0, 0] : {GM} -> {UB}
    }}""")
    )
    base = load_target()
    lacking = base.changed(paths={p: r for p, r in base.paths.items() if p != "gm->ub"})
    for engine in ("interp", "compiled"):
        with pytest.raises(MachineError, match=f"target {base.name} has no data path gm -> ub") as e:
            run(module, [np.ones((8, 64), np.float32)], target=lacking, engine=engine)
        assert e.value.op.name == "npu.dma"
    run(module, [np.ones((8, 64), np.float32)], target=base)


WHILE = launch("""
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %r = scf.while (%a = %c0) : (index) -> index {
      %go = arith.cmpi ult, %a, %c2 : index
      scf.condition(%go) %a : index
    } do {
    ^bb0(%b: index):
      %c1 = arith.constant 1 : index
      %n = arith.addi %b, %c1 : index
      scf.yield %n : index
    }""")


@pytest.mark.parametrize("quantum", [2000, 50])
def test_a_core_offers_the_turn_only_where_another_may_take_it(monkeypatch, quantum: int) -> None:
    """A program skips a `YIELD` the scheduler would refuse (`calm_until`, set when its
    turn starts): the scheduler sees far fewer than one per GM copy (at the model's
    quantum none here), and the run is the interpreter's; at a small quantum (both
    engines') turns are offered and some taken, and the runs still agree."""
    from pto.interp import compiled, scheduler

    offers, taken = [], []
    after = compiled.EventScheduler._after

    def counted(self, w, request):
        offers.append(request is compiled.YIELD)
        chosen = after(self, w, request)
        taken.append(request is compiled.YIELD and chosen is not w)
        return chosen

    monkeypatch.setattr(compiled.EventScheduler, "_after", counted)
    monkeypatch.setattr(compiled, "QUANTUM", quantum)
    monkeypatch.setattr(scheduler, "QUANTUM", quantum)
    pto_m, npu_m = kernel("sk03_standard.mlir")
    ref, got = both(npu_m, random_inputs(signature(pto_m), 40, 0))
    same(ref, got)
    gm_copies = sum(e.pipe in ("mte2", "mte3") or e.name == "npu.fixpipe" for e in got.report.events)
    assert sum(offers) < gm_copies / 2
    if quantum < 2000:
        assert sum(taken) > 0


def test_a_turn_reads_the_graph_clocks_about_once(monkeypatch) -> None:
    """`_behind` first tries the clocks `_next` read at the turn's start (lower bounds of
    the others' now): in a flat loop, where each task is a turn, `TaskGraph.clocks` is
    read about once per turn, not twice, and the run is the interpreter's."""
    from pto.interp import compiled, graph

    reads, turns = [], []
    clocks, nxt = graph.TaskGraph.clocks, compiled.EventScheduler._next
    monkeypatch.setattr(graph.TaskGraph, "clocks", lambda self: reads.append(1) or clocks(self))
    monkeypatch.setattr(compiled.EventScheduler, "_next", lambda self: turns.append(1) or nxt(self))
    pto_m, npu_m = kernel("sk03_standard.mlir", "1")
    inputs = random_inputs(signature(pto_m), 24, 0)
    got = run(npu_m, inputs, trace=True, engine="compiled")
    assert len(turns) > 100 and len(reads) < 1.2 * len(turns)
    same(run(npu_m, inputs, trace=True, engine="interp"), got)


def test_a_hot_program_keeps_its_pipe_tables_in_locals(monkeypatch) -> None:
    """A hot program reads the core's data dependence entries (`written`, `read`) when it
    starts and writes them back when it ends (and around calls that use them), not a
    lookup per op and entry; the run is the interpreter's."""
    from collections import defaultdict

    from pto.interp import compiled, machine

    class Counted(defaultdict):
        uses = 0

        def __getitem__(self, key):
            Counted.uses += 1
            return super().__getitem__(key)

        def __setitem__(self, key, value):
            Counted.uses += 1
            super().__setitem__(key, value)

    post = machine.Core.__post_init__

    def counted(core) -> None:
        post(core)
        core.written, core.read = Counted(float, core.written), Counted(float, core.read)

    monkeypatch.setattr(compiled, "HOT", 0)
    # (a module of its own: the session's shared one keeps the programs other tests ran it
    # with, compiled hot or not as their runs went)
    pto_m = example("sk03_standard.mlir")
    npu_m = lowered(pto_m)
    inputs = random_inputs(signature(pto_m), 40, 0)
    monkeypatch.setattr(machine.Core, "__post_init__", counted)
    got = run(npu_m, inputs, trace=True, engine="compiled")
    monkeypatch.undo()
    booked = sum(e.pipe != machine.TASK_TRACK for e in got.report.events)
    # (a lookup per op and table was 7.7 per booked op here; each task now reads and
    # writes back its program's entries once, 2.6 per op at these short tasks)
    assert booked > 1000 and Counted.uses < 3 * booked
    same(run(npu_m, inputs, trace=True, engine="interp"), got)


def test_scalar_busy_is_the_issue_cost_added_once_per_slot() -> None:
    """SCALAR's busy cycles are counted in slots and summed when the launch ends
    (`Core.settle`): with an issue cost of 0.1, the sequential sum of that many 0.1s (not
    a product, which differs in the last bits), in both engines."""
    from pto.targets import load_target

    pto_m, npu_m = kernel("sk03_standard.mlir")
    inputs = random_inputs(signature(pto_m), 17, 0)
    # (fixed task latencies: the AICPU threads would hand tasks to other cores when the
    # issue cost changes the tasks' ends, and the per-core sums compared below with them)
    tgt = load_target("ascend910b1").changed(aicpu__enabled=False)
    ones = run(npu_m, inputs, target=tgt.changed(latency__issue=1), numerics=False).report
    ref, got = both(npu_m, inputs, target=tgt.changed(latency__issue=0.1), numerics=False)
    same(ref, got)
    products = 0
    for name, pipes in ones.cores.items():
        total = 0.0
        for _ in range(int(pipes["scalar"])):
            total += 0.1
        assert got.report.cores[name]["scalar"] == total
        products += total != int(pipes["scalar"]) * 0.1
    assert products  # (the sum and the product differ for some core: the test tells them apart)


def test_an_op_the_compiler_lacks_is_a_machine_error_at_it() -> None:
    module = parse(WHILE)
    x = np.ones((8, 64), np.float32)
    run(module, [x], engine="interp")
    with pytest.raises(MachineError, match="the compiled engine cannot run 'scf.while' in a core program") as e:
        run(module, [x], engine="compiled")
    assert e.value.op.name == "scf.while"


# A launch or a graph inside a core program. Before the verifier and both engines refused
# it, the interp engine's inner one reset `machine.scheduler` under the outer one's
# cores: a cross-core wait after it failed although core 1 set the flag, and a graph in
# a task left the other core of the outer graph without a scheduler.
NESTED = {
    "a launch in a launch": launch(
        f"""    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %first = arith.cmpi eq, %v, %c0 : index
    scf.if %first {{
      npu.launch vector 1 (%w) {{
      }}
      npu.cross_core_wait 9, %c1
    }} else {{
      %a = npu.alloc ub [0] : {UB}
      npu.dma mte2 %x[0, 0] -> %a[0, 0] : {GM} -> {UB}
      npu.cross_core_set 9
    }}""",
        vector=2,
    ),
    "a graph in a task": graph(
        """    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      npu.graph cube 1 vector 1 {
      }
    }""",
        vector=1,
    ),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", NESTED)
def test_a_launch_or_graph_inside_a_core_program_is_refused_at_it(case: str, engine: str) -> None:
    """By the verifier, and by both engines for IR that was not verified (built in Python)."""
    module = LocatingParser(context(), NESTED[case], "<test>").parse_module()  # (not verified)
    inner = next(
        o for o in module.walk() if o.name in ("npu.launch", "npu.graph") and o.parent_op().name != "func.func"
    )
    message = f"'{inner.name}' runs on the host: it cannot be inside a core program"
    with pytest.raises(DiagnosticError, match=message) as d:
        verify_each(module)
    assert d.value.location == inner.location
    with pytest.raises(MachineError, match=message) as e:
        run(module, [np.ones((8, 64), np.float32)], engine=engine)
    assert e.value.op is inner


# ------------------------------------------------------------------------- selection and bad input


def test_bad_engine_and_numerics_arguments() -> None:
    pto_m, npu_m = kernel("sk03_standard.mlir")
    with pytest.raises(ValueError, match="unknown engine 'bogus' .known: interp, compiled."):
        run(npu_m, random_inputs(signature(pto_m), 1), engine="bogus")
    for kw, message in (
        (dict(engine="bogus"), "unknown engine 'bogus'"),
        (dict(numerics=1), "numerics must be"),
        (dict(numerics=False, golden=True), "cannot be combined with golden"),
        (dict(numerics=False, level="pto"), "numerics=False needs the npu level"),
    ):
        with pytest.raises(api.RunError, match=message):
            api.run(pto_m, tokens=1, **kw)


def test_api_runs_either_engine() -> None:
    pto_m, _ = kernel("mla_wqa_qrmsnorm.mlir")
    c = api.compile(pto_m)
    a, b = (api.run(c, tokens=5, engine=e, golden=True) for e in ("interp", "compiled"))
    assert a.ok and b.ok and a.report.to_json() == b.report.to_json()
    t = api.run(c, tokens=5, engine="compiled", numerics=False)
    assert t.report.to_json() == b.report.to_json()


def test_pto_run_engine_flags(capsys) -> None:
    path = str(example.__globals__["ROOT"] / "examples" / "sk03_standard.mlir")
    args = [path, "--random-inputs", "--tokens", "3", "--json"]
    outs = []
    for extra in (["--engine", "interp"], ["--engine", "compiled"], ["--engine", "compiled", "--no-numerics"]):
        assert pto_run.main([*args, *extra]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2]
    with pytest.raises(SystemExit) as e:  # argparse's usage error
        pto_run.main([*args, "--engine", "bogus"])
    assert e.value.code == 2
    assert pto_run.main([*args, "--no-numerics", "--golden"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "pto-run: error: argument --engine: invalid choice: 'bogus' (choose from 'interp', 'compiled')",
        "pto-run: error: --no-numerics computes no outputs: it cannot be combined with --golden",
    ]


def test_a_core_program_of_several_blocks_is_refused() -> None:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    from pto.interp.codegen import compile_region

    region = Region([Block(), Block()])
    holder = ModuleOp(region)
    with pytest.raises(MachineError, match="core programs of one block") as e:
        compile_region(region, "t")
    assert e.value.op is holder


def test_blas_runs_one_thread_inside_a_run_and_is_restored_after() -> None:
    from pto.interp import blas

    api = blas._openblas()
    if api is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS this process can reach")
    get, _ = api
    before = get()
    with blas.one_thread():
        assert get() == 1
        with blas.one_thread():
            assert get() == 1
        assert get() == 1
    assert get() == before


def test_a_tuner_compiles_a_configurations_programs_once_across_its_token_counts(monkeypatch) -> None:
    """`tuner.evaluate` runs one configuration's module at each token count: no group's
    program is compiled twice in one variant (they are kept on their regions), whatever
    the order of the token counts and groups they use (linear.128 is hot at t=300, with
    32 tasks, plain at t=150, with 16)."""
    from pathlib import Path

    from pto.interp import compiled
    from pto.tuner.evaluate import evaluate

    compiles: list[tuple[str, bool]] = []
    real = compiled.compile_region
    monkeypatch.setattr(
        compiled, "compile_region", lambda r, label, h: compiles.append((label, h)) or real(r, label, h)
    )
    monkeypatch.setattr(compiled, "HOT", 32)
    path = Path(__file__).resolve().parents[2] / "examples" / "sk03_standard.mlir"
    records = evaluate(path.read_text(), str(path), {}, [300, 150, 40, 300, 150], None)
    assert all("error" not in r for r in records) and len(records) == 5
    assert {("linear.128", True), ("linear.128", False)} <= set(compiles)
    assert len(compiles) == len(set(compiles))
