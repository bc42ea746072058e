"""The AICPU scheduler threads of a task graph (interp/aicpu.py, `[aicpu]` of the
target): polls, successor resolution per task (`npu.tasks ... succ`), hand-over at the
end of a round, HUBs and the end HUB; on both engines."""

from __future__ import annotations

import numpy as np
import pytest
from kernels import parse

from pto.interp.run import run
from pto.targets import load_target

TGT = load_target().changed(aicpu__enabled=True, model__dma_fixed_costs=False)
FIG = TGT.aicpu
BIG = "!npu.buf<32x1024xf32, ub>"
ARGS = "%x: !npu.buf<?x64xf32, gm>, %out: !npu.buf<?x64xf32, gm> {pto.output}"


@pytest.fixture(autouse=True, params=["interp", "compiled"])
def engine(request, monkeypatch):
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", request.param)
    return request.param


def group(label: str, per_body: int, after: str = "", extra: str = "") -> str:
    dep = f" after [{after}]" if after else ""
    return f"""    npu.tasks "{label}" vector (%b, %i) in (%n, {per_body}){dep}{extra} {{
      %a = npu.alloc ub [0] : {BIG}
      npu.vdup -1.0 -> %a : {BIG}
    }}"""


def run_graph(body: str, cube: int = 1, vector: int = 4, **kw):
    text = (
        f"func.func @k({ARGS}) {{\n  npu.graph cube {cube} vector {vector} {{\n"
        f"    %n = arith.constant 1 : index\n{body}\n  }}\n  func.return\n}}"
    )
    return run(parse(text), [np.ones((8, 64), np.float32)], target=kw.pop("target", TGT), **kw)


def runs(r) -> dict[str, object]:
    return {t.name: t for t in r.report.task_runs}


def test_first_task_is_handed_over_after_the_first_round() -> None:
    """The thread's first poll is `start_cycles` in; after one poll of each of its cores
    it hands the ready task over (`dispatch_cycles`), and the task runs from then."""
    r = run_graph(group("a", 1), cube=1, vector=4)
    a = runs(r)["a[0,0]"]
    handed = FIG.start_cycles + 5 * FIG.poll_cycles  # 1 AIC + 4 AIVs polled
    assert a.start == handed
    assert a.core == "aiv0"  # the thread's first idle AIV


def test_a_token_loop_starts_behind_its_start_hub() -> None:
    """The first tasks of a token loop's body wait for the body's start HUB: it runs at
    the `hub_rounds`-th round end of the idle threads and hands them on one resolution
    step later, so the thread hands them over at the round end after that (PyPTO 0.2.0:
    mhc_pre's first task starts at 9,385, its third round end, in every configuration)."""
    t = runs(run_graph(group("a", 1) + "\n" + group("b", 1, after='"a"'), cube=1, vector=4))
    assert t["a[0,0]"].start == behind_start_hub()
    # a group nothing in its loop waits for goes at the first round end (as the gamma cast)
    assert runs(run_graph(group("a", 1)))["a[0,0]"].start == FIG.start_cycles + 5 * FIG.poll_cycles


