"""The tuning report as text."""

from __future__ import annotations

from pto.tuner.baselines import baselines
from pto.tuner.space import Config, describe, key

HEADER = (
    f"{'':>10} {'cycles':>12} {'vs own':>7} {'vs SK03':>7} {'cube util':>9} {'HBM bytes':>12} {'L2 hit':>6}"
    "  configuration"
)


def _figures(result, c: Config) -> tuple[float, float, float]:
    """Mean cube utilisation, total HBM bytes, mean L2 hit rate over the token counts."""
    rs = list(result.sweep.results[key(c)][1].values())
    return (
        sum(r["cube_util"] for r in rs) / len(rs),
        sum(r["hbm_bytes"] for r in rs),
        sum(r["l2_hit_rate"] for r in rs) / len(rs),
    )


def _speedup(base: float | None, cycles: float) -> str:
    return f"{base / cycles:.2f}x" if base else "-"


def _row(result, name: str, c: Config, bases: dict) -> str:
    cycles = result.cycles(c)
    if cycles is None:
        return f"{name:>10} {'failed':>12}  {describe(c)}"
    util, hbm, hit = _figures(result, c)
    return (
        f"{name:>10} {cycles:>12,.0f} {_speedup(bases['own hints'], cycles):>7} "
        f"{_speedup(bases['SK03.md'], cycles):>7} {util:>9.1%} {hbm:>12,} {hit:>6.1%}  {describe(c)}"
    )


def _summary(result) -> list[str]:
    p, info = result.plan, result.info
    pruned = ", ".join(f"{r} {n}" for r, n in p.reasons.items()) or "none"
    how = "exhaustive" if p.exhaustive else f"guided (budget {p.budget})"
    share = result.evaluated / len(p.candidates)
    return [
        f"pto-tune: @{info.name} ({info.form}) on {info.target.name}, tokens "
        f"{','.join(map(str, result.tokens))}; objective: cycles summed over them",
        f"space: {p.space.size} configurations, {len(p.candidates)} after pruning (pruned: {pruned})",
        f"search: {how}, {result.evaluated} evaluated ({share:.1%} of the pruned space, with the 2 baselines), "
        f"{len(result.failed)} failed",
    ]


def render(result) -> str:
    bases = result.baseline_cycles()
    out = _summary(result) + ["", HEADER]
    for i, k in enumerate(result.sweep.results and _best(result)):
        out.append(_row(result, f"#{i + 1}", result.sweep.results[k][0], bases))
    for name, c in baselines(result.info).items():
        out.append(_row(result, name, c, bases))
    out += ["", "per token count:"]
    for t in result.tokens:
        c, cycles = result.best_at(t)
        out.append(f"  t={t:<6} {cycles:>12,.0f} cycles  {describe(c)}")
    if result.failed:
        c, err = result.failed[0]
        out += ["", f"first failure ({describe(c)}): {err.splitlines()[0]}"]
    return "\n".join(out)


def _best(result) -> list[str]:
    from pto.tuner.search import best_keys

    return best_keys(result.sweep, 5)
