"""The report as text (`Report.table`): totals, pipe utilisation per core kind, tasks,
stages (utilisation of their busiest pipes and what bounds them), L2 per tensor and
buffer peaks."""

from __future__ import annotations

from pto.interp.report import Report

STAGE_PIPES = 3  # the busiest pipes a stage's line names


def render(r: Report) -> str:
    out = [
        f"target {r.target} at {r.clock_mhz} MHz, {r.launches} launch(es), L2 {r.l2_size} bytes",
        f"total: {r.cycles:.0f} cycles = {r.time_us:.2f} us",
        f"L2: {r.l2_hits} hits, {r.l2_misses} misses, hit rate {r.l2_hit_rate:.1%}; HBM {r.hbm_bytes} bytes",
        "",
        f"{'pipe':<8} {'cores':<7} {'busy cycles':>14} {'mean util':>10} {'max util':>9}",
    ]
    for p in r.pipe_rows():
        out.append(f"{p['pipe']:<8} {p['kind']:<7} {p['busy']:>14.0f} {p['mean']:>10.1%} {p['max']:>9.1%}")
    if r.tasks["cube"] or r.tasks["vector"]:
        groups = ", ".join(f"{g} {n}" for g, n in r.tasks["groups"].items())
        out += ["", f"tasks: {r.tasks['cube']} cube, {r.tasks['vector']} vector ({groups})"]
    out += _stages(r)
    out += [
        "",
        f"{'tensor':<16} {'hits':>9} {'misses':>9} {'hit rate':>9} {'HBM read':>12} {'HBM written':>12} {'bursts':>9}",
    ]
    for name, t in r.tensors.items():
        if t["hits"] + t["misses"] or t["hbm_written"]:
            out.append(
                f"{name:<16} {t['hits']:>9.0f} {t['misses']:>9.0f} {t['hit_rate']:>9.1%} "
                f"{t['hbm_read']:>12.0f} {t['hbm_written']:>12.0f} {t.get('bursts', 0):>9.0f}"
            )
    out += ["", f"{'buffer':<8} {'peak bytes':>11} {'capacity':>10}"]
    for mem, peak in r.peak.items():
        out.append(f"{mem:<8} {peak['bytes']:>11} {peak['capacity']:>10}")
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out)


def _stages(r: Report) -> list[str]:
    """One line per stage: tasks, core cycles, its busiest pipes' utilisation, its bound."""
    rows = r.stage_rows()
    if not rows:
        return []
    out = ["", f"{'stage':<12} {'cores':<7} {'tasks':>6} {'core cycles':>12}  {'busiest pipes':<34} bound"]
    for s in rows:
        top = sorted(s["util"].items(), key=lambda kv: -kv[1])[:STAGE_PIPES]
        pipes = ", ".join(f"{p} {u:.0%}" for p, u in top if u)
        out.append(
            f"{s['stage']:<12} {s['kind']:<7} {s['tasks']:>6} {s['core_cycles']:>12.0f}  {pipes:<34} {s['bound']}"
        )
    return out
