"""npu-level interpreter: task graphs (`npu.graph` / `npu.tasks`, dispatch to free cores,
per-body dependences, task_dispatch), the cost model (cost.py) and the shared-HBM
booking from a DMA's real start."""

from __future__ import annotations

import json

import numpy as np
import pytest
from kernels import parse

from pto.interp.cost import CostModel
from pto.interp.machine import MachineError
from pto.interp.run import run
from pto.interp.scheduler import DeadlockError
from pto.targets import Target, load_target

TGT = load_target()
DISPATCH = TGT.latency.task_dispatch
ISSUE = TGT.latency.issue
BIG = "!npu.buf<32x1024xf32, ub>"  # 128 KiB: 512 repeats
ARGS = "%x: !npu.buf<?x64xf32, gm>, %out: !npu.buf<?x64xf32, gm> {pto.output}"


@pytest.fixture(autouse=True, params=["interp", "compiled"])
def engine(request, monkeypatch):
    """Every test here runs on both engines (the default engine is the one tested)."""
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", request.param)
    return request.param


def graph(body: str, cube: int = 1, vector: int = 2, args: str = ARGS) -> str:
    return (
        f"func.func @k({args}) {{\n  npu.graph cube {cube} vector {vector} {{\n"
        f"    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n{body}\n  }}\n"
        "  func.return\n}"
    )


def target(**figures) -> Target:
    """The default target with some figures changed: `latency__task_dispatch=0`. The
    tests below count cycles exactly, so unless they ask for them, tasks are handed out
    by fixed latencies instead of the AICPU threads (test_interp_aicpu.py), are ready as
    soon as their dependences end, a core turns to its next task at once and DMAs pay no
    fixed start cost."""
    return TGT.changed(
        **{
            "aicpu__enabled": False,
            "latency__task_ready": 0,
            "latency__task_turnaround": 0,
            "model__dma_fixed_costs": False,
            **figures,
        }
    )


def run_ir(text: str, *inputs, **kw):
    kw.setdefault("target", target())
    return run(parse(text), list(inputs) or [np.ones((8, 64), np.float32)], trace=True, **kw)


def tasks(r, label: str | None = None) -> dict[str, object]:
    """The tasks as they ran, by name (`a[0,1]`)."""
    return {t.name: t for t in r.report.task_runs if label is None or t.name.startswith(label)}


def vector_group(label: str, n: str, per_body: int = 1, long_if: str = "%c1, %c0", after: str = "") -> str:
    """Compute-only vector tasks: vdup + vexp; a task where the two indices `long_if`
    are equal (`%b, %c0`: body 0) runs three more vexps. Short: 2 + VDUP + VEXP cycles
    after dispatch; long: 2 + VDUP + 4 VEXP (cmpi and the first op's issue come first)."""
    dep = f" after [{after}]" if after else ""
    return f"""    npu.tasks "{label}" vector (%b, %i) in ({n}, {per_body}){dep} {{
      %a = npu.alloc ub [0] : {BIG}
      %long = arith.cmpi eq, {long_if} : index
      npu.vdup -1.0 -> %a : {BIG}
      scf.if %long {{
        npu.vexp %a -> %a : {BIG} -> {BIG}
        npu.vexp %a -> %a : {BIG} -> {BIG}
        npu.vexp %a -> %a : {BIG} -> {BIG}
      }}
      npu.vexp %a -> %a : {BIG} -> {BIG}
    }}"""


VDUP = CostModel(target()).vector("vdup", 131072)
VEXP = CostModel(target()).vector("vexp", 131072)
SHORT = 2 * ISSUE + VDUP + VEXP
LONG = 2 * ISSUE + VDUP + 4 * VEXP

L0 = "!npu.buf<128x128xbf16, l0a>", "!npu.buf<128x128xbf16, l0b>", "!npu.buf<128x128xf32, l0c>"
HEAD = TGT.cube.mad_head_cycles  # each mmad's issue cost (docs/model.md)
MMAD = HEAD + 128**3 / TGT.macs_per_cycle("bf16")


