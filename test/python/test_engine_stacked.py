"""Numbers by task group (`pto.interp.stacked`): the compiled engine's stacked numerics
against the interp engine's per-task ones, bit for bit, on the examples (where they
stack, that they did), and each check that sends a run back to the per-task path."""

from __future__ import annotations

import sys
from functools import partial

import numpy as np
import pytest
from kernels import SK03_NAMES, lowered_example
from test_engine import same

from pto.dialects import npu
from pto.interp import compiled, stacked
from pto.interp import npu_ops as ops
from pto.interp import numerics as nx
from pto.interp.codegen_stacked import compile_stacked
from pto.interp.machine import GmTensor
from pto.interp.run import random_inputs, run, signature

# An example whose graph the stacked pass runs with unroll [1] at 37 tokens (hc_pre's column
# loop starts at a column block chosen by the task: `stacked.loop`; the others' own unroll
# hints leave them one body there).
STACKED = ("sk03_standard.mlir", "hc_pre.mlir")


CLOCK = [0.0, 0.0]  # a fake clock for `compiled.CLOCK`: its time, a stacked pass's cost


def counted(monkeypatch) -> dict[str, int]:
    """How many graphs the stacked pass ran, and how many it sent back."""
    n = {"stacked": 0, "unstackable": 0}
    real = stacked.run_numerics

    def run_numerics(*a):
        try:
            real(*a)
        except stacked.Unstackable:
            n["unstackable"] += 1
            raise
        n["stacked"] += 1
        CLOCK[0] += CLOCK[1]  # what a stacked pass costs on the fake clock, if one is set

    monkeypatch.setattr(compiled.stacked, "run_numerics", run_numerics)
    return n


@pytest.mark.parametrize("name", SK03_NAMES)
@pytest.mark.parametrize("factors", [None, "1", "4,1"])
@pytest.mark.parametrize("tokens", [1, 37])
def test_stacked_numerics_are_the_per_task_ones(monkeypatch, name: str, factors: str | None, tokens: int) -> None:
    n = counted(monkeypatch)
    pto_m, npu_m = lowered_example(name, f"pto-sk03-pipeline{{factors={factors}}}" if factors else "pto-sk03-pipeline")
    inputs = random_inputs(signature(pto_m), tokens, tokens)
    ref = run(npu_m, inputs, trace=True, engine="interp")
    # (a copy: what an earlier run of the module chose is kept with its programs)
    got = run(npu_m.clone(), inputs, trace=True, engine="compiled")
    same(ref, got)
    if name in STACKED and factors == "1" and tokens >= compiled.STACK_BODIES:
        assert n == {"stacked": 1, "unstackable": 0}


def test_a_run_the_checks_refuse_is_run_again_per_task(monkeypatch) -> None:
    n = counted(monkeypatch)

    def refuse(*a, **k):
        raise stacked.Unstackable("refused")

    monkeypatch.setattr(stacked.Tracker, "access", refuse)
    pto_m, npu_m = lowered_example("sk03_standard.mlir", "pto-sk03-pipeline{factors=1}")
    npu_m = npu_m.clone()  # (the refusal is kept with its programs)
    inputs = random_inputs(signature(pto_m), 40, 0)
    same(run(npu_m, inputs, trace=True, engine="interp"), run(npu_m, inputs, trace=True, engine="compiled"))
    assert n == {"stacked": 0, "unstackable": 1}


def test_a_refused_program_is_not_stacked_again(monkeypatch) -> None:
    n = counted(monkeypatch)
    monkeypatch.setattr(stacked.Stack, "mmad", _refuse)
    pto_m, npu_m = lowered_example("sk03_standard.mlir", "pto-sk03-pipeline{factors=1}")
    npu_m = npu_m.clone()
    inputs = random_inputs(signature(pto_m), 40, 0)
    ref = run(npu_m, inputs, engine="interp")
    for tokens in (40, 40, 20):  # (refused for any token count: its program is)
        got = run(npu_m, random_inputs(signature(pto_m), tokens, 0), engine="compiled")
    same(ref, run(npu_m, inputs, engine="compiled"))
    assert n == {"stacked": 0, "unstackable": 1}
    assert got.report.to_json() == run(npu_m, random_inputs(signature(pto_m), 20, 0), engine="interp").report.to_json()


def _refuse(*a, **k):
    raise stacked.Unstackable("refused")


