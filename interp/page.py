"""The report as one self-contained HTML page (`Report.html`): the report's data as
JSON in the page, drawn by the page's own script (`page.js`, `page.css`, inlined), so
that it opens from disk with no network. Its sections: the configuration and totals,
a timeline of every core (a bar per task, coloured by stage; a core's pipes on a
click), pipe utilisation per core kind and per stage, each stage's roofline, L2 per
tensor and buffer peaks.

A run of more than `MAX_BARS` tasks is drawn per core in `MAX_BARS / cores` time slots,
each a bar of the tasks it holds (coloured by the group that ran longest in it), so the
page's size is bounded whatever the token count."""

from __future__ import annotations

import html
import json
from importlib.resources import files
from string import Template

from pto.interp.machine import PIPES, TaskRun
from pto.interp.report import Report, kind_of, stage_of

MAX_BARS = 4000
PIPE_NAMES = [p.value for p in PIPES]

TEMPLATE = Template("""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head><body>
<h1>$title</h1>
<div id="app"></div>
<div id="tip" hidden></div>
<script type="application/json" id="report-data">$data</script>
<script>$js</script>
</body></html>
""")


def page(r: Report, title: str = "") -> str:
    title = title or f"pto-run on {r.target}"
    return TEMPLATE.substitute(
        title=html.escape(title),
        css=_asset("page.css"),
        js=_asset("page.js"),
        data=json.dumps(page_data(r), separators=(",", ":")).replace("</", "<\\/"),
    )


def framed(text: str, height: int = 900) -> str:
    """A page inside an iframe of its own (a notebook's output shares its document)."""
    return f'<iframe srcdoc="{html.escape(text, quote=True)}" style="width:100%;height:{height}px;border:0"></iframe>'


def _asset(name: str) -> str:
    return files("pto.interp").joinpath(name).read_text(encoding="utf-8")


def page_data(r: Report) -> dict:
    """Everything the page's script draws, in plain JSON."""
    groups = list(dict.fromkeys(t.group for t in r.task_runs))
    return {
        "totals": _totals(r),
        "config": r.config,
        "notes": r.notes,
        "cores": [{"name": c, "kind": kind_of(c)} for c in r.cores],
        "pipes": PIPE_NAMES,
        "groups": [{"name": g, "stage": stage_of(g)} for g in groups],
        "stages": r.stage_rows(),
        "pipe_rows": r.pipe_rows(),
        "timeline": _timeline(r, groups),
        "tensors": [{"name": n, **t} for n, t in r.tensors.items() if t["hits"] + t["misses"] or t["hbm_written"]],
        "buffers": [{"space": s, **p} for s, p in r.peak.items()],
    }


def _totals(r: Report) -> dict:
    return {
        "target": r.target,
        "clock MHz": r.clock_mhz,
        "cycles": round(r.cycles),
        "time us": round(r.time_us, 2),
        "launches": r.launches,
        "tasks": f"{r.tasks['cube']} cube, {r.tasks['vector']} vector",
        "L2 bytes": r.l2_size,
        "L2 hits": r.l2_hits,
        "L2 misses": r.l2_misses,
        "L2 hit rate": f"{r.l2_hit_rate:.1%}",
        "HBM bytes": r.hbm_bytes,
    }


def _timeline(r: Report, groups: list[str]) -> dict:
    """Bars as rows [core, group, body, task, start, end, hbm bytes, macs, busy per pipe]
    (indices into the core and group lists); aggregated, body is the task count and
    task is -1."""
    cores = {c: i for i, c in enumerate(r.cores)}
    gi = {g: i for i, g in enumerate(groups)}
    if len(r.task_runs) <= MAX_BARS:
        bars = [_bar(cores[t.core], gi[t.group], t.body, t.index, t) for t in r.task_runs]
        return {"cycles": r.cycles, "aggregated": False, "bars": bars}
    return {"cycles": r.cycles, "aggregated": True, "bars": _slots(r, cores, gi)}


def _bar(core: int, group: int, body: int, index: int, t: TaskRun) -> list:
    busy = [round(t.busy[p], 1) for p in PIPE_NAMES]
    return [core, group, body, index, round(t.start, 1), round(t.end, 1), t.hbm_bytes, t.macs, busy]


def _slots(r: Report, cores: dict[str, int], gi: dict[str, int]) -> list[list]:
    """Each core's run cut into equal time slots; a task goes to the slot of its middle."""
    per_core = max(1, MAX_BARS // max(1, len(cores)))
    width = max(r.cycles, 1.0) / per_core
    slots: dict[tuple[int, int], list[TaskRun]] = {}
    for t in r.task_runs:
        slot = min(per_core - 1, int((t.start + t.end) / 2 / width))
        slots.setdefault((cores[t.core], slot), []).append(t)
    bars = []
    for (core, _), ts in sorted(slots.items()):
        time: dict[str, float] = {}
        for t in ts:
            time[t.group] = time.get(t.group, 0.0) + t.end - t.start
        whole = TaskRun(
            ts[0].core,
            max(time, key=lambda g: time[g]),
            len(ts),
            -1,
            min(t.start for t in ts),
            max(t.end for t in ts),
            {p: sum(t.busy[p] for t in ts) for p in PIPE_NAMES},
            sum(t.macs for t in ts),
            sum(t.hbm_bytes for t in ts),
        )
        bars.append(_bar(core, gi[whole.group], len(ts), -1, whole))
    return bars
