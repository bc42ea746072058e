"""Task graphs (`npu.graph`): the way PyPTO's runtime runs a kernel in
`device_sched_mode` 0, one ready queue per core kind shared by all cores of that kind.

The graph's block runs first (scalar set-up, GM workspaces); each `npu.tasks` in it
registers a group of `bodies x per_body` tasks. Then every core loops: take the first
ready task of its kind, run the task region on itself, record its end (all pipes
done). Task (b, i) of a group is ready when every task of body b of each group it is
`after` has ended, `latency.task_ready` after the latest of their ends (the first
tasks that long after the graph starts), twice that for a group marked `hub` (PyPTO's
runtime routes its dependence through a HUB task, itself a task to make ready); the
queue orders ready tasks by ready
time, then group order, body, task. Taking a task costs `latency.task_dispatch`; a
core takes its next task no sooner than `latency.task_turnaround` after its last one
ended.

With `stitch N` the loop bodies, in order (loop by loop, body by body), are sewn N at a
time into device tasks run one after another: the tasks of a body in stitch s are
held until every task of stitch s - 1 has ended, and become ready
`latency.stitch` after that at the earliest.

Cores are the scheduler's workers (one thread each, the baton to the smallest clock).
An idle core waits until it can be sure which task it would take first: the best
ready task starts at `s` (the core's clock or the task's ready time, whichever is
later), and no core still running a task is behind `s` (a task it ends could become
ready before `s`, or that core could be free before `s`).

A group of another token loop in `after` (a weight task, which is in none) is waited for
whole: every body waits for all of its tasks.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.ir import Region

from pto.interp.aicpu import Schedulers
from pto.interp.machine import Core, Machine
from pto.interp.scheduler import Scheduler

KINDS = ("cube", "vector")
INF = float("inf")


@dataclass
class Group:
    """One `npu.tasks`, with its body count as evaluated in the graph's block."""

    index: int
    label: str
    kind: str
    bodies: int
    per_body: int
    after: list[str]
    region: Region
    loop: int  # groups of one token loop share its bodies
    hub: bool = False  # a HUB task stands between its producers and it (npu.tasks ... hub)
    # Successors of each task of a body (`npu.tasks ... succ`; one for all), or () for
    # the group-level count the graph derives (TaskGraph.__init__).
    succ: tuple[int, ...] = ()
    # Per task of a body, its place among the successors of its HUB (`npu.tasks ... hub
    # [...]`), or () for the task order.
    hub_order: tuple[int, ...] = ()
    # Per task of a body, the tasks of its producer group's body it waits for
    # (`npu.tasks ... needs [...]`), or () when it waits for the whole body.
    needs: tuple[tuple[int, ...], ...] = ()

    def successors(self, task: int) -> int:
        return self.succ[task if len(self.succ) > 1 else 0]