@pytest.mark.parametrize(("cost", "stacked_runs"), [(100.0, 2), (-100.0, 4)])
def test_a_graph_runs_the_way_measured_cheaper(monkeypatch, cost: float, stacked_runs: int) -> None:
    """Stacked the first time, per task the second, stacked the third (the first was
    cold), then the cheaper of the two; a per-task trial that costs more than the
    stacked run is given up for a stacked one at once (cost -100: its first task)."""
    n = counted(monkeypatch)
    monkeypatch.setattr(compiled, "CLOCK", lambda: CLOCK[0])
    monkeypatch.setattr(sys.modules[__name__], "CLOCK", [0.0, cost])
    pto_m, npu_m = lowered_example("sk03_standard.mlir", "pto-sk03-pipeline{factors=1}")
    npu_m = npu_m.clone()
    inputs = random_inputs(signature(pto_m), 20, 0)
    ref = run(npu_m, inputs, engine="interp")
    for _ in range(4):
        same(ref, run(npu_m, inputs, engine="compiled"))
    assert n == {"stacked": stacked_runs, "unstackable": 0}


def test_the_way_not_chosen_is_measured_again_at_each_doubling_of_the_runs() -> None:
    """After the three trial runs `_way` picks the way measured cheaper, and the other
    once when the graph's runs reach `RETRY`, twice that, and so on (its first measures
    may have been cold); measured cheaper then, it is picked from then on."""
    costs = {"stacked": 50.0, "stacked runs": 2, "per task": 10.0, "per task runs": 1}
    picks = []
    for _ in range(4 * compiled.RETRY):
        way = compiled._way(costs)
        picks.append((sum(costs[f"{w} runs"] for w in compiled.WAYS), way))
        costs[f"{way} runs"] += 1
    retried = [runs for runs, way in picks if way == "stacked"]
    assert retried == [compiled.RETRY, 2 * compiled.RETRY, 4 * compiled.RETRY]
    costs["stacked"] = 5.0  # (its warm cost, measured at the retry)
    assert compiled._way(costs) == "stacked"


def test_a_per_task_trial_slower_than_the_stacked_run_is_given_up_midway(monkeypatch) -> None:
    """The clock advances by one at each look and by 5 in a stacked pass: the stacked
    run costs 6, the per-task trial passes that after six tasks, is abandoned, and the
    run is made again stacked, with the interp engine's outputs and report. The tasks
    of the run given up are not counted toward a program going hot (`HOT_AGAIN`)."""
    n = counted(monkeypatch)
    monkeypatch.setattr(sys.modules[__name__], "CLOCK", [0.0, 5.0])
    monkeypatch.setattr(compiled, "HOT", 10**6)
    monkeypatch.setattr(compiled, "HOT_AGAIN", 10**6)

    def clock() -> float:
        CLOCK[0] += 1
        return CLOCK[0]

    monkeypatch.setattr(compiled, "CLOCK", clock)
    finished = []
    real = compiled.TaskGraph.finish
    monkeypatch.setattr(compiled.TaskGraph, "finish", lambda g, *a: finished.append(1) or real(g, *a))
    pto_m, npu_m = lowered_example("sk03_standard.mlir", "pto-sk03-pipeline{factors=1}")
    npu_m = npu_m.clone()
    inputs = random_inputs(signature(pto_m), 20, 0)
    ref = run(npu_m, inputs, engine="interp")
    tasks = []
    for runs in (1, 2, 3):
        finished.clear()
        same(ref, run(npu_m, inputs, engine="compiled"))
        assert n == {"stacked": runs, "unstackable": 0}
        tasks.append(len(finished))
    assert tasks[1] == tasks[0] + 6 and tasks[2] == tasks[0]  # (six tasks of the trial, then stacked)
    regions = [op.body for op in npu_m.walk() if isinstance(op, npu.TasksOp)]
    plain = sum(
        getattr(r, compiled._CACHED)[2].get(compiled._PLAIN_TASKS, 0) for r in regions if hasattr(r, compiled._CACHED)
    )
    assert plain == 3 * tasks[0]


def test_a_loop_may_start_where_the_task_says_if_its_trips_do_not_differ() -> None:
    lb = np.array([[[0], [4], [8]]])  # (body, task // split, task % split)
    got = list(stacked.loop(lb, lb + 4, 2))
    assert [g.reshape(-1).tolist() for g in got] == [[0, 4, 8], [2, 6, 10]]
    assert list(stacked.loop(np.array([[[3]], [[3]]]), 7, 2)) == [3, 5]
    assert list(stacked.loop(2, 7, np.array([[[2], [2]]]))) == [2, 4, 6]
    with pytest.raises(stacked.Unstackable, match="differs"):
        stacked.loop(lb, np.array([[[4], [8], [10]]]), 2)
    with pytest.raises(stacked.Unstackable, match="not positive"):
        stacked.loop(0, 4, 0)