def cube_group(label: str, n: str, after: str = "") -> str:
    dep = f" after [{after}]" if after else ""
    a, b, c = L0
    return f"""    npu.tasks "{label}" cube (%b, %i) in ({n}, 1){dep} {{
      %a0 = npu.alloc l0a [0] : {a}
      %b0 = npu.alloc l0b [0] : {b}
      %c0c = npu.alloc l0c [0] : {c}
      npu.mmad %a0, %b0 -> %c0c : {a}, {b} -> {c}
    }}"""


# ------------------------------------------------------------------------- dispatch


def test_tasks_go_to_whichever_core_is_free() -> None:
    """5 bodies on 2 vector cores, body 0 long: aiv1 runs bodies 1, 2, 3 while aiv0 runs
    body 0, then aiv0 (free first) takes body 4. Static placement (body mod 2) would
    put 0, 2, 4 on aiv0 and take 3 dispatches + LONG + 2 SHORT."""
    r = run_ir(graph("    %n = arith.constant 5 : index\n" + vector_group("a", "%n", long_if="%b, %c0")))
    t = tasks(r)
    assert {n: e.core for n, e in t.items()} == {
        "a[0,0]": "aiv0",
        "a[1,0]": "aiv1",
        "a[2,0]": "aiv1",
        "a[3,0]": "aiv1",
        "a[4,0]": "aiv0",
    }
    aiv1_free = 3 * (DISPATCH + SHORT)
    assert t["a[4,0]"].start == DISPATCH + LONG < aiv1_free
    assert r.report.cycles == DISPATCH + LONG + DISPATCH + SHORT
    assert r.report.tasks == {"cube": 0, "vector": 5, "groups": {"a": 5}}
    assert "tasks: 0 cube, 5 vector (a 5)" in r.report.table()


def test_task_dispatch_is_charged_per_task() -> None:
    text = graph("    %n = arith.constant 4 : index\n" + vector_group("a", "%n"), vector=1)
    slow = run_ir(text).report.cycles
    free = run_ir(text, target=target(latency__task_dispatch=0)).report.cycles
    assert free == 4 * SHORT
    assert slow - free == 4 * DISPATCH


def test_task_turnaround_between_tasks_of_a_core() -> None:
    """A core takes its next task `task_turnaround` after its last one ended (PyPTO's
    back-to-back gap); its first task and a task on an idle core do not pay it."""
    one_core = graph("    %n = arith.constant 4 : index\n" + vector_group("a", "%n"), vector=1)
    r = run_ir(one_core, target=target(latency__task_turnaround=1000))
    assert r.report.cycles == 4 * (DISPATCH + SHORT) + 3 * 1000
    t = tasks(r)
    assert t["a[1,0]"].start == t["a[0,0]"].start + t["a[0,0]"].dur + 1000
    four_cores = graph("    %n = arith.constant 4 : index\n" + vector_group("a", "%n"), vector=4)
    assert run_ir(four_cores, target=target(latency__task_turnaround=1000)).report.cycles == DISPATCH + SHORT


# ------------------------------------------------------------------------- dependences


def test_a_body_waits_only_for_its_own_body() -> None:
    """Cube task of body 0 runs while the vector task of body 1 (long) still runs."""
    body = vector_group("a", "%n", long_if="%b, %c1") + "\n" + cube_group("b", "%n", '"a"')
    r = run_ir(graph("    %n = arith.constant 2 : index\n" + body))
    t = tasks(r)
    a1_end = t["a[1,0]"].start + t["a[1,0]"].dur
    b0 = t["b[0,0]"]
    assert b0.start == t["a[0,0]"].start + t["a[0,0]"].dur  # taken as soon as its body is done
    assert b0.start + b0.dur < a1_end  # and done before the other body's vector task
    assert t["b[1,0]"].start == a1_end
    assert r.report.tasks == {"cube": 2, "vector": 2, "groups": {"a": 2, "b": 2}}