class TaskGraph:
    def __init__(self, machine: Machine, groups: list[Group], stitch: int | None = None):
        self.machine = machine
        self.groups = groups
        self.stitches = Stitches(groups, stitch)
        self.dependents: dict[str, list[Group]] = {g.label: [] for g in groups}
        self.left: dict[tuple[str, int], int] = {}  # tasks of (group, body) not yet ended
        self.ends: dict[tuple[str, int], float] = {}  # latest end of a task of (group, body)
        self.ready: dict[str, list[tuple[float, int, int, int]]] = {k: [] for k in KINDS}  # heaps
        self._heaps = [self.ready[k] for k in KINDS]
        self.untaken = dict.fromkeys(KINDS, 0)
        # id of a core running a task: core, scheduler worker, when it took the task
        self.active: dict[int, tuple[Core, int, float]] = {}
        self.changes = 0  # takes, ends and releases so far: what idle cores' clocks depend on
        # Per scheduler worker: when its core, idle, may take a task (its start, then
        # `task_turnaround` after its last task ended) and its kind's index in KINDS;
        # and the worker of each core, by id.
        self._free_at = np.zeros(0)
        self._kind_of = np.zeros(0, np.intp)
        # Per worker, its kind's first ready time (`clocks`): the workers of a kind are one
        # run of them (`run_on` makes them kind by kind), filled a slice each.
        self._tops = np.zeros(0)
        self._runs: list[tuple[int, int]] = []
        self._worker: dict[int, int] = {}
        self.aicpu: Schedulers | None = None  # PyPTO's AICPU threads, once the cores exist
        self.modelled = machine.target.aicpu.enabled
        self.resolving: dict[tuple[str, int], int] = {}  # tasks of (group, body) not yet resolved
        self.by_label = {g.label: g for g in groups}
        # Per-task dependences (`needs`): per producer label and task, its consumers (group,
        # task); per consumer (group, body), each task's producers not yet counted out and
        # the latest end among those that are.
        self.feeds: dict[str, dict[int, list[tuple[Group, int]]]] = {}
        self.pending: dict[tuple[str, int], list[int]] = {}
        self.pending_end: dict[tuple[str, int], list[float]] = {}
        for g in groups:
            self.untaken[g.kind] += g.bodies * g.per_body
            for d in g.after:
                self.dependents[d].append(g)
            for i, js in enumerate(g.needs):
                for j in js:
                    self.feeds.setdefault(g.after[0], {}).setdefault(j, []).append((g, i))
            for b in range(g.bodies) if g.needs else ():
                self.pending[(g.label, b)] = [len(js) for js in g.needs]
                self.pending_end[(g.label, b)] = [0.0] * g.per_body
        for g in groups:
            if not g.succ:  # every task of every group after it (one HUB for a `hub` one)
                g.succ = (sum(1 if d.hub else d.per_body * self._fan(g, d) for d in self.dependents[g.label]),)
            for b in range(g.bodies):
                self.left[(g.label, b)] = self.resolving[(g.label, b)] = g.per_body
                if not g.after and not self.modelled:  # (with the AICPU threads: `run_on`)
                    self._release(g, b, machine.now + machine.cost.task_ready)

    def _release_roots(self, polled: int) -> None:
        """With the AICPU threads, the tasks with no producers become ready. A group of a
        token loop's bodies waits for its body's start HUB (PyPTO 0.2.0: one per device
        function, every root task its successor), which runs at the `hub_rounds`-th round
        end of the idle threads (`polled` cores a round) and hands them on one resolution
        step later (measured: mhc_pre's first task starts at 9,385, the third round end
        9,182 and a hand-over, in every configuration). A group in no token loop (a weight
        task: what waits for it is in other loops) or that nothing waits for is ready at
        once (PyPTO: the gamma cast starts at 3,623, the first round end and a hand-over)."""
        a, now = self.machine.target.aicpu, self.machine.now
        hub = a.start_cycles + a.hub_rounds * polled * a.poll_cycles + a.resolve_cycles
        for g in self.groups:
            if not g.after:
                behind_hub = any(d.loop == g.loop for d in self.dependents[g.label])
                for b in range(g.bodies):
                    self._release(g, b, now + (hub if behind_hub else 0.0))

    def run(self, cube_cores: int, vector_cores: int, child) -> None:
        """Run every task on new cores; `child(core)` makes a core's interpreter."""

        def work(core: Core, worker: int):
            return partial(self._work, core, child(core), worker)

        self.run_on(Scheduler(), cube_cores, vector_cores, work)

    def run_on(self, sched, cube_cores: int, vector_cores: int, work) -> None:
        """Run every task on new cores interleaved by `sched`; `work(core, worker)` is
        what the scheduler runs for a core (its loop over tasks)."""
        m = self.machine
        cores = [
            m.new_core(k, i, m.now) for k, n in zip(KINDS, (cube_cores, vector_cores), strict=True) for i in range(n)
        ]
        self._free_at = np.array([c.issue for c in cores], np.float64)
        self._worker = {id(c): w for w, c in enumerate(cores)}
        self._kind_of = np.array([KINDS.index(c.kind) for c in cores], np.intp)
        self._tops = np.zeros(len(cores))
        counts = [cube_cores, vector_cores]
        self._runs = [(sum(counts[:k]), sum(counts[: k + 1])) for k in range(len(KINDS))]
        for w, core in enumerate(cores):  # worker w of the new scheduler
            sched.add(core.name, work(core, w), partial(self._clock, core))
        if self.modelled:
            self._free_at[:] = INF  # a core starts when a thread hands it a task
            self.aicpu = Schedulers(self, m.target.aicpu, cores)
            self._release_roots(len(self.aicpu.threads[0].workers))
            self.aicpu.advance()
        m.scheduler = sched
        try:
            sched.run_all()
        finally:
            m.scheduler = None
        m.finish_launch(cores)
        if self.aicpu is not None and self.machine.task_runs:  # the end HUB
            m.now = max(m.now, max(t.end for t in m.task_runs) + m.target.aicpu.end_cycles)

    # -- one core ----------------------------------------------------------------------

    def _work(self, core: Core, interp, worker: int) -> None:
        sched = self.machine.scheduler
        while True:
            sched.wait(partial(self.may_take, core), self.waits_for(core))
            task = self.take(core, worker)
            if task is None:
                return  # every task of this kind has been taken
            interp.run_ssacfg_region(task[0].region, task[1:], task[0].label)
            self.finish(core, task)

    @staticmethod
    def waits_for(core: Core) -> str:
        return f"a {core.kind} task"

    def take(self, core: Core, worker: int) -> tuple[Group, int, int] | None:
        """Give the core the first ready task: (group, body, task), its dispatch charged;
        None once every task of its kind has been taken."""
        if self.aicpu is not None:
            return self._take_handed(core, worker)
        heap = self.ready[core.kind]
        if not heap:
            return None
        self.changes += 1
        ready, gi, b, i = heapq.heappop(heap)
        self.untaken[core.kind] -= 1
        taken = max(self._free(core), ready)
        core.issue = taken + self.machine.cost.task_dispatch
        self.active[id(core)] = (core, worker, taken)
        self.machine.task_taken(core)
        return self.groups[gi], b, i

    def _take_handed(self, core: Core, worker: int) -> tuple[Group, int, int] | None:
        """The task a scheduler thread handed the core (None once none is left)."""
        assert self.aicpu is not None
        if worker not in self.aicpu.handed:
            return None
        self.changes += 1
        task, at, start = self.aicpu.taken(worker)
        core.issue = start
        self.active[id(core)] = (core, worker, at)
        self.machine.task_taken(core)
        return task

    def finish(self, core: Core, task: tuple[Group, int, int]) -> None:
        """The core's task has run: it ends once all its pipes are done."""
        g, b, i = task
        self.changes += 1
        _, worker, taken = self.active.pop(id(core))
        core.issue = core.end()
        self.machine.task_done(core, g.label, (b, i), taken, core.issue)
        self._ended(g, b, i, core.issue)
        if self.aicpu is not None:
            self._free_at[worker] = INF
            self.aicpu.ended(worker, task, core.issue)
            return
        self._free_at[worker] = core.issue + self.machine.cost.task_turnaround

    def _free(self, core: Core) -> float:
        """When an idle core can take its next task: `task_turnaround` after its last one."""
        return float(self._free_at[self._worker[id(core)]])

    def _clock(self, core: Core) -> float:
        """A running core's clock is its issue time; an idle one's, when it would start
        its next task (so the scheduler lets the core that is free first take it)."""
        if id(core) in self.active:
            return core.issue
        if self.aicpu is not None:  # when it starts the task handed to it, if any
            return self._free(core)
        heap = self.ready[core.kind]
        return max(self._free(core), heap[0][0]) if heap else float("inf")

    def version(self) -> int:
        return self.changes

    def clocks(self) -> np.ndarray:
        """`_clock` of every core, in worker order: numpy over the idle cores' free times
        and their kind's first ready task, then the running cores' issue times. (A core
        that is done has no task of its kind left: its clock is infinite.)"""
        if self.aicpu is not None:
            clocks = self._free_at.copy()
        else:
            tops = self._tops
            for h, (a, b) in zip(self._heaps, self._runs, strict=True):
                tops[a:b] = h[0][0] if h else INF
            clocks = np.maximum(self._free_at, tops)
        if active := self.active.values():  # (one assignment: a numpy item set per core cost more)
            clocks[[w for _, w, _ in active]] = [core.issue for core, _, _ in active]
        return clocks

    def may_take(self, core: Core) -> bool:
        if self.aicpu is not None:  # a thread handed it a task, or none is left
            return self._worker[id(core)] in self.aicpu.handed or self.untaken[core.kind] == 0
        heap = self.ready[core.kind]
        if not heap:
            return self.untaken[core.kind] == 0
        start = max(self._free(core), heap[0][0])
        sched = self.machine.scheduler
        # A running core blocked inside its task (a cross-core wait) is not waited for:
        # it may wait for a task this core is about to take. (`blocked` is asked only of
        # a core that would be waited for: a call per running core was most of this.)
        return all(start <= o.issue or sched.blocked(w) for o, w, _ in self.active.values())

    # -- readiness -----------------------------------------------------------------------

    def _release(
        self, g: Group, body: int, at: float, step: float = 0.0, order: tuple[int, ...] = (), task: int | None = None
    ) -> None:
        if not self.stitches.admit(g, body, at, task):
            return
        self._push(g, body, at, step, order, task)

    def _push(
        self, g: Group, body: int, at: float, step: float = 0.0, order: tuple[int, ...] = (), task: int | None = None
    ) -> None:
        """The body's tasks of `g` (or only `task`) are ready."""
        self.changes += 1
        for i in range(g.per_body) if task is None else (task,):
            heapq.heappush(self.ready[g.kind], (at + (order[i] if order else i) * step, g.index, body, i))

    def _counted(self, g: Group, body: int, task: int, at: float, step: float) -> None:
        """Task `task` of the body of `g` is counted out (ended, or resolved from `at`):
        each consumer (`needs`) it was the last producer of is ready, when its producers
        have all ended plus `task_ready`, or at its own resolution step."""
        k = 0
        for d, i in self.feeds.get(g.label, {}).get(task, ()):
            k += 1
            left, ends = self.pending[(d.label, body)], self.pending_end[(d.label, body)]
            left[i] -= 1
            ends[i] = max(ends[i], at)
            if not left[i]:
                when = ends[i] + self.machine.cost.task_ready if self.aicpu is None else at + step * k
                self._release(d, body, when, task=i)

    def _ended(self, g: Group, body: int, task: int, end: float) -> None:
        key = (g.label, body)
        self.ends[key] = max(self.ends.get(key, end), end)
        for h, hb, at, only in self.stitches.ended(g, body, end, self.machine.cost.stitch):
            self._push(h, hb, at, task=only)
        self.left[key] -= 1
        if self.aicpu is None:
            self._counted(g, body, task, end, 0.0)
        if self.left[key] or self.aicpu is not None:  # (then readiness comes with resolution)
            return
        for d in self.dependents[g.label]:
            if d.needs:  # (task by task, above)
                continue
            for b in self._waiting(g, d, body):
                if self._done(d, b, self.left):
                    self._release(d, b, self._ready(d, b))

    # -- dependences: within a token loop body by body, else on the whole group ---------

    def _fan(self, g: Group, d: Group) -> int:
        """How many bodies of `d` wait for each task of `g`."""
        return 1 if d.loop == g.loop else d.bodies

    def _waiting(self, g: Group, d: Group, body: int) -> range:
        """The bodies of `d` that body `body` of `g` may release."""
        if d.loop == g.loop:
            return range(body, body + 1)
        return range(d.bodies) if self._whole(g, self.left if self.aicpu is None else self.resolving) else range(0)

    def _whole(self, g: Group, table: dict[tuple[str, int], int]) -> bool:
        return all(table[(g.label, b)] == 0 for b in range(g.bodies))

    def _done(self, d: Group, body: int, table: dict[tuple[str, int], int]) -> bool:
        """Whether every task body `body` of `d` waits for is counted out of `table`."""
        for a in d.after:
            g = self.by_label[a]
            if not (table[(a, body)] == 0 if g.loop == d.loop else self._whole(g, table)):
                return False
        return True

    # -- what the AICPU threads do --------------------------------------------------------

    def handed(self, worker: int, start: float) -> None:
        """A thread handed the worker's core a task that starts at `start`."""
        self.changes += 1
        self._free_at[worker] = start
        self.untaken[KINDS[self._kind_of[worker]]] -= 1

    def resolved(self, g: Group, body: int, task: int, start: float, step: float) -> None:
        """A thread resolved the successors of task (body, task) of `g`, one every `step`
        cycles from `start`. A successor whose last producer this is becomes ready when its
        own step ends (PyPTO enqueues it then): the successors in order are the tasks of
        the groups after `g` (in graph order, body by body, a HUB counting once), those of
        a group that waits task by task (`needs`) first. Where the task hands on to only
        some of a group's tasks (`succ` below that) without `needs`, which ones is not
        known here: they are ready when the whole resolution ends."""
        key = (g.label, body)
        self.resolving[key] -= 1
        self._counted(g, body, task, start, step)  # (its `needs` consumers come first)
        if self.resolving[key]:
            return
        assert self.aicpu is not None
        n = g.successors(task)
        deps = [d for d in self.dependents[g.label] if not d.needs]
        k = len(self.feeds.get(g.label, {}).get(task, ()))
        ordered = n - k == sum(1 if d.hub else d.per_body * self._fan(g, d) for d in deps)
        # (k: successors of the task before this body's tasks of `d`)
        for d in deps:
            for b in self._waiting(g, d, body):
                if self._done(d, b, self.resolving):
                    if d.hub:
                        self.aicpu.behind_hub(d, b)
                    elif ordered:
                        self.release(d, b, start + step * (k + 1), step)
                    else:
                        self.release(d, b, start + step * n)
                k += 1 if d.hub else d.per_body

    def release(self, g: Group, body: int, at: float, step: float = 0.0, order: tuple[int, ...] = ()) -> None:
        """The body's tasks of `g` are ready: task i at `at + k * step`, k its place in
        `order` (default: i)."""
        self._release(g, body, at, step, order)

    def _ready(self, d: Group, body: int) -> float:
        """When the body's tasks of `d` are ready: `task_ready` after its producers end,
        twice that through a HUB task (`npu.tasks ... hub`)."""
        hops = 2 if d.hub else 1
        ends = [
            self.ends[(a, b)]
            for a in d.after
            for b in ((body,) if self.by_label[a].loop == d.loop else range(self.by_label[a].bodies))
        ]
        return max(ends) + hops * self.machine.cost.task_ready


