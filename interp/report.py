"""What a run of the machine model reports: makespan, per-pipe busy cycles and
utilisation per core, L2 and HBM counters per tensor, peak buffer occupancy; as a
table, as JSON, and as a Chrome trace (Perfetto) of every op on every core and pipe."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from pto.interp.machine import PIPES, TASK_TRACK, Machine


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
    events: list = field(default_factory=list, repr=False)

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
    def hbm_bytes(self) -> int:
        return int(sum(t["hbm_read"] + t["hbm_written"] for t in self.tensors.values()))

    def utilisation(self, core: str, pipe: str) -> float:
        return self.cores[core][pipe] / self.cycles if self.cycles else 0.0

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("events")
        n = self.l2_hits + self.l2_misses
        d.update(
            time_us=self.time_us,
            l2_hits=self.l2_hits,
            l2_misses=self.l2_misses,
            l2_hit_rate=self.l2_hits / n if n else 0.0,
            hbm_bytes=self.hbm_bytes,
        )
        return d

    def table(self) -> str:
        n = self.l2_hits + self.l2_misses
        out = [
            f"target {self.target} at {self.clock_mhz} MHz, {self.launches} launch(es), L2 {self.l2_size} bytes",
            f"total: {self.cycles:.0f} cycles = {self.time_us:.2f} us",
            f"L2: {self.l2_hits} hits, {self.l2_misses} misses, hit rate {self.l2_hits / n if n else 0:.1%}; "
            f"HBM {self.hbm_bytes} bytes",
            "",
            f"{'pipe':<8} {'cores':<7} {'busy cycles':>14} {'mean util':>10} {'max util':>9}",
        ]
        for kind, prefix in (("cube", "aic"), ("vector", "aiv")):
            names = [c for c in self.cores if c.startswith(prefix)]
            if not names:
                continue
            for p in PIPES:
                busy = [self.cores[c][p.value] for c in names]
                if not any(busy):
                    continue
                utils = [self.utilisation(c, p.value) for c in names]
                out.append(
                    f"{p.value:<8} {kind:<7} {sum(busy):>14.0f} {sum(utils) / len(utils):>10.1%} {max(utils):>9.1%}"
                )
        if self.tasks["cube"] or self.tasks["vector"]:
            groups = ", ".join(f"{g} {n}" for g, n in self.tasks["groups"].items())
            out += ["", f"tasks: {self.tasks['cube']} cube, {self.tasks['vector']} vector ({groups})"]
        out += [
            "",
            f"{'tensor':<16} {'hits':>9} {'misses':>9} {'hit rate':>9} {'HBM read':>12} {'HBM written':>12}"
            f" {'bursts':>9}",
        ]
        for name, t in self.tensors.items():
            if t["hits"] + t["misses"] or t["hbm_written"]:
                out.append(
                    f"{name:<16} {t['hits']:>9.0f} {t['misses']:>9.0f} {t['hit_rate']:>9.1%} "
                    f"{t['hbm_read']:>12.0f} {t['hbm_written']:>12.0f} {t.get('bursts', 0):>9.0f}"
                )
        out += ["", f"{'buffer':<8} {'peak bytes':>11} {'capacity':>10}"]
        for mem, peak in self.peak.items():
            out.append(f"{mem:<8} {peak['bytes']:>11} {peak['capacity']:>10}")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def trace(self) -> dict:
        """Chrome trace-event JSON: one process per core, one thread per pipe (and one for
        the graph tasks the core ran)."""
        pids = {c: i for i, c in enumerate(self.cores)}
        tids = {p: i for i, p in enumerate((*(p.value for p in PIPES), TASK_TRACK))}
        ev: list[dict] = []
        for c, pid in pids.items():
            ev.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": c}})
            for p, tid in tids.items():
                ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": p}})
        us = 1.0 / self.clock_mhz
        for e in self.events:
            ev.append(
                {
                    "ph": "X",
                    "name": e.name,
                    "pid": pids[e.core],
                    "tid": tids[e.pipe],
                    "ts": e.start * us,
                    "dur": max(e.dur, 1e-3) * us,
                    "args": {"bytes": e.nbytes, "cycles": round(e.cycles, 2)},
                }
            )
        return {"traceEvents": ev, "displayTimeUnit": "ns"}

    def write_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.trace(), f)


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
    )