def _tracker(above: dict[int, set[int]]) -> tuple[stacked.Tracker, GmTensor]:
    out = GmTensor("out", np.zeros((8, 4), np.float32), 0)
    return stacked.Tracker([], above), out


def _store(t: stacked.Tracker, rank: int, bodies: int, tasks: int, gm: GmTensor, row, col, loop: int = 0) -> None:
    st = stacked.Stack(t, rank, bodies, tasks, loop)
    st.store(gm, [row, col], (1, 1), None, np.ones((bodies, tasks, 1, 1, 1), np.float32))
    t.close(rank)  # (the group's end, as `run_numerics` does: its spans are checked)


def test_the_tracker_refuses_what_a_schedule_could_order_otherwise() -> None:
    rows = np.arange(4).reshape(4, 1, 1)
    # groups 0 and 1 do not depend on each other: one element each is fine, a shared one is not
    t, gm = _tracker({0: set(), 1: set()})
    _store(t, 0, 4, 1, gm, rows, 0)
    _store(t, 1, 4, 1, gm, rows, 1)
    with pytest.raises(stacked.Unstackable, match="do not depend"):
        _store(t, 1, 4, 1, gm, rows, 0)
    # group 1 after group 0: the same body may write it again, another body may not
    t, gm = _tracker({0: set(), 1: {0}})
    _store(t, 0, 4, 1, gm, rows, 0)
    _store(t, 1, 4, 1, gm, rows, 0)
    with pytest.raises(stacked.Unstackable, match="several bodies"):
        _store(t, 1, 4, 1, gm, rows[::-1].copy(), 0)
    # two tasks of one group writing one element: their order is the schedule's
    t, gm = _tracker({0: set()})
    with pytest.raises(stacked.Unstackable, match="one group write"):
        _store(t, 0, 1, 2, gm, 0, np.array([[[1], [1]]]))
    # an input is never written
    t, before = stacked.Tracker([gm], {0: set()}), gm.array.copy()
    with pytest.raises(stacked.Unstackable, match="input"):
        _store(t, 0, 4, 1, gm, rows, 0)
    assert np.array_equal(gm.array, before)  # (refused before it is written)


def test_a_groups_spans_are_checked_once_when_it_ends(monkeypatch) -> None:
    """The rules are tests of the union of a group's spans: merged once per tensor when
    the group ends, not once per access."""
    from pto.interp import stacked_gm

    merges: list[int] = []
    real = stacked_gm._merge_apart

    def merge(spans):
        merges.append(spans[0].size)
        return real(spans)

    monkeypatch.setattr(stacked_gm, "_merge_apart", merge)
    t, gm = _tracker({0: set()})
    st = stacked.Stack(t, 0, 4, 1)
    for col in range(4):
        st.store(gm, [st.body * 2, col], (2, 1), None, np.ones((4, 1, 1, 2, 1), np.float32))
    assert not merges
    t.close(0)
    assert len(merges) == 3  # (the bodies', the group's and the writes' spans of one tensor)
    assert t.bodies[id(gm.array)][0].size == 4 and (gm.array[:, :4] == 1).all()


def test_a_stacked_program_refuses_what_differs_between_tasks_or_was_not_written() -> None:
    with pytest.raises(stacked.Unstackable, match="differs"):
        stacked.u(np.array([[[1]], [[2]]]))
    assert stacked.u(np.array([[[3]], [[3]]])) == 3
    slot = stacked.Slot((2, 4), np.dtype(np.float32))
    slot.write((slice(0, 1), slice(0, 4)), np.ones((1, 1, 1, 1, 4), np.float32), (1, 1, 1))
    assert slot.read((slice(0, 1), slice(0, 4))).shape == (1, 1, 1, 1, 4)
    with pytest.raises(stacked.Unstackable, match="not written"):
        slot.read(())


