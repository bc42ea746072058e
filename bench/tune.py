"""pto-tune's goals: the guided search's pick against the exhaustive optimum of the same space.

    python bench/tune.py [--all | --row NAME:T ...] [--jobs N] [--store DIR]

Per example and token count: the exhaustive sweep of a space of over 100 configurations
(stored, so a second run or the guided search re-measures nothing), then the guided
search with a budget of a quarter of the space (the two baselines included). Goals: the
pick within 3% of the exhaustive optimum, at most 25% evaluated, never worse than the
kernel's own hints or SK03.md's settings. The default run is one example at t = 16 (a
few minutes); `--all` runs every example at t = 16, 128, 300 (about an hour on two
cores); `--row sk03_standard:128` one row (repeatable).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from pto.tuner.tune import tune

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOAL_GAP = 0.03
GOAL_SHARE = 0.25
# A space of a little over 100 configurations after pruning, for the cube-stage kernels.
DIMS = {
    "unroll": [[16, 1], [8, 1], [128, 64, 32, 16, 8, 1]],
    "m": [16, 32],
    "n": [64, 128, 256],
    "k": [[128, 512], [256, 256], [256, 1024]],
    "vec_rows": [1, 2, 4, 8],
    "l1_reuse": [2],
    "vec_nbuffer": [2],
    "cube_nbuffer": [1],
    "split_k": [False],
}
MHC_DIMS = {
    "unroll": [[16, 1], [256, 64, 16, 4, 1], [64, 16, 1], [32, 1]],
    "l1_reuse": [1, 2, 4],
    "vec_nbuffer": [1, 2, 4],
    "cube_nbuffer": [1, 2, 4],
    "stitch": [1, 128],
}
DEFAULT = [("sk03_standard", 16)]
ALL = [
    (e, t)
    for e in ("sk03_standard", "mla_wqa_qrmsnorm", "mla_wkv_rmsnorm", "indexer_query_linear_int8", "hc_pre")
    for t in (16, 128, 300)
]


def dims_for(name: str) -> dict:
    return MHC_DIMS if name == "hc_pre" else DIMS


def row(name: str, t: int, jobs: int, store: str) -> str:
    text = (EXAMPLES / f"{name}.mlir").read_text()
    out = os.path.join(store, f"{name}.{t}.jsonl")
    full = tune(text, [t], jobs=jobs, dims=dims_for(name), exhaustive=True, out=out, resume=True, progress=True)
    n = len(full.plan.candidates)
    budget = max(1, int(GOAL_SHARE * n) - 2)  # the two baselines count
    g = tune(text, [t], jobs=jobs, dims=dims_for(name), budget=budget, out=out, resume=True)
    opt, pick = full.cycles(full.best), g.cycles(g.best)
    bases = [c for c in g.baseline_cycles().values() if c is not None]
    gap, share = pick / opt - 1, g.evaluated / n
    ok = gap <= GOAL_GAP and (share <= GOAL_SHARE or n <= 100) and all(pick <= b for b in bases)
    return (
        f"{name:28} {t:>5} {n:>6} {g.evaluated:>5} {share:>6.1%} {opt:>12,.0f} {pick:>12,.0f} {gap:>6.2%} "
        f"{min(bases) / pick:>7.2f}x {'met' if ok else 'MISSED'}"
    )


def _row(text: str) -> tuple[str, int]:
    name, _, t = text.partition(":")
    if not (EXAMPLES / f"{name}.mlir").exists() or not t.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME:T with NAME an example")
    return name, int(t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every example at t = 16, 128, 300")
    ap.add_argument("--row", action="append", type=_row, default=[], metavar="NAME:T", help="one example at one t")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--store", help="keep the stores here (default: a temporary folder)")
    a = ap.parse_args()
    store = a.store or tempfile.mkdtemp(prefix="pto-tune-bench-")
    os.makedirs(store, exist_ok=True)
    print(
        f"{'example':28} {'t':>5} {'space':>6} {'evals':>5} {'share':>6} {'optimum':>12} {'pick':>12} "
        f"{'gap':>6} {'vs base':>8} goals",
        flush=True,
    )
    for name, t in ALL if a.all else a.row or DEFAULT:  # each row as it is done: --all takes long
        print(row(name, t, a.jobs, store), flush=True)


if __name__ == "__main__":
    main()
