"""The report as a Chrome trace (`Report.trace`), which ui.perfetto.dev and
chrome://tracing open: a process per core, a thread per pipe it used and one for the
graph tasks it ran.

A traced run records every op (`Machine.events`) but not SCALAR's issue slots, which
are counted, not booked one by one: the scalar track shows each task's slots as one
slice from its start (the same busy cycles as the report's)."""

from __future__ import annotations

from pto.interp.machine import PIPES, TASK_TRACK, TaskRun
from pto.interp.report import Report

SCALAR = "scalar"


def chrome_trace(r: Report) -> dict:
    us = 1.0 / r.clock_mhz
    tracks = _tracks(r)
    pids = {c: i for i, c in enumerate(r.cores)}
    ev: list[dict] = []
    for c, names in tracks.items():
        ev.append({"ph": "M", "name": "process_name", "pid": pids[c], "args": {"name": c}})
        for name, tid in names.items():
            ev.append({"ph": "M", "name": "thread_name", "pid": pids[c], "tid": tid, "args": {"name": name}})

    def slice_(core: str, track: str, name: str, start: float, dur: float, args: dict) -> dict:
        tid = tracks[core][track]
        return {
            "ph": "X",
            "name": name,
            "pid": pids[core],
            "tid": tid,
            "ts": start * us,
            "dur": max(dur, 1e-3) * us,
            "args": args,
        }

    for e in r.events:
        ev.append(slice_(e.core, e.pipe, e.name, e.start, e.dur, {"bytes": e.nbytes, "cycles": round(e.cycles, 2)}))
    for t in r.task_runs:
        ev.append(slice_(t.core, TASK_TRACK, t.name, t.start, t.end - t.start, _task_args(t)))
        if t.busy[SCALAR]:
            slots = {"cycles": t.busy[SCALAR], "bytes": 0, "task": t.name}
            ev.append(slice_(t.core, SCALAR, "scalar issue", t.start, t.busy[SCALAR], slots))
    for c in _untasked(r):  # a launch's core: its slots over the whole launch
        ev.append(
            slice_(
                c, SCALAR, "scalar issue (launch)", 0.0, r.cores[c][SCALAR], {"cycles": r.cores[c][SCALAR], "bytes": 0}
            )
        )
    return {"traceEvents": ev, "displayTimeUnit": "ns"}


def _tracks(r: Report) -> dict[str, dict[str, int]]:
    """Per core, the tracks it has something on: the pipes it kept busy, its tasks."""
    tasked = {t.core for t in r.task_runs}
    out: dict[str, dict[str, int]] = {}
    for c, busy in r.cores.items():
        names = [p.value for p in PIPES if busy[p.value]] + ([TASK_TRACK] if c in tasked else [])
        out[c] = {n: i for i, n in enumerate(names)}
    return out


def _untasked(r: Report) -> list[str]:
    tasked = {t.core for t in r.task_runs}
    return [c for c, busy in r.cores.items() if c not in tasked and busy[SCALAR]]


def _task_args(t: TaskRun) -> dict:
    return {
        "group": t.group,
        "body": t.body,
        "task": t.index,
        "cycles": round(t.end - t.start, 2),
        "bytes": t.hbm_bytes,  # through HBM (an op's slice: the bytes it moved)
        "macs": t.macs,
        **{f"{p} busy": round(c, 2) for p, c in t.busy.items() if c},
    }
