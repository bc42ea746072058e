"""The campaign's summary table."""

from __future__ import annotations

from collections import Counter

from pto.bench.fuzzing.cases import BAD, OUTCOMES, Result


def summary_table(results: list[Result], kinds: list[str], wall: float) -> str:
    head = f"{'kind':10}{'cases':>7}" + "".join(f"{o:>10}" for o in OUTCOMES) + f"{'distinct':>9}{'cases/s':>9}"
    rows = [head, "-" * len(head)]
    total: Counter[str] = Counter()
    for kind in [*kinds, "all"]:
        rs = [r for r in results if kind in ("all", r.kind)]
        c = Counter(r.outcome for r in rs)
        distinct = len({r.sig for r in rs if r.outcome in BAD})
        secs = sum(r.secs for r in rs)
        rate = len(rs) / secs if secs else 0.0
        if kind == "all":
            rows.append("-" * len(head))
            rate = len(rs) / wall if wall else 0.0
        rows.append(f"{kind:10}{len(rs):>7}" + "".join(f"{c[o]:>10}" for o in OUTCOMES) + f"{distinct:>9}{rate:>9.1f}")
        total += c
    notes = Counter(n for r in results for n in r.notes)
    if notes:
        rows.append("")
        rows += [f"note: {n}: {k} cases" for n, k in notes.most_common()]
    return "\n".join(rows)