def behind_start_hub(polled: int = 5) -> float:
    """When the thread hands over a root task of a token loop (`polled` cores a round)."""
    rnd = polled * FIG.poll_cycles
    return FIG.start_cycles + -(-(FIG.hub_rounds * rnd + FIG.resolve_cycles) // rnd) * rnd


def test_each_successor_costs_a_resolution() -> None:
    """A task found ended costs `resolve_cycles` per successor on top of its poll, so
    its successors are handed over that much later per successor more (3 against 1)."""
    starts = []
    for succ in (1, 3):
        r = run_graph(group("a", 1, extra=f" succ {succ}") + "\n" + group("b", 3, after='"a"'))
        starts.append(runs(r)["b[0,0]"].start)
    assert starts[1] - starts[0] == 2 * FIG.resolve_cycles


def test_default_successors_are_every_task_after() -> None:
    """Without `succ` a task's successors are every task of the groups after it: the
    same run as with `succ 3`."""
    text = group("b", 3, after='"a"')
    plain = run_graph(group("a", 1) + "\n" + text).report
    given = run_graph(group("a", 1, extra=" succ 3") + "\n" + text).report
    assert plain.cycles == given.cycles


def test_a_hub_hands_on_at_the_second_round_end() -> None:
    """Behind a HUB the group is ready `hub_rounds` round ends after its producers are
    resolved (later than directly), and the graph ends with the end HUB after its last
    task."""
    direct = runs(run_graph(group("a", 2) + "\n" + group("b", 2, after='"a"')))["b[0,0]"].start
    r = run_graph(group("a", 2) + "\n" + group("b", 2, after='"a"', extra=" hub"))
    hub = runs(r)["b[0,0]"].start
    rnd = 5 * FIG.poll_cycles  # a round of polls of the thread's 5 cores
    assert hub > direct
    assert r.report.cycles > max(t.end for t in r.report.task_runs) + rnd


def test_without_the_model_the_fixed_latencies_apply() -> None:
    """`aicpu.enabled = false`: a task starts `task_ready + task_dispatch` after the graph."""
    t = TGT.changed(aicpu__enabled=False)
    a = runs(run_graph(group("a", 1), target=t))["a[0,0]"]
    assert a.start == t.latency.task_ready


def test_successors_are_ready_one_resolution_step_apart() -> None:
    """A successor whose last producer a poll finds ended is ready when its own
    `resolve_cycles` step ends, not when the whole resolution does (PyPTO enqueues it
    then): another thread hands some over while the first still resolves."""
    r = run_graph(group("a", 1) + "\n" + group("b", 24, after='"a"'), vector=16)
    t = runs(r)
    # the poll that finds a ended is no sooner than its end
    resolution_end = t["a[0,0]"].end + FIG.poll_cycles + 24 * FIG.resolve_cycles
    assert min(t[f"b[0,{i}]"].start for i in range(24)) < resolution_end


def test_a_group_outside_the_token_loops_is_waited_for_whole() -> None:
    """A group of one body (the constant 1) in `after` of a group of another body count
    (a weight task): every body waits for it, and its task's successors are every task
    of every body after it."""
    body = (
        "    %one = arith.constant 1 : index\n"
        + group("w", 1).replace("%n,", "%one,")
        + "\n    %n3 = arith.constant 3 : index\n"
        + group("b", 2, after='"w"').replace("%n,", "%n3,")
    )
    t = runs(run_graph(body, vector=8))
    w_end = t["w[0,0]"].end
    starts = [t[f"b[{b},{i}]"].start for b in range(3) for i in range(2)]
    assert min(starts) >= w_end + FIG.poll_cycles + FIG.resolve_cycles
    # six successors: the last is ready six steps after the poll that found w ended
    assert max(starts) >= w_end + FIG.poll_cycles + 6 * FIG.resolve_cycles


def test_a_round_sees_only_the_tasks_ended_when_it_began() -> None:
    """PyPTO polls a thread's cores at the start of a round and books the polls one after
    another: a task that ends after its round began is resolved in the next round, even
    if it ended before its core's poll in this one. Here `a` (a short task on aiv0, the
    second core polled) ends just after a round began: its successor starts a whole
    round and a resolution after it at the earliest."""
    small = "!npu.buf<4x1024xf32, ub>"
    a = group("a", 1).replace(BIG, small)
    t = runs(run_graph(a + "\n" + group("b", 1, after='"a"')))
    whole_round = 5 * FIG.poll_cycles  # 1 AIC + 4 AIVs
    handed = behind_start_hub() + FIG.dispatch_cycles  # when a starts, a round begins
    assert handed < t["a[0,0]"].end < handed + 2 * FIG.poll_cycles  # after it, before aiv0's poll
    assert t["b[0,0]"].start >= t["a[0,0]"].end + whole_round + FIG.resolve_cycles


def test_a_hub_hands_on_its_blocks_of_successors_side_by_side() -> None:
    """`hub [...]` gives each task its place among its HUB's successors (PyPTO: a HUB per
    block of tasks that need the same producers): two blocks of 8 are handed on in half
    the time one HUB of 16 takes."""
    blocks = " [" + ", ".join(str(i % 8) for i in range(16)) + "]"
    last = []
    for order in ("", blocks):
        t = runs(run_graph(group("a", 2) + "\n" + group("b", 16, after='"a"', extra=" hub" + order), vector=16))
        last.append(max(t[f"b[0,{i}]"].start for i in range(16)))
    assert last[1] < last[0]


def test_the_hub_order_prints_and_is_checked() -> None:
    text = group("a", 2) + "\n" + group("b", 4, after='"a"', extra=" hub [0, 1, 0, 1]")
    m = parse(text_of(text))
    assert 'after ["a"] hub [0, 1, 0, 1] {' in str(m)
    with pytest.raises(Exception, match="place among its HUB"):
        parse(text_of(group("a", 2) + "\n" + group("b", 4, after='"a"', extra=" hub [0, 1]")))


def text_of(body: str) -> str:
    return f"func.func @k({ARGS}) {{\n  npu.graph cube 1 vector 4 {{\n    %n = arith.constant 1 : index\n{body}\n  }}\n  func.return\n}}"


def test_polls_that_find_nothing_are_one_step_with_the_same_times(monkeypatch) -> None:
    """A thread's polls up to the next core seen ended take one step (`Schedulers.step`,
    `idle_polls`), each poll's cycles added as its own: the tasks run as when every poll
    is a step of its own (`idle_polls` taking none), in far fewer steps."""
    from pto.interp import aicpu

    steps = []
    real_step, real_idle = aicpu.Schedulers.step, aicpu.Schedulers.idle_polls

    def counted(self, th) -> bool:
        steps[-1] += 1
        return real_step(self, th)

    monkeypatch.setattr(aicpu.Schedulers, "step", counted)
    body = group("a", 6) + "\n" + group("b", 24, after='"a"') + "\n" + group("c", 5, after='"b"', extra=" hub")
    got = {}
    for one_poll in (True, False):
        monkeypatch.setattr(
            aicpu.Schedulers, "idle_polls", (lambda self, th, t, pos, cost: (t, pos)) if one_poll else real_idle
        )
        steps.append(0)
        r = run_graph(body, cube=2, vector=16)
        got[one_poll] = ([vars(t) for t in r.report.task_runs], r.report.cycles)
    assert got[True] == got[False]
    assert steps[1] * 2 < steps[0]