def test_no_task_starts_before_its_dependences_end() -> None:
    """Two vector tasks per body, of different lengths, on three cores; the cube task of
    a body starts after both (plus its dispatch), whatever the order they end in."""
    body = (
        "    %n = arith.constant 3 : index\n"
        + vector_group("a", "%n", per_body=2, long_if="%i, %c0")
        + "\n"
        + cube_group("b", "%n", '"a"')
    )
    r = run_ir(graph(body, vector=3))
    t = tasks(r)
    ops = [e for e in r.report.events if e.pipe == "cube"]
    assert len(ops) == 3 and len(tasks(r, "a")) == 6
    for b in range(3):
        deps_end = max(t[f"a[{b},{i}]"].start + t[f"a[{b},{i}]"].dur for i in range(2))
        cube = t[f"b[{b},0]"]
        assert cube.start >= deps_end
        first_op = min(e.start for e in ops if cube.start <= e.start < cube.start + cube.dur)
        assert first_op >= deps_end + DISPATCH


def test_queue_order_is_ready_time_then_group_order() -> None:
    """One vector core: the second group has no dependence, so all its tasks are ready
    at the start, but tasks of the first group come first at equal ready time."""
    body = "    %n = arith.constant 2 : index\n" + vector_group("a", "%n") + "\n" + vector_group("z", "%n")
    r = run_ir(graph(body, vector=1))
    order = sorted(tasks(r).values(), key=lambda e: e.start)
    assert [e.name for e in order] == ["a[0,0]", "a[1,0]", "z[0,0]", "z[1,0]"]


# ------------------------------------------------------------------------- data, determinism


def copy_graph(bodies: int) -> str:
    """Vector tasks load 8 rows each, exp them and store; a cube task per body after them
    (an mmad), and a second vector group after the cube one."""
    ub = "!npu.buf<8x64xf32, ub>"
    vec = f"""    npu.tasks "v" vector (%b, %i) in (%n, 1) {{
      %r = arith.muli %b, %c8 : index
      %a = npu.alloc ub [0] : {ub}
      npu.dma mte2 %x[%r, 0] -> %a[0, 0] : !npu.buf<?x64xf32, gm> -> {ub}
      npu.set_flag mte2 -> vector, 0
      npu.wait_flag mte2 -> vector, 0
      npu.vexp %a -> %a : {ub} -> {ub}
      npu.set_flag vector -> mte3, 0
      npu.wait_flag vector -> mte3, 0
      npu.dma mte3 %a[0, 0] -> %out[%r, 0] : {ub} -> !npu.buf<?x64xf32, gm>
    }}"""
    return graph(
        f"""    %c8 = arith.constant 8 : index
    %t = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    %n = arith.divui %t, %c8 : index
{vec}
{cube_group("c", "%n", '"v"')}
{vector_group("w", "%n", after='"c"')}""",
        vector=3,
    )


def test_graph_numerics_and_determinism() -> None:
    x = np.random.default_rng(0).standard_normal((48, 64)).astype(np.float32)
    r1, r2 = run_ir(copy_graph(6), x), run_ir(copy_graph(6), x)
    np.testing.assert_allclose(r1.outputs[0], np.exp(x), rtol=1e-6)
    assert json.dumps(r1.report.to_json()) == json.dumps(r2.report.to_json())
    assert [(e.core, e.pipe, e.start) for e in r1.report.events] == [
        (e.core, e.pipe, e.start) for e in r2.report.events
    ]
    assert r1.report.to_json()["tasks"] == {"cube": 6, "vector": 12, "groups": {"v": 6, "c": 6, "w": 6}}
    trace = r1.report.trace()["traceEvents"]
    assert any(e.get("name") == "c[5,0]" for e in trace)


# ------------------------------------------------------------------------- errors


def test_error_in_a_task_is_a_machine_error_at_the_op() -> None:
    text = graph("""    %n = arith.constant 3 : index
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
      %a = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
      %c4 = arith.constant 4 : index
      %r = arith.muli %b, %c4 : index
      npu.dma mte2 %x[%r, 0] -> %a[0, 0] : !npu.buf<?x64xf32, gm> -> !npu.buf<8x64xf32, ub>
    }""")
    with pytest.raises(MachineError, match=r"source \[4, \+8\) of axis 0 is outside x \(8x64") as e:
        run_ir(text)
    assert e.value.op is not None and e.value.op.name == "npu.dma"


