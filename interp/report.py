"""What a run of the machine model reports: makespan, per-pipe busy cycles and
utilisation per core, every graph task as it ran, L2 and HBM counters per tensor, peak
buffer occupancy, and the kernel's configuration. This is the one data model; its
views are the text table and the JSON here, the Chrome trace (`pto.interp.trace`) and
the HTML page (`pto.interp.page`).

A stage is a label of a group without its unroll factor (`linear.128` -> `linear`):
its utilisation is per pipe, busy cycles over its tasks' core cycles; its roofline
puts what it achieved against the target's peaks (`Stage.roofline`)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields

from pto.interp.machine import PIPES, Machine, TaskRun

KINDS = {"cube": "aic", "vector": "aiv"}  # core kind -> core name prefix
# Fields the JSON leaves out: per op, per task (the trace and the page show them), the target's.
BULKY = ("events", "task_runs", "peaks")
BOUND_LATENCY = 0.5  # a stage whose busiest resource is below this share waits more than it works


def stage_of(group: str) -> str:
    """A group's stage: its label without the unroll factor (`linear.128` -> `linear`)."""
    return re.sub(r"\.\d+$", "", group)


def kind_of(core: str) -> str:
    return "cube" if core.startswith(KINDS["cube"]) else "vector"


@dataclass
class Peaks:
    """The target's figures a roofline compares with: per core, and HBM for the chip."""

    cube_macs: dict[str, float]  # MACs per cycle of one cube core, by input element type
    vector_bytes: float  # bytes per cycle of one vector core (a repeat at the default rate)
    hbm_bytes: float  # bytes per cycle, all cores together


@dataclass
class Stage:
    """The tasks of one stage label, summed (`Report.stages`)."""

    label: str
    kind: str
    groups: list[str]
    tasks: int = 0
    core_cycles: float = 0.0  # the sum of its tasks' durations
    start: float = float("inf")
    end: float = 0.0
    busy: dict[str, float] = field(default_factory=lambda: {p.value: 0.0 for p in PIPES})
    macs: int = 0
    hbm_bytes: int = 0

    def add(self, t: TaskRun) -> None:
        self.tasks += 1
        self.core_cycles += t.end - t.start
        self.start, self.end = min(self.start, t.start), max(self.end, t.end)
        for p, c in t.busy.items():
            self.busy[p] += c
        self.macs += t.macs
        self.hbm_bytes += t.hbm_bytes
        if t.group not in self.groups:
            self.groups.append(t.group)

    def util(self, pipe: str) -> float:
        return self.busy[pipe] / self.core_cycles if self.core_cycles else 0.0

    def roofline(self, peaks: Peaks) -> list[dict]:
        """Achieved against peak: per core, the compute unit of its kind (the cube in
        MACs/cycle, its peak the rate its mmads ran at; the vector unit in bytes/cycle,
        at its rate while busy), and HBM for the chip (bytes/cycle over the stage's span)."""
        span = self.end - self.start if self.tasks else 0.0
        cube_peak = self.macs / self.busy["cube"] if self.busy["cube"] else max(peaks.cube_macs.values())
        if self.kind == "cube":
            unit = ("cube", "MACs/cycle/core", self.macs / self.core_cycles if self.core_cycles else 0.0, cube_peak)
        else:
            unit = ("vector", "bytes/cycle/core", self.util("vector") * peaks.vector_bytes, peaks.vector_bytes)
        rows = [unit, ("HBM", "bytes/cycle", self.hbm_bytes / span if span else 0.0, peaks.hbm_bytes)]
        return [
            {"resource": r, "unit": u, "achieved": a, "peak": p, "share": a / p if p else 0.0} for r, u, a, p in rows
        ]

    def bound(self, peaks: Peaks) -> str:
        """What limits the stage: its busiest pipe or HBM; below `BOUND_LATENCY`, waiting
        (dispatch, dependences, latency) with the busiest named."""
        shares = {p.value: self.util(p.value) for p in PIPES if p.value != "scalar"}
        shares["HBM"] = self.roofline(peaks)[-1]["share"]
        name = max(shares, key=lambda k: shares[k])
        if shares[name] < BOUND_LATENCY:
            return f"latency ({name} {shares[name]:.0%})"
        return f"{name} ({shares[name]:.0%})"


