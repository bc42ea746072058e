"""A tuning run as one self-contained HTML page (`TuneResult.html`, `pto-tune --html`):
the summary, every evaluated configuration in a table sortable by any column, the
cycles per evaluation with the best so far (an inline SVG), and the winner's own
report page (`pto.interp.page`) embedded, from a timing-only run at the largest token
count. Nothing is fetched: the page opens from disk."""

from __future__ import annotations

import html
import math
from string import Template

from pto.interp.page import framed
from pto.tuner.space import describe

PLOT_W, PLOT_H, PAD = 720, 260, 48

TEMPLATE = Template("""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>$title</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 15px; border-bottom: 1px solid #ddd; margin-top: 20px; }
table { border-collapse: collapse; } th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; cursor: pointer; } td.l { text-align: left; font-family: monospace; }
tr.best td { background: #eef5e8; } pre { background: #f8f8f8; padding: 8px; }
</style></head><body>
<h1>$title</h1>
<section id="summary"><pre>$summary</pre></section>
<section id="plot"><h2>Cycles per evaluation</h2>$plot</section>
<section id="configs"><h2>Evaluated configurations</h2><p>Click a column to sort by it.</p>$table</section>
<section id="winner"><h2>The winner's run at t=$winner_tokens</h2>$winner</section>
<script>
// Sort the configurations by the clicked column (numbers as numbers; again: reversed).
document.querySelectorAll("#configs th").forEach((th, col) => th.addEventListener("click", () => {
  const body = th.closest("table").tBodies[0], rows = [...body.rows];
  const down = th.dataset.dir !== "up"; th.dataset.dir = down ? "up" : "down";
  const val = r => { const t = r.cells[col].dataset.v ?? r.cells[col].textContent; return isNaN(+t) ? t : +t; };
  rows.sort((a, b) => (val(a) > val(b) ? 1 : val(a) < val(b) ? -1 : 0) * (down ? 1 : -1));
  rows.forEach(r => body.appendChild(r));
}));
</script>
</body></html>
""")


def tune_page(result) -> str:
    title = f"pto-tune @{result.info.name} on {result.info.target.name}"
    report, t = winner_report(result)
    return TEMPLATE.substitute(
        title=html.escape(title),
        summary=html.escape("\n".join(result.table().splitlines()[:3])),
        plot=_plot(result),
        table=_table(result),
        winner_tokens=t,
        winner=framed(report.html(f"winner at t={t}: {describe(result.best)}"), height=1400),
    )


def winner_report(result):
    """The winner's report at the largest token count: compiled again, timing only."""
    from pto.frontend.api import compile, run
    from pto.tuner.pin import pin

    t = max(result.tokens)
    compiled = compile(pin(result.module, result.best), target=result.info.target.name)
    return run(compiled, tokens=t, numerics=False).report, t


def _table(result) -> str:
    head = ["#", "cycles", *(f"t={t}" for t in result.tokens), "cube util", "HBM bytes", "L2 hit", "configuration"]
    best = result.sweep.results and describe(result.best)
    rows = []
    for i, k in enumerate(result.sweep.order, 1):
        c, recs = result.sweep.results[k]
        cost = result.sweep.cost(k)
        ok = [r for r in recs.values() if "error" not in r]
        cells = [_num(i), _num(cost, "failed")]
        cells += [_num(recs[t].get("cycles"), "failed") for t in result.tokens]
        if ok and cost is not None:
            cells += [_num(sum(r["cube_util"] for r in ok) / len(ok), fmt="{:.1%}")]
            cells += [
                _num(sum(r["hbm_bytes"] for r in ok)),
                _num(sum(r["l2_hit_rate"] for r in ok) / len(ok), fmt="{:.1%}"),
            ]
        else:
            error = next((r["error"] for r in recs.values() if "error" in r), "")
            cells += ['<td colspan="3" class="l">' + html.escape(error.splitlines()[0] if error else "") + "</td>"]
        cells.append(f'<td class="l">{html.escape(describe(c))}</td>')
        rows.append(f"<tr{' class=best' if describe(c) == best else ''}>{''.join(cells)}</tr>")
    heads = "".join(f"<th>{h}</th>" for h in head[:-1]) + f'<th style="text-align:left">{head[-1]}</th>'
    return f"<table><thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _num(v, missing: str = "-", fmt: str = "{:,.0f}") -> str:
    """A cell whose sort key is the number (a failed one sorts last)."""
    if v is None:
        return f'<td data-v="{math.inf}">{missing}</td>'
    return f'<td data-v="{v}">{fmt.format(v)}</td>'


def _plot(result) -> str:
    """Each configuration's cycles in the order measured (dots) and the best so far (a line)."""
    costs = [result.sweep.cost(k) for k in result.sweep.order]
    ok = [c for c in costs if c is not None]
    if not ok:
        return "<p>every configuration failed</p>"
    lo, hi, n = min(ok), max(ok), max(1, len(costs) - 1)

    def xy(i: int, c: float) -> str:
        x = PAD + i / n * (PLOT_W - PAD - 8)
        y = PLOT_H - 24 - (c - lo) / ((hi - lo) or 1) * (PLOT_H - 40)
        return f"{x:.1f},{y:.1f}"

    dots = "".join(
        f'<circle cx="{xy(i, c).split(",")[0]}" cy="{xy(i, c).split(",")[1]}" r="3" fill="#4e79a7"/>'
        for i, c in enumerate(costs)
        if c is not None
    )
    line = " ".join(xy(i, c) for i, c in enumerate(result.curve()) if c != math.inf)
    return (
        f'<svg width="{PLOT_W}" height="{PLOT_H}" style="border:1px solid #eee">{dots}'
        f'<polyline points="{line}" fill="none" stroke="#f28e2b" stroke-width="2"/>'
        f'<text x="4" y="14" font-size="11">{hi:,.0f} cycles</text>'
        f'<text x="4" y="{PLOT_H - 28}" font-size="11">{lo:,.0f}</text>'
        f'<text x="{PLOT_W - 215}" y="{PLOT_H - 6}" font-size="11">evaluation (dots), best so far (line)</text></svg>'
    )