def test_wait_flag_never_set_in_a_task() -> None:
    text = graph("""    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      npu.wait_flag mte2 -> vector, 3
    }""")
    with pytest.raises(MachineError, match="aiv0: wait_flag mte2 -> vector, 3 was never set"):
        run_ir(text)


def test_deadlock_in_a_task_is_reported() -> None:
    text = graph("""    %n = arith.constant 3 : index
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
      npu.cross_core_wait 9, %c1
    }""")
    with pytest.raises(DeadlockError, match="aiv0 waits for cross-core flag 9"):
        run_ir(text)


# ------------------------------------------------------------------------- costs


def two_loads(**figures):
    """A 128 KiB load, then an 8 KiB one queued behind it on MTE2 (both L2 misses)."""
    args = "%x: !npu.buf<32x1024xf32, gm>, %y: !npu.buf<8x256xf32, gm>, %out: !npu.buf<8x256xf32, gm> {pto.output}"
    small = "!npu.buf<8x256xf32, ub>"
    text = f"""func.func @k({args}) {{
  npu.launch vector 1 (%v) {{
    %a = npu.alloc ub [0] : {BIG}
    %s = npu.alloc ub [131072] : {small}
    npu.dma mte2 %x[0, 0] -> %a[0, 0] : !npu.buf<32x1024xf32, gm> -> {BIG}
    npu.dma mte2 %y[0, 0] -> %s[0, 0] : !npu.buf<8x256xf32, gm> -> {small}
    npu.set_flag mte2 -> mte3, 0
    npu.wait_flag mte2 -> mte3, 0
    npu.dma mte3 %s[0, 0] -> %out[0, 0] : {small} -> !npu.buf<8x256xf32, gm>
  }}
  func.return
}}"""
    ins = [np.ones((32, 1024), np.float32), np.ones((8, 256), np.float32)]
    return [e for e in run_ir(text, *ins, target=target(**figures)).report.events if e.name == "npu.dma"]


def test_hbm_is_booked_from_the_dma_start() -> None:
    """With one core's worth of shared HBM (hbm_total = one core's rate) the first load
    fills every window it spans. The second load starts when MTE2 is free; booked from there it
    finds its windows free. (Booked from its issue point, it used to be charged the
    first load's whole transfer again.)"""
    rate = TGT.model.gm_read_rate
    big, small, _ = two_loads(model__hbm_total=rate)
    assert big.cycles == pytest.approx(131072 / rate)
    assert small.start == pytest.approx(big.start + big.cycles)
    assert small.cycles == pytest.approx(8192 / rate)


def test_fixed_dma_costs_are_switched_by_the_target() -> None:
    off = two_loads()
    on = two_loads(model__dma_fixed_costs=True)
    copy_in, copy_out = TGT.latency.copy_in, TGT.latency.copy_out
    assert [b.cycles - a.cycles for a, b in zip(off, on, strict=True)] == pytest.approx([copy_in, copy_in, copy_out])


def test_cost_model_formulas() -> None:
    c = CostModel(target())
    macs = TGT.macs_per_cycle("bf16")
    head = TGT.cube.mad_head_cycles
    assert c.mmad(20, 100, 30, "bf16") == head + 32 * 112 * 32 / macs  # whole fractals
    assert c.mmad(128, 64, 64, "bf16", rows=17) == head + 32 * 64 * 64 / macs  # only the valid rows' fractals
    assert c.mmad(16, 8, 16, "f32") == head + 2  # an f32 K-fractal is 8 wide, in 2 passes
    cpr, fixed = TGT.vector.cycles_per_repeat, TGT.vector.fixed_cycles
    assert c.vector("vexp", 2048) == fixed + 8 * cpr["vexp"] and c.vector("vabs", 2048) == fixed + 8
    assert c.atomic_add(10.0) == 20.0 and c.transposed(10.0) == 20.0
    assert c.dma_fixed(to_gm=False) == 0.0