class Stitches:
    """Which loop bodies may run: stitch s = (the body's place among all bodies) div N
    opens when every task of stitch s - 1 has ended."""

    def __init__(self, groups: list[Group], n: int | None):
        first: dict[int, int] = {}  # loop -> place of its body 0
        total = 0
        for g in groups:
            if g.loop not in first:
                first[g.loop], total = total, total + g.bodies
        self.first, self.n = first, n or max(total, 1)
        self.left = [0] * max(1, -(-total // self.n))  # tasks of each stitch not yet ended
        for g in groups:
            for b in range(g.bodies):
                self.left[self.of(g, b)] += g.per_body
        self.open, self.end = 0, 0.0
        self.held: dict[int, list[tuple[Group, int, float, int | None]]] = {}

    def of(self, g: Group, body: int) -> int:
        return (self.first[g.loop] + body) // self.n

    def admit(self, g: Group, body: int, at: float, task: int | None = None) -> bool:
        """Whether the body (or its `task`) may be released now; else it is held until its
        stitch opens."""
        s = self.of(g, body)
        if s <= self.open:
            return True
        self.held.setdefault(s, []).append((g, body, at, task))
        return False

    def ended(self, g: Group, body: int, end: float, latency: float) -> list[tuple[Group, int, float, int | None]]:
        """A task of the body ended: the (group, body, ready time, task or None for all)
        of the stitches this opens."""
        s = self.of(g, body)
        self.left[s] -= 1
        self.end = max(self.end, end)
        opened = []
        while self.open + 1 < len(self.left) and self.left[self.open] == 0:
            self.open += 1
            opened += [(h, b, max(at, self.end + latency), i) for h, b, at, i in self.held.pop(self.open, [])]
        return opened