@pytest.mark.parametrize(("m", "k", "n"), [(1, 512, 64), (16, 512, 64), (128, 256, 256), (3, 4096, 16)])
def test_a_stacked_product_rounds_each_tile_as_alone(m: int, k: int, n: int) -> None:
    """numpy's batched product is one BLAS call per tile, with the tile's shape: each
    tile's f32 sums are those of its product alone (not assumed: OpenBLAS picks kernels
    by shape, so one product of the stacked rows could round otherwise)."""
    rng = np.random.default_rng(k + m)
    a = rng.standard_normal((6, 1, m, k)).astype(nx.DTYPES["bf16"])
    b = rng.standard_normal((1, 5, k, n)).astype(nx.DTYPES["bf16"])
    got = nx.matmul(a, b)
    for i in range(6):
        for j in range(5):
            assert np.array_equal(got[i, j].view(np.uint32), nx.matmul(a[i, 0], b[0, j]).view(np.uint32))


def test_the_tracker_keeps_spans_of_memory_not_elements() -> None:
    """A task's tile is a span per row; touching spans of one body merge, so what is kept
    grows with the row blocks, not with the elements (a (4096, 4096) tensor here)."""
    gm = GmTensor("out", np.zeros((4096, 4096), np.float32), 0)
    t = stacked.Tracker([], {0: set(), 1: {0}})
    st = stacked.Stack(t, 0, 4, 2)
    rows, cols = st.body * 1024, st.task * 2048
    st.store(gm, [rows, cols], (1024, 2048), None, np.ones((4, 2, 1, 1, 1), np.float32))
    t.close(0)
    start, end, body = t.bodies[id(gm.array)]
    assert start.tolist() == [0, 1024 * 4096, 2048 * 4096, 3072 * 4096]
    assert (end - start).tolist() == [1024 * 4096] * 4 and body.tolist() == [0, 1, 2, 3]
    assert len(t.writes[(id(gm.array), 0)][0]) == 8 * 1024  # (a task's rows do not touch)
    assert (gm.array[:, :2048] == 1).all()
    # a later group reading a column block of another body's rows is refused
    st = stacked.Stack(t, 1, 4, 1)
    st.load(gm, [(3 - st.body) * 1024, 0], (16, 16), None)
    with pytest.raises(stacked.Unstackable, match="several bodies"):
        t.close(1)