@dataclass
class Report:
    target: str
    clock_mhz: int
    cycles: float
    launches: int
    l2_size: int
    cores: dict[str, dict[str, float]]  # core -> pipe -> busy cycles
    tensors: dict[str, dict[str, float]]  # tensor -> hits, misses, hit_rate, hbm_read, hbm_written, bursts
    peak: dict[str, dict[str, int]]  # space -> {bytes, capacity}
    notes: list[str] = field(default_factory=list)
    # Tasks run by task graphs: {"cube": n, "vector": n, "groups": {label: n}}.
    tasks: dict = field(default_factory=lambda: {"cube": 0, "vector": 0, "groups": {}})
    events: list = field(default_factory=list, repr=False)  # every op, when the run was traced
    task_runs: list[TaskRun] = field(default_factory=list, repr=False)
    peaks: Peaks = field(default_factory=lambda: Peaks({}, 0.0, 0.0), repr=False)
    # The kernel's configuration as its passes left it (`pto.driver.config`): set by
    # whoever lowered the kernel, empty for a kernel given at the npu level.
    config: dict[str, str] = field(default_factory=dict)

    @property
    def time_us(self) -> float:
        return self.cycles / self.clock_mhz

    @property
    def l2_hits(self) -> int:
        return int(sum(t["hits"] for t in self.tensors.values()))

    @property
    def l2_misses(self) -> int:
        return int(sum(t["misses"] for t in self.tensors.values()))

    @property
    def l2_hit_rate(self) -> float:
        n = self.l2_hits + self.l2_misses
        return self.l2_hits / n if n else 0.0

    @property
    def hbm_bytes(self) -> int:
        return int(sum(t["hbm_read"] + t["hbm_written"] for t in self.tensors.values()))

    def utilisation(self, core: str, pipe: str) -> float:
        return self.cores[core][pipe] / self.cycles if self.cycles else 0.0

    def pipe_rows(self) -> list[dict]:
        """Per core kind and pipe that was busy: busy cycles, mean and max utilisation."""
        rows = []
        for kind, prefix in KINDS.items():
            names = [c for c in self.cores if c.startswith(prefix)]
            for p in PIPES if names else ():
                busy = [self.cores[c][p.value] for c in names]
                if any(busy):
                    utils = [self.utilisation(c, p.value) for c in names]
                    rows.append(
                        {
                            "pipe": p.value,
                            "kind": kind,
                            "busy": sum(busy),
                            "mean": sum(utils) / len(utils),
                            "max": max(utils),
                        }
                    )
        return rows

    def stages(self) -> list[Stage]:
        out: dict[str, Stage] = {}
        for t in self.task_runs:
            label = stage_of(t.group)
            out.setdefault(label, Stage(label, kind_of(t.core), [])).add(t)
        return list(out.values())

    def stage_rows(self) -> list[dict]:
        """`stages` as plain data: what the JSON and the page show."""
        return [
            {
                "stage": s.label,
                "kind": s.kind,
                "groups": s.groups,
                "tasks": s.tasks,
                "core_cycles": s.core_cycles,
                "util": {p.value: s.util(p.value) for p in PIPES},
                "roofline": s.roofline(self.peaks),
                "bound": s.bound(self.peaks),
            }
            for s in self.stages()
        ]

    def to_json(self) -> dict:
        # (not `asdict`: it would copy every event and task run first)
        d = {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in BULKY}
        d.update(
            time_us=self.time_us,
            l2_hits=self.l2_hits,
            l2_misses=self.l2_misses,
            l2_hit_rate=self.l2_hit_rate,
            hbm_bytes=self.hbm_bytes,
            stages=self.stage_rows(),
        )
        return d

    def table(self) -> str:
        from pto.interp.table import render

        return render(self)

    def trace(self) -> dict:
        from pto.interp.trace import chrome_trace

        return chrome_trace(self)

    def write_trace(self, path: str) -> None:
        import json

        with open(path, "w") as f:
            json.dump(self.trace(), f)

    def html(self, title: str = "") -> str:
        """The report as one self-contained HTML page (`pto.interp.page`)."""
        from pto.interp.page import page

        return page(self, title)

    def save_html(self, path: str, title: str = "") -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html(title))

    def _repr_html_(self) -> str:
        """Jupyter shows the page in a frame of its own (its scripts and styles kept apart)."""
        from pto.interp.page import framed

        return framed(self.html())


def make_report(m: Machine) -> Report:
    cores: dict[str, dict[str, float]] = {}
    for c in m.cores:  # a physical core runs one program per launch
        acc = cores.setdefault(c.name, {p.value: 0.0 for p in PIPES})
        for p in PIPES:
            acc[p.value] += c.busy[p]
    tensors = {
        n: {
            "hits": s.hits,
            "misses": s.misses,
            "hit_rate": s.hit_rate,
            "hbm_read": s.hbm_read,
            "hbm_written": s.hbm_written,
            "bursts": s.bursts,
        }
        for n, s in m.l2.stats.items()
    }
    peak: dict[str, dict[str, int]] = {}
    for c in m.cores:
        for space, b in c.peak.items():
            cur = peak.setdefault(space.value, {"bytes": 0, "capacity": m.target.capacity(space.value)})
            cur["bytes"] = max(cur["bytes"], b)
    tasks = {"cube": m.tasks["cube"], "vector": m.tasks["vector"], "groups": dict(m.tasks["groups"])}
    cost = m.cost
    peaks = Peaks(dict(cost.macs), cost.repeat_bytes / cost.cycles_per_repeat["default"], float(cost.hbm_total))
    return Report(
        m.target.name,
        m.target.clock_mhz,
        m.now,
        m.launches,
        m.l2_size,
        cores,
        tensors,
        peak,
        tasks=tasks,
        events=m.events or [],
        task_runs=m.task_runs,
        peaks=peaks,
    )