def test_a_miss_that_evicts_dirty_lines_pays_their_write_back() -> None:
    """A cacheable stream that pushes dirty lines out of L2 waits for them to reach HBM
    (what SK03.md's NONE_CACHEABLE advice saves): evicted lines go through the HBM
    booking with the missed ones."""
    c = CostModel(target())
    booked: list[float] = []

    def book(start: float, nbytes: float, rate: float) -> float:
        booked.append(nbytes)
        return nbytes / rate

    line, rd = TGT.l2.line_bytes, c.gm_read
    assert c.gm_transfer(0.0, 0, 4, False, True, book) == 4 * line / rd
    assert c.gm_transfer(0.0, 0, 4, False, True, book, evicted=2) == 6 * line / rd
    assert c.gm_transfer(0.0, 0, 4, True, True, book) == 4 * line / c.gm_write and booked == [4 * line, 6 * line]


def test_a_task_is_ready_task_ready_after_its_dependences() -> None:
    """latency.task_ready: the first tasks that long after the graph starts, a dependent
    task that long after its body's producers end (then its dispatch)."""
    ready = 1000
    body = vector_group("a", "%n") + "\n" + cube_group("b", "%n", '"a"')
    r = run_ir(graph("    %n = arith.constant 1 : index\n" + body), target=target(latency__task_ready=ready))
    t = tasks(r)
    assert t["a[0,0]"].start == ready
    assert t["b[0,0]"].start == t["a[0,0]"].start + t["a[0,0]"].dur + ready


@pytest.mark.parametrize("hub,hops", [("", 1), (" hub", 2)])
def test_a_group_behind_a_hub_is_ready_one_task_later(hub: str, hops: int) -> None:
    """`npu.tasks ... after [...] hub`: PyPTO routes the dependence through a HUB task,
    so the group is ready twice `task_ready` after its producers end."""
    ready = 1000
    body = (
        vector_group("a", "%c1", 4)
        + "\n"
        + vector_group("b", "%c1", 8, after='"a"').replace('after ["a"]', 'after ["a"]' + hub)
    )
    t = tasks(run_ir(graph(body, vector=16), target=target(latency__task_ready=ready)))
    last_a = max(e.start + e.dur for n, e in t.items() if n.startswith("a["))
    first_b = min(e.start for n, e in t.items() if n.startswith("b["))
    assert first_b == last_a + hops * ready


def test_mmad_on_a_partial_tile_is_charged_for_its_valid_rows() -> None:
    """`npu.mmad ... rows 17` on a 128-row tile: the cube computes two fractals of rows
    (32), as PyPTO charges a tail body's tile, not the whole 128."""
    a, b, c = L0

    def mmad_cycles(rows: str) -> float:
        body = f"""    npu.tasks "m" cube (%b, %i) in (%c1, 1) {{
      %r = arith.constant 17 : index
      %a0 = npu.alloc l0a [0] : {a}
      %b0 = npu.alloc l0b [0] : {b}
      %c0c = npu.alloc l0c [0] : {c}
      npu.mmad %a0, %b0 -> %c0c {rows}: {a}, {b} -> {c}
    }}"""
        return next(e.cycles for e in run_ir(graph(body)).report.events if e.name == "npu.mmad")

    assert mmad_cycles("") == MMAD
    assert mmad_cycles("rows %r ") == HEAD + (MMAD - HEAD) * 32 / 128


@pytest.mark.parametrize("stitch, expect", [(None, 1), (1, 4), (2, 2), (3, 2), (4, 1)])
def test_stitch_runs_bodies_n_at_a_time(stitch, expect) -> None:
    """`stitch N`: 4 bodies (two loops of 2, in order) in device tasks of N bodies, run one
    after another, the next `latency.stitch` after the previous one ends; on 4 cores each
    stitch takes one task's time."""
    body = (
        "    %n = arith.constant 2 : index\n    %m = arith.constant 2 : index\n"
        + vector_group("a", "%n")
        + "\n"
        + vector_group("b", "%m")
    )
    text = graph(body, vector=4).replace(
        "npu.graph cube 1 vector 4", "npu.graph cube 1 vector 4" + (f" stitch {stitch}" if stitch else "")
    )
    r = run_ir(text, target=target(latency__stitch=1000))
    assert r.report.cycles == expect * (DISPATCH + SHORT) + (expect - 1) * 1000
    t = tasks(r)
    if stitch == 2:  # loop a's bodies, then loop b's
        assert t["b[0,0]"].start == t["a[1,0]"].start + DISPATCH + SHORT + 1000