@pytest.mark.parametrize("rows", [None, np.array([[[3]], [[0]], [[4]]])])
def test_stacked_copies_are_the_gathers_and_scatters_they_replace(rows) -> None:
    """Tiles at a step per body and task are one strided view; others (a row block and a
    column block chosen by the task) are sliced once each; rows past the valid ones are
    zero, and may lie past the array."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((14, 24)).astype(nx.DTYPES["bf16"])
    x = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([x], {0: set()}), 0, 3, 4)  # (an input: read by all)
    for offs in ([st.body * 4 + 2, st.task * 6], [st.body * 5 + (st.task // 2), (st.task % 2) * 8], [10, st.task * 4]):
        valid = None if rows is None else np.clip(rows, 0, 4)
        idx, mask = st._indices(a, offs, (4, 6), valid)
        want = a[idx] if mask is None else np.where(mask, a[idx].view(np.uint16), 0).view(a.dtype)
        got = st.load(x, offs, (4, 6), rows)
        assert np.array_equal(got.view(np.uint16), np.broadcast_to(want, got.shape).view(np.uint16))
    view = st._tiles(a, [st.body * 4 + 2, st.task * 6], (4, 6), (3, 4, 1))
    assert view is not None and np.shares_memory(view, a)  # (not a gather)
    out = np.zeros((24, 40), np.float32)
    data = rng.standard_normal((3, 4, 1, 4, 6)).astype(np.float32)
    for offs in ([st.body * 4, st.task * 6], [st.body * 8 + 4 * (1 - st.task // 2), (st.task % 2) * 8 + 24]):
        st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 3, 4)
        out[...] = 0
        st.store(GmTensor("out", out, 0), offs, (4, 6), rows, data)
        want = np.zeros_like(out)
        for i in range(3):
            for j in range(4):
                r, c = (int(np.broadcast_to(o, (3, 4, 1))[i, j, 0]) for o in offs)
                v = 4 if rows is None else int(np.clip(rows, 0, 4)[i, 0, 0])
                want[r : r + v, c : c + 6] = data[i, j, 0, :v]
        assert np.array_equal(out, want)


@pytest.mark.parametrize("name", ["mla_wqa_qrmsnorm.mlir", "mla_wkv_rmsnorm.mlir"])
def test_a_task_picking_row_and_column_blocks_by_task_mod_and_div_stacks_each_tile_once(monkeypatch, name) -> None:
    """The mla kernels pick a row block by `task % 2` and a column block by `task // 2`:
    the stack splits the task axis (`Stack`'s (body, task // 2, task % 2)), so that a
    product's row tiles are alike along one task axis and its weight tiles along the
    other, each loaded once; outputs, reports and traces stay the interp engine's."""
    n = counted(monkeypatch)
    shapes: list[tuple] = []
    real = stacked.stacked_mm.product

    def product(x, y, live_rows=None, **kw):
        shapes.append((x.shape[:3], y.shape[:3]))
        return real(x, y, live_rows, **kw)

    monkeypatch.setattr(stacked.stacked_mm, "product", product)
    pto_m, npu_m = lowered_example(name, "pto-sk03-pipeline")
    inputs = random_inputs(signature(pto_m), 512, 3)  # (4 bodies of 128 tokens)
    same(run(npu_m, inputs, trace=True, engine="interp"), run(npu_m.clone(), inputs, trace=True, engine="compiled"))
    assert n == {"stacked": 1, "unstackable": 0}
    assert shapes and all(xs[1] == 1 and xs[2] == 2 and ys[2] == 1 for xs, ys in shapes)


def test_an_on_chip_copy_of_a_gm_loads_whole_tiles_borrows_them(monkeypatch) -> None:
    """mla_wqa_qrmsnorm at unroll [1]: each weight tile's L1 -> L0B copy (a GM load's
    tiles, whole) is the L1 slot's array, not a copy of it; the outputs and report are
    the interp engine's."""
    n = counted(monkeypatch)
    shared = []
    real = stacked.Stack.dma

    def dma(st, spec, src, dst, so, do, rows):
        real(st, spec, src, dst, so, do, rows)
        if isinstance(src, stacked.Slot) and isinstance(dst, stacked.Slot) and src.borrowed:
            shared.append(np.shares_memory(src.arr, dst.arr))

    monkeypatch.setattr(stacked.Stack, "dma", dma)
    monkeypatch.setattr(compiled, "_way", lambda costs: "stacked")
    pto_m, npu_m = lowered_example("mla_wqa_qrmsnorm.mlir", "pto-sk03-pipeline{factors=1}")
    inputs = random_inputs(signature(pto_m), 40, 2)
    same(run(npu_m, inputs, trace=True, engine="interp"), run(npu_m.clone(), inputs, trace=True, engine="compiled"))
    assert n == {"stacked": 1, "unstackable": 0}
    assert shared and all(shared)


def test_a_stack_split_loads_a_tile_alike_along_a_task_axis_once() -> None:
    a = np.arange(16 * 24, dtype=np.float32).reshape(16, 24)
    x = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([x], {0: set()}), 0, 2, 6, split=2)
    assert st.S == (2, 3, 2)
    row = stacked.nz(st.body * 8 + (st.task % 2) * 4)
    col = stacked.nz((st.task // 2) * 6)
    assert row.shape == (2, 1, 2) and col.shape == (1, 3, 1)
    got = st.load(x, [row, col], (4, 6), None)
    assert got.shape == (2, 3, 2, 4, 6)
    for b in range(2):
        for t in range(6):
            r, c = b * 8 + (t % 2) * 4, (t // 2) * 6
            assert np.array_equal(got[b, t // 2, t % 2], a[r : r + 4, c : c + 6])
    assert stacked.Stack(stacked.Tracker([], {}), 0, 2, 6, split=4).S == (2, 6, 1)  # (4 does not divide 6)


def test_one_body_whose_tasks_split_is_stacked(monkeypatch) -> None:
    """Fewer than `STACK_BODIES` bodies are stacked when a program splits its task axis
    (mla_wqa_qrmsnorm's one body of 128 tokens), and agree with the interp engine."""
    n = counted(monkeypatch)
    pto_m, npu_m = lowered_example("mla_wqa_qrmsnorm.mlir", "pto-sk03-pipeline{factors=1}")
    inputs = random_inputs(signature(pto_m), 128, 4)
    same(run(npu_m, inputs, trace=True, engine="interp"), run(npu_m.clone(), inputs, trace=True, engine="compiled"))
    assert n == {"stacked": 1, "unstackable": 0}
    assert stacked.splits(2, 32) and not stacked.splits(1, 32) and not stacked.splits(3, 32)


def test_one_body_of_many_tasks_is_stacked_and_a_few_tasks_are_not(monkeypatch) -> None:
    """A graph of one body is stacked when a group has `STACK_TASKS` tasks (the int8
    example at unroll [1], t=128: 16, 32 and 64), not when every group has fewer
    (mla_wkv_rmsnorm at t=1: 4 and 1), and agrees with the interp engine either way."""
    n = counted(monkeypatch)
    for name, tokens, times in (("indexer_query_linear_int8.mlir", 128, 1), ("mla_wkv_rmsnorm.mlir", 1, 0)):
        n.update(stacked=0, unstackable=0)
        pto_m, npu_m = lowered_example(name, "pto-sk03-pipeline{factors=1}")
        inputs = random_inputs(signature(pto_m), tokens, 8)
        got = run(npu_m.clone(), inputs, trace=True, engine="compiled")
        same(run(npu_m, inputs, trace=True, engine="interp"), got)
        assert n == {"stacked": times, "unstackable": 0}


def test_the_int8_kernel_stacks_and_agrees(monkeypatch) -> None:
    """The int8 example reuses its UB bytes for buffers of other types (slots that forget
    what they held when an overlapping one is written), loads its weight scales
    transposed from GM and accumulates int8 products in int32 (merged calls: exact in
    any order); stacked, it agrees with the interp engine bit for bit."""
    n = counted(monkeypatch)
    pto_m, npu_m = lowered_example("indexer_query_linear_int8.mlir", "pto-sk03-pipeline")
    inputs = random_inputs(signature(pto_m), 512, 6)  # (4 bodies of 128 tokens)
    same(run(npu_m, inputs, trace=True, engine="interp"), run(npu_m.clone(), inputs, trace=True, engine="compiled"))
    assert n == {"stacked": 1, "unstackable": 0}


def test_a_slot_forgets_what_an_overlapping_buffers_write_clobbered() -> None:
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 2, 1)
    spec = type("Spec", (), {"space": "ub", "offset": 0, "dtype": np.dtype(np.float32), "shape": (2, 4), "nbytes": 32})
    a = st.alloc(spec())  # type: ignore[arg-type]
    other = spec()
    other.offset, other.dtype, other.shape, other.nbytes = 16, np.dtype(np.int32), (4,), 16
    b = st.alloc(other)  # type: ignore[arg-type]
    assert a.overlaps == [b] and b.overlaps == [a]
    a.write((), np.ones((2, 1, 1, 2, 4), np.float32), (2, 1, 1))
    assert a.read(()).shape == (2, 1, 1, 2, 4)
    b.write((), np.zeros((2, 1, 1, 4), np.int32), (2, 1, 1))
    with pytest.raises(stacked.Unstackable, match="not written"):
        a.read(())


def test_a_task_axis_split_is_found_through_a_multiple_of_the_task() -> None:
    """hc_pre's cast picks two tiles a task by `(2 * task + j) // 8` and `% 8`: the task
    axis splits at 4 (`StackedEmitter.task_split`), so that each tile is a strided view
    of the tensor, not a copy per task; agreement is the tests above."""
    _, npu_m = lowered_example("hc_pre.mlir", "pto-sk03-pipeline")
    regions = [op.body for op in npu_m.walk() if op.name == "npu.tasks"]
    got = [compile_stacked(r) for r in regions]
    assert [g[2] for g in got if g is not None][:3] == [4, 1, 1]


def test_an_elementwise_kernel_reads_strided_tiles_where_they_lie() -> None:
    """A C-ordered strided operand of a layout-free kernel (`npu_ops.layout_free`) is
    not copied first; its result is the contiguous operand's, bit for bit."""
    a = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    view = np.lib.stride_tricks.as_strided(a, (2, 1, 1, 4, 16), (4 * 256, 0, 0, 256, 4))
    assert ops.c_ordered(view) and not ops.c_ordered(view.swapaxes(-1, -2))
    mul = partial(ops._binary, np.multiply)
    assert ops.layout_free(mul) and not ops.layout_free(partial(ops._binary, np.maximum))
    assert np.array_equal(mul(np.empty(0, np.float32), view, view), np.ascontiguousarray(view) ** 2)


def test_a_gm_load_of_fewer_rows_than_the_slot_writes_its_rows_only() -> None:
    """A one-row tile loaded at row 2 of a four-row slot is that row (the whole-slot
    take was once made of it: the row broadcast to all four, each marked written)."""
    a = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    gm = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([gm], {0: set()}), 0, 1, 1)
    s = stacked.Slot((4, 4), np.dtype(np.float32))
    st.dma(ops.CopySpec((), 0, (), 0, False, (1, 4)), gm, s, [5, 0], [2, 0], None)
    assert s.arr is not None and s.arr[0, 0, 0, 2].tolist() == a[5].tolist()
    assert s.written.any(axis=1).tolist() == [False, False, True, False]
