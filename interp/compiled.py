"""The compiled engine: the `npu` level run as Python generated once per kernel
(`pto.interp.codegen`), its cores generators interleaved in one thread.

The xDSL interpreter still runs the kernel function and a graph's block (a few scalar
ops, the workspaces, the groups); a launch's or a graph's cores run their compiled
programs here instead of a `CoreInterpreter` each on an OS thread. `EventScheduler`
makes the same choices as `pto.interp.scheduler.Scheduler` (its `behind`,
`first_ready` and `deadlock`), at the same points, and a graph's cores take tasks
through the same `TaskGraph`, so the interleaving, the outputs and every figure are
the interpreter's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from functools import partial
from math import inf as INF

import numpy as np
from xdsl.interpreter import Interpreter
from xdsl.ir import Region

from pto.interp import stacked
from pto.interp.codegen import YIELD, Block, Program, compile_region
from pto.interp.codegen_stacked import compile_stacked
from pto.interp.graph import KINDS, TaskGraph
from pto.interp.machine import Core, Machine
from pto.interp.scheduler import QUANTUM, Worker, deadlock


@dataclass
class _Wait:
    """What a graph core yields between tasks: the scheduler's `wait`. `ready` holds
    whenever the core's clock is finite and no other core's is earlier (`earliest`):
    its clock is then when it would start the best ready task, and every running core
    is at or past it (`TaskGraph.may_take`), so the scheduler need not ask."""

    ready: Callable[[], bool]
    what: str
    earliest: bool = True


@dataclass
class EventScheduler:
    """Cores as generators, one running at a time until it yields (`YIELD`, `Block` or
    `_Wait`); the next is chosen by the thread scheduler's rules (`behind`,
    `first_ready`), evaluated on `clocks()`: every worker's clock in one array (a
    graph's `TaskGraph.clocks`), not a call per worker, taken as a `Clocks`.

    At a `YIELD` only the running core's clock is read anew: the others' cannot change
    while it runs unless the shared state they depend on does, which `version()` counts
    (a graph's takes and ends), so their clocks are kept, in order, from the first
    `YIELD` after the last change. A `YIELD` then costs a comparison with the smallest
    of them, where a per-worker test was the bulk of a timing-only run."""

    workers: list[Worker] = field(default_factory=list)
    # Every worker's clock, in worker order; a done worker's may be any (infinite is best).
    clocks: Callable[[], np.ndarray] | None = None
    version: Callable[[], int] = lambda: 0
    _turns: int = 0  # choices of the next worker so far: the clocks kept are of one turn
    _kept: tuple = ((None, None), None)  # ((turn, version), `Clocks` of `clocks()` then)
    # While the running core's clock is at most this, no other core is more than
    # `QUANTUM` behind it, so a `YIELD` would be refused: a program tests it and does not
    # yield (`codegen`; in an op-heavy run, refused turns were about 15% of the time). Set
    # when a `YIELD` is refused, for the rest of the turn: the others' clocks stay as
    # kept, since `version` changes only between a core's tasks, where it yields a
    # `_Wait` and the turn ends.
    calm_until: float = -INF

    def add(self, name: str, run: Generator, clock: Callable[[], float]) -> None:
        self.workers.append(Worker(len(self.workers), name, run, clock))  # type: ignore[arg-type]

    def blocked(self, index: int) -> bool:
        return self.workers[index].waiting is not None

    def run_all(self) -> None:
        if self.clocks is None:
            self.clocks = lambda: np.array([INF if w.done else w.clock() for w in self.workers])
        w = self._next()
        while w is not None:
            w.waiting = None
            try:
                request = next(w.run)  # type: ignore[call-overload]
            except StopIteration:
                w.done = True
                w = self._next()
                continue
            w = self._after(w, request)

    def _after(self, w: Worker, request) -> Worker | None:
        """Who runs after `w` asked for `request`."""
        if request is YIELD:
            return self._next() if self._behind(w) else w
        if isinstance(request, Block) and request.ready():
            return w
        w.waiting, w.what = request.ready, request.what
        w.earliest = isinstance(request, _Wait) and request.earliest
        return self._next()

    def _behind(self, w: Worker) -> bool:
        """`pto.interp.scheduler.behind`: whether another core that may go on is more
        than `QUANTUM` cycles behind `w`.

        The clocks `_next` read at the start of this turn bound the others' clocks now
        from below: since then the running core has only taken its task (a pop, which
        can only make an idle core's clock later) and run its own ops; ends and releases
        come at the end of a turn. If no core is behind on those, none is now, and they
        are not read again (a flat loop's task is one turn: it was a `clocks()` each)."""
        key = (self._turns, self.version())
        if self._kept[0] == key:
            return self._behind_on(w, self._kept[1])
        if self._kept[0][0] == self._turns and not self._behind_on(w, self._kept[1]):
            return False
        self._kept = (key, Clocks(self.clocks()))  # type: ignore[misc]
        return self._behind_on(w, self._kept[1])

    def _calm(self, w: Worker, clocks: Clocks) -> Worker:
        """`w`, to run next, with `calm_until` as its first refused `YIELD` would set it
        (`_behind_on` on these clocks, which bound the others' for the whole turn): a
        turn's first `YIELD` was one per task, nearly always refused."""
        self.calm_until = clocks.least_besides(w.index) + QUANTUM
        return w

    def _behind_on(self, w: Worker, clocks: Clocks) -> bool:
        """`_behind` on the given clocks; False sets `calm_until` from them."""
        mine = w.clock()
        least = clocks.least_besides(w.index)
        if not least + QUANTUM < mine:  # (nearly every time: the walk would stop at once)
            self.calm_until = least + QUANTUM
            return False
        workers, at = self.workers, clocks.at.tolist()
        first = INF  # the earliest other core that is not done
        for i in clocks.order():  # (most turns stop at the first few)
            o, c = workers[i], at[i]
            if o is w or o.done:
                continue
            first = min(first, c)
            if not c + QUANTUM < mine:
                break
            if o.waiting is None or o.waiting():
                return True
        self.calm_until = first + QUANTUM
        return False

    def _next(self) -> Worker | None:
        """`first_ready` on the clocks now."""
        self._turns += 1
        self.calm_until = -INF
        workers = self.workers
        clocks = Clocks(self.clocks())  # type: ignore[misc]
        self._kept = ((self._turns, self.version()), clocks)
        if workers:
            first = clocks.first()
            w = workers[first]
            if not w.done and (w.waiting is None or (w.earliest and clocks.at[first] < INF) or w.waiting()):
                return self._calm(w, clocks)  # (nearly every time)
            for i in clocks.order()[1:]:
                w = workers[i]
                if not w.done and (w.waiting is None or w.waiting()):
                    return self._calm(w, clocks)
        live = [w for w in workers if not w.done]
        if live:
            raise deadlock(live)
        return None


class Clocks:
    """Every worker's clock at one moment (`at`, in worker order) and the workers in
    (clock, index) order, which the scheduler's rules walk. A turn nearly always wants
    only the earliest worker and the earliest but the running one: an argmin, and a
    second minimum only when the running one is the earliest (a partition each turn
    cost a third of a flat loop's scheduling; sorting them all, 1-2% of its
    instructions). The whole order is sorted only when asked for."""

    __slots__ = ("at", "_order", "_first")

    def __init__(self, at: np.ndarray):
        self.at = at
        self._order: list[int] | None = None
        self._first = -1

    def first(self) -> int:
        """The earliest worker, the lowest index of a tie (the order's first)."""
        if self._first < 0:
            self._first = int(self.at.argmin())
        return self._first

    def order(self) -> list[int]:
        if self._order is None:
            self._order = self.at.argsort(kind="stable").tolist()
        return self._order

    def least_besides(self, i: int) -> float:
        """The earliest clock of the workers other than `i`: the smallest, unless `i`'s
        is the smallest; then the smallest of the others (equal to it if another's is)."""
        at = self.at
        if at.size < 2:
            return INF
        smallest = at[self.first()]
        if at[i] != smallest:
            return float(smallest)
        mine, at[i] = at[i], INF  # (`at` is this turn's own array: restored at once)
        least = float(np.minimum.reduce(at))  # (`at.min()`'s Python wrapper cost as much again)
        at[i] = mine
        return least


class Programs:
    """The compiled programs of one kernel's regions, and how to start one on a core.

    A region's program is kept on the region (`_CACHED`), with what it was compiled
    from, so that the next run of the same module does not compile it again (a tuner
    runs one configuration's module at each token count: each group's program is
    compiled once per variant); it goes with the region, and a region changed since (an
    op, operand, type or attribute replaced, added or moved) is compiled anew. What a
    program computes depends on its region alone: the target's figures are read when it
    runs (`Core.memo`, per core)."""

    def __init__(self, interpreter: Interpreter):
        self.interpreter = interpreter
        self.checked: set[int] = set()  # ids of the regions whose cache this run has checked

    def get(self, region: Region, label: str, hot: bool = False) -> Program:
        """The region's program (`hot`: its variant for many runs, `compile_region`)."""
        kept = self._kept(region)
        if hot not in kept:
            kept[hot] = compile_region(region, label, hot)
        return kept[hot]

    def ran_plain(self, region: Region) -> int:
        """How many tasks the region's plain program was given in the runs that ended so
        far (`count_plain`; a run given up, `Slower`, or refused, `Unstackable`, is not
        counted: its rerun is)."""
        return self._kept(region).get(_PLAIN_TASKS, 0)

    def count_plain(self, region: Region, tasks: int) -> None:
        """The region's plain program is given `tasks` more tasks (`HOT_AGAIN`)."""
        kept = self._kept(region)
        kept[_PLAIN_TASKS] = kept.get(_PLAIN_TASKS, 0) + tasks

    def _kept(self, region: Region) -> dict:
        """What is compiled of the region and still valid: its programs by variant."""
        cached: tuple[int, list, dict] | None = getattr(region, _CACHED, None)
        # (a copy of the region made by `copy.deepcopy` carries the attribute: its id differs)
        if id(region) not in self.checked:  # a run does not change its IR: checked once
            self.checked.add(id(region))
            source = _compiled_from(region)
            if cached is None or cached[0] != id(region) or not _same(cached[1], source):
                cached = (id(region), source, {})
                setattr(region, _CACHED, cached)
        assert cached is not None
        return cached[2]

    def stacked(self, region: Region, label: str) -> tuple | None:
        """The region's stacked numerics program (`pto.interp.codegen_stacked`) and the
        values it uses from outside, as they are now; None if it cannot be stacked."""
        kept = self._kept(region)
        if "stacked" not in kept:
            kept["stacked"] = compile_stacked(region)
        if kept["stacked"] is None:
            return None
        fn, free, split = kept["stacked"]
        return fn, self.interpreter.get_values(free), split

    def costs(self, graph: TaskGraph) -> dict[str, float]:
        """The measured costs of the graph's ways to run (`_way`), kept with its first
        group's programs, for graphs of its shape (the group sizes a token count gives)."""
        shape = tuple((g.bodies, g.per_body) for g in graph.groups)
        return self._kept(graph.groups[0].region).setdefault(("costs", shape), {})

    def refuse(self, region: Region) -> None:
        """The region's stacked program was refused at run time: its graph runs per task
        from now on, without a timing run and a rerun each time (the refusal comes from
        the program's index arithmetic and the graph's shape, which the next run of the
        same module repeats)."""
        self._kept(region)["stacked"] = None

    def fallback(self, op, args: tuple) -> tuple:
        return self.interpreter.run_op(op, args)

    def free_values(self, program: Program) -> tuple:
        """The values the program uses from outside its region, as they are now."""
        return self.interpreter.get_values(program.free)


_CACHED = "_pto_compiled_program"
# The key, in what is kept of a region, of the count of tasks its plain program was given.
_PLAIN_TASKS = "plain tasks"


def _compiled_from(region: Region) -> list:
    """Every object of the region a program is compiled from, in order."""
    parts: list = []
    for op in region.walk():
        parts.append(op)
        parts.extend(op.operands)
        parts.extend(v.type for v in op.operands)
        parts.extend(r.type for r in op.results)
        parts.extend(op.properties.values())
        parts.extend(op.attributes.values())
        for r in op.regions:
            for b in r.blocks:
                parts.extend(b.args)
    return parts


def _same(old: list, new: list) -> bool:
    """The same objects: the old list keeps them alive, so none's identity is reused."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


# A graph group of at least this many tasks runs its program's `hot` variant, a smaller
# one the plain variant: a hot program's GM copies take half the time but compile in
# several times as long, which only a group of many tasks repays (a tuner compiles every
# configuration). The group's task count is known before its first task runs.
HOT = 32
# So is how many tasks the region's plain program was given in earlier runs of its
# module (`Programs.ran_plain`): once that is this many, the module is being run again
# and again, and the region runs hot from then on (mla_wkv_rmsnorm at unroll [1], t=128:
# groups of 8 tasks, hot from its third run; timing-only 28 ms plain, 19 ms hot). A
# tuner's configuration run at one or two token counts stays plain.
HOT_AGAIN = 16


def run_graph(machine: Machine, programs: Programs, graph: TaskGraph, cube: int, vector: int) -> None:
    groups: list[tuple[Program, tuple] | None] = []
    plain: list[tuple[Region, int]] = []  # (counted when the run ends: a run given up counts none)
    for g in graph.groups:
        tasks = g.bodies * g.per_body
        if not tasks:  # (an unroll factor the token count leaves unused): not compiled
            groups.append(None)
            continue
        hot = tasks >= HOT or programs.ran_plain(g.region) >= HOT_AGAIN
        if not hot:
            plain.append((g.region, tasks))
        program = programs.get(g.region, g.label, hot=hot)
        groups.append((program, programs.free_values(program)))

    numbers = _stacked(machine, programs, graph)
    costs = programs.costs(graph) if numbers is not None else {}
    way = _way(costs) if numbers is not None else "per task"
    start = CLOCK()
    # The per-task path's trial (`_way`) gives up once it has cost more than the stacked
    # run did (sk03_standard at unroll [1], t=128: 1.2 s per task against 0.23 s stacked).
    limit = start + costs["stacked"] if way == "per task" and "stacked" in costs else None

    def work(core: Core, worker: int) -> Generator:
        return _tasks(machine, graph, core, worker, groups, programs, limit)

    if way == "per task":  # each task's numerics as its program runs
        try:
            graph.run_on(EventScheduler(clocks=graph.clocks, version=graph.version), cube, vector, work)
        except Slower:
            costs[way] = CLOCK() - start  # (more than the stacked run's: not chosen)
            costs[f"{way} runs"] = costs.get(f"{way} runs", 0) + 1
            raise
    else:
        # Numbers by task group, timing by task: the timing model schedules every task
        # with no numerics, then each group computes its tasks' numbers at once. A run
        # whose stacked numerics could differ raises `stacked.Unstackable` and is run
        # again per task (`pto.interp.run`).
        assert numbers is not None
        machine.numerics = False
        try:
            graph.run_on(EventScheduler(clocks=graph.clocks, version=graph.version), cube, vector, work)
        finally:
            machine.numerics = True
        try:
            stacked.run_numerics(graph.groups, numbers[0], machine.inputs, numbers[1])
        except stacked.Unstackable as e:
            if e.group is not None:
                programs.refuse(graph.groups[e.group].region)
            raise
    if numbers is not None:
        costs[way] = min(costs.get(way, INF), CLOCK() - start)
        costs[f"{way} runs"] = costs.get(f"{way} runs", 0) + 1
    for region, tasks in plain:
        programs.count_plain(region, tasks)


# What a run's cost is measured on: the process's CPU time (a shared machine's other load
# is not the run's).
CLOCK = time.process_time


def _way(costs: dict[str, float]) -> str:
    """How a graph that can be stacked runs: stacked the first time, per task the second,
    stacked again the third (a first run is cold: measured, its cost was up to 3x a
    later one's, which chose per task for graphs stacked runs faster), then the cheaper
    of the two as measured (the cheapest run of each; a per-task trial is given up
    once it costs more than the stacked run, `Slower`), except that the other is run
    once more when the runs so far reach `RETRY`, twice that, and so on. Both give the
    same numbers and the same report; which is cheaper depends on the graph: stacking
    pays copies of every task's tiles, the per-task path Python per op per task."""
    if "stacked" not in costs:
        return "stacked"
    if "per task" not in costs:
        return "per task"
    if costs.get("stacked runs", 0) < 2:
        return "stacked"
    best = min(WAYS, key=costs.__getitem__)
    runs = int(sum(costs.get(f"{w} runs", 0) for w in WAYS))
    if runs >= RETRY and runs & (runs - 1) == 0:  # (a power of two: log2 of the runs are retries)
        return WAYS[1 - WAYS.index(best)]
    return best


WAYS = ("stacked", "per task")
# The other way's first runs may have been measured while still warming up (hc_pre at
# t=512: stacked 204 and 171 ms in its first two runs, about 140 later, per task 150 in
# its one), and a way not chosen is not measured again: it is retried after this many
# runs of the graph, and after each doubling of them.
RETRY = 8


# A graph is stacked when one of its groups has at least this many loop bodies: its
# index arrays and spans then do the work of many per-task ops (measured, GM tracked by
# spans and copied through strided views: at 4 bodies of 128 tokens the stacked pass
# cost 0.6-1x the per-task numerics, at 128 bodies of one token a third of them; at one
# body, 1.1-1.6x). The first run of a graph is stacked (`_way`): below this, it would
# rarely repay that run. A graph with fewer is stacked if a group's program splits its
# task axis (`stacked.Stack`): its tasks share tiles, which stacking loads and multiplies
# once (mla_wqa_qrmsnorm, one body of 128 tokens: stacked 0.05 s, per task 0.07 s); or
# if a group has at least `STACK_TASKS` tasks: one numpy call per op then does the work
# of that many per-task ones (the int8 example at unroll [1], t=128, one body of 16, 32
# and 64 tasks: stacked 71 ms, per task 84 ms; mla_wkv_rmsnorm, 8 and 16: 43 and 46 ms),
# where a graph of a few tasks (a decode step's) would pay the stacked pass's setup.
STACK_BODIES = 4
STACK_TASKS = 16


def _stacked(machine: Machine, programs: Programs, graph: TaskGraph) -> tuple[list, dict] | None:
    """Every group's stacked program (None for a group with no task) and the groups'
    ancestors, if the graph's numerics may be computed by group; else None."""
    if not (machine.numerics and machine.stacking):
        return None
    above = stacked.ancestors(graph.groups)
    if above is None:
        return None
    out: list = []
    for g in graph.groups:
        prog = programs.stacked(g.region, g.label) if g.bodies * g.per_body else None
        if prog is None and g.bodies * g.per_body:
            return None
        out.append(prog)
    if (
        max((g.bodies for g in graph.groups), default=0) < STACK_BODIES
        and max((g.bodies * g.per_body for g in graph.groups), default=0) < STACK_TASKS
        and not any(p is not None and stacked.splits(p[2], g.per_body) for p, g in zip(out, graph.groups, strict=True))
    ):
        return None
    return out, above


class Slower(Exception):
    """A per-task trial run has cost more than the graph's stacked run: it is abandoned
    and the run made again, stacked (`pto.interp.run`)."""


def _tasks(
    m: Machine,
    graph: TaskGraph,
    core: Core,
    worker: int,
    groups: list[tuple[Program, tuple] | None],
    programs: Programs,
    limit: float | None = None,
) -> Generator:
    """A graph core's loop (`TaskGraph._work`'s): wait for a task, take it, run it;
    `limit`: raise `Slower` at a task taken past this time of `CLOCK`."""
    wait = _Wait(partial(graph.may_take, core), graph.waits_for(core))  # the same each time
    while True:
        yield wait
        task = graph.take(core, worker)
        if task is None:
            return
        if limit is not None and CLOCK() > limit:
            raise Slower
        program, free = groups[task[0].index]  # type: ignore[misc]  # (a group with a task)
        yield from program.fn(m, core, free, programs.fallback, task[1], task[2])
        graph.finish(core, task)


def run_launch(machine: Machine, programs: Programs, regions: Iterable[tuple[str, int, Region]]) -> None:
    """`npu.launch`: each core runs its kind's program with its index."""
    cores: list[Core] = []
    sched = EventScheduler()
    for kind, count, region in regions:
        assert kind in KINDS
        if not count:
            continue
        program = programs.get(region, kind, hot=True)  # run once per core, each a whole launch
        free = programs.free_values(program)
        for i in range(count):
            core = machine.new_core(kind, i)
            cores.append(core)
            sched.add(core.name, program.fn(machine, core, free, programs.fallback, i), partial(_clock, core))
    machine.scheduler = sched
    sched.run_all()
    machine.scheduler = None
    machine.finish_launch(cores)


def _clock(core: Core) -> float:
    return core.clock
