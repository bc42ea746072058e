"""PyPTO's AICPU scheduler threads, which hand a task graph's tasks to the cores
(`device_sched_mode` 0; `[aicpu]` of the target, docs/model.md "Dispatch").

Each thread serves a fixed set of cores (`aicpu.cube_cores` AICs, then
`aicpu.vector_cores` AIVs) and loops over them: a poll of a core costs `poll_cycles`;
if the core's task has ended by then, the thread also resolves the task's successors
(`resolve_cycles` each, the task's successor count from `npu.tasks ... succ`), and a
task whose last producer is resolved becomes ready when that resolution ends. After a
round of polls the thread hands ready tasks (one queue per core kind, shared by all
threads, in the graph's order) to its idle cores, `dispatch_cycles` each; a task starts
when its hand-over is done. A group behind a HUB (`npu.tasks ... hub`) becomes ready
at the `hub_rounds`-th round end of any thread after its producers are resolved; the
graph ends `end_cycles` after its last task (the end HUB).
So the threads, not only the cores, set the pace of a graph of many short tasks.

The threads are simulated in time order (the thread with the earliest next event goes
first), as far as what they see is known: a poll of a core whose task has not ended yet
in the run (its end unknown) and whose clock is not past the poll waits until the
task ends (`TaskGraph.finish`), since the task might have ended by then. They are
advanced only when a task is taken or ends, so both engines see the same decisions.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pto.targets.schema import Aicpu as Figures

if TYPE_CHECKING:
    from pto.interp.graph import Group, TaskGraph
    from pto.interp.machine import Core

Task = tuple["Group", int, int]  # group, body, task


@dataclass
class Thread:
    workers: list[int]  # the graph workers (cores) it polls, in polling order
    t: float  # when its next step starts
    pos: int = 0  # the next core to poll; len(workers): the round's hand-over
    seen: set[int] = field(default_factory=set)  # workers whose task had ended when the round began


@dataclass
class Hub:
    """A HUB task between the producers of a body and its group `group`: it hands on
    after `left` more round ends."""

    group: Group
    body: int
    left: int


@dataclass
class Schedulers:
    graph: TaskGraph
    fig: Figures
    cores: list[Core]
    threads: list[Thread] = field(default_factory=list)
    # Per worker: None (idle), ("busy", task, start) (handed a task: taken or not yet),
    # ("ended", task, end) (its task has ended, not yet seen by a poll).
    state: list[tuple | None] = field(default_factory=list)
    handed: dict[int, tuple[Task, float, float]] = field(default_factory=dict)  # worker -> task, hand-over, start
    hubs: list[Hub] = field(default_factory=list)
    left: int = 0  # tasks not yet resolved
    engaged: int = 0  # workers whose state is not None (`any(state)` at every step was a scan)

    def __post_init__(self) -> None:
        per = {"cube": self.fig.cube_cores, "vector": self.fig.vector_cores}
        owner: dict[int, list[tuple[int, int]]] = {}
        for w, c in enumerate(self.cores):
            owner.setdefault(c.index // per[c.kind], []).append((0 if c.kind == "cube" else 1, w))
        start = self.graph.machine.now + self.fig.start_cycles
        self.threads = [Thread([w for _, w in sorted(owner[s])], start) for s in sorted(owner)]
        self.state = [None] * len(self.cores)
        self.left = sum(g.bodies * g.per_body for g in self.graph.groups)

    # -- what the graph tells it ------------------------------------------------------

    def taken(self, worker: int) -> tuple[Task, float, float]:
        return self.handed.pop(worker)

    def ended(self, worker: int, task: Task, end: float) -> None:
        self._set(worker, ("ended", task, end))
        self.advance()

    def _set(self, worker: int, st: tuple | None) -> None:
        self.engaged += (st is not None) - (self.state[worker] is not None)
        self.state[worker] = st

    # -- the threads --------------------------------------------------------------------

    def advance(self) -> None:
        """Run the threads, earliest first, until the earliest waits for a task's end or
        every task is resolved and the end HUB has run."""
        threads, ready = self.threads, self.graph.ready
        while self.left or self.hubs:
            if not self.hubs and not self.engaged and not any(ready.values()):
                return  # nothing to poll or hand over: tasks held back (a stitch) come at an end
            th = threads[0]  # (the earliest, the first of a tie, as `min` picks)
            for other in threads:
                if other.t < th.t:
                    th = other
            if not self.step(th):
                return

    def step(self, th: Thread) -> bool:
        """One poll or one round's hand-over of `th`; False if it must wait."""
        fig = self.fig
        if th.pos == len(th.workers):
            self.round_end(th)
            th.pos = 0
            return True
        if th.pos == 0 and not self.begin_round(th):
            return False
        w = th.workers[th.pos]
        st = self.state[w]
        cost: float = fig.poll_cycles
        if st is not None and w in th.seen:  # ended when the round began: resolve its successors
            g, b, i = st[1]
            start = th.t + cost
            cost += fig.resolve_cycles * g.successors(i)
            self._set(w, None)
            th.t += cost
            th.pos += 1
            self.left -= 1
            self.graph.resolved(g, b, i, start, fig.resolve_cycles)
            return True
        th.t, th.pos = self.idle_polls(th, th.t + cost, th.pos + 1, cost)
        return True

    def idle_polls(self, th: Thread, t: float, pos: int, cost: float) -> tuple[float, int]:
        """After a poll that found nothing: the polls that find nothing either, up to the
        next core seen ended (which only this thread's polls change) or the round's end,
        in the same step; each poll's cycles added as its own, so that the steps that
        touch what others see still come in time order (most steps were these). Returns
        the thread's time and position after them."""
        workers, seen, state = th.workers, th.seen, self.state
        while pos < len(workers) and not (workers[pos] in seen and state[workers[pos]] is not None):
            t += cost
            pos += 1
        return t, pos

    def begin_round(self, th: Thread) -> bool:
        """A round sees the tasks of the thread's cores that have ended when it begins
        (PyPTO polls all of them at once and books the polls one after another): False if
        a task whose end is not known yet might have ended by then."""
        seen = set()
        for w in th.workers:
            st = self.state[w]
            if st is None:
                continue
            if st[0] == "busy":
                # Its end is unknown: it has not ended by now only if it starts, or its
                # clock is, past now; else the round waits for the task to end.
                if (st[2] if w in self.handed else self.cores[w].issue) <= th.t:
                    return False
            elif st[2] <= th.t:
                seen.add(w)
        th.seen = seen
        return True

    def round_end(self, th: Thread) -> None:
        """Hand-over: HUBs move on, then ready tasks go to the thread's idle cores."""
        if self.hubs:
            for h in self.hubs:
                h.left -= 1
            for h in [h for h in self.hubs if h.left <= 0]:
                self.hubs.remove(h)
                if h.group is not None:  # it resolves its successors one after another
                    step = self.fig.resolve_cycles
                    self.graph.release(h.group, h.body, th.t + step, step, h.group.hub_order)
        ready = self.graph.ready
        now = th.t  # the queue as it is at the round end: the hand-overs take no more from it
        for w in th.workers:
            if self.state[w] is not None:
                continue
            heap = ready[self.cores[w].kind]
            if not heap or heap[0][0] > now:
                continue
            _, gi, b, i = heapq.heappop(heap)
            at = th.t
            th.t += self.fig.dispatch_cycles
            task = (self.graph.groups[gi], b, i)
            self._set(w, ("busy", task, th.t))
            self.handed[w] = (task, at, th.t)
            self.graph.handed(w, th.t)

    def behind_hub(self, g: Group, body: int) -> None:
        """Producers of `g`'s body resolved: a HUB takes `hub_rounds` round ends."""
        self.hubs.append(Hub(g, body, self.fig.hub_rounds))
