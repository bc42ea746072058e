"""Token scaling: the SK-03 standard kernel (examples/sk03_standard.mlir, K=4096,
N=1024, its unroll list) run at the npu level for growing token counts, each in a fresh
process so its peak RSS is its own.

    python bench/token_scaling.py [--tokens 1000,10000,100000] [--engine E] [--modes full,timing]

Prints per token count the kernel's inputs and outputs and, side by side for the full
run and the timing-only one (`numerics=False`): the run's wall time (lowering
excluded), its time per token, the process's peak RSS and the peak RSS per token above
the process's size before the inputs existed, and the marginal RSS per token against the
previous row (what each further token costs, free of the fixed part: the cores' buffers,
the L2 tables); then how far time per token and marginal memory per token spread across
the rows, with the spread of the marginal time per token beside (free of the fixed part
of a run: compiling its programs). Goal (issues 10 and 14): time and memory grow linearly with t,
i.e. the per-token columns stay flat (within 1.5x) across the table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

from pto.interp.run import DEFAULT_ENGINE, ENGINES

CHILD = r"""
import json, resource, sys, time
sys.setrecursionlimit(10000)
from pathlib import Path

from pto.interp.run import DEFAULT_ENGINE, ENGINES
from pto.interp.run import random_inputs, run, signature
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from xdsl.context import Context

t = int(sys.argv[1])
path = Path(sys.argv[2])
engine, numerics = sys.argv[3], sys.argv[4] == "1"
ctx = Context(); load_dialects(ctx)
pto_m = LocatingParser(ctx, path.read_text(), str(path)).parse_module()
npu_m = pto_m.clone()
lower(ctx, npu_m, "pto-sk03-pipeline")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
inputs = random_inputs(signature(pto_m), t, 0)
start = time.perf_counter()
r = run(npu_m, inputs, engine=engine, numerics=numerics)
secs = time.perf_counter() - start
gm = sum(x.nbytes for x in inputs) + sum(o.nbytes for o in r.outputs)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"secs": secs, "peak_kb": peak, "base_kb": base, "io_bytes": gm,
                  "cycles": r.report.cycles}))
"""


def measure(t: int, kernel: str, engine: str, numerics: bool) -> dict:
    argv = [sys.executable, "-c", CHILD, str(t), kernel, engine, "1" if numerics else "0"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


MODES = {"full": True, "timing": False}  # column group -> numerics
FLAT = 1.5  # the goal: each per-token column within this factor across the rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="1000,10000,100000")
    ap.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE)
    ap.add_argument("--modes", default="full,timing", help="full (numerics), timing (numerics=False), or both")
    a = ap.parse_args()
    modes = a.modes.split(",")
    kernel = str(Path(__file__).resolve().parent.parent / "examples" / "sk03_standard.mlir")
    print(
        f"engine {a.engine}; per mode: run s, us/token, peak RSS MB, RSS KB/token above the process before "
        f"its inputs, marginal RSS KB/token against the previous row"
    )
    print(
        f"{'tokens':>8} {'in+out MB':>10}"
        + "".join(f" | {m + ' s':>9} {'us/token':>9} {'peak MB':>8} {'KB/token':>9} {'marginal':>9}" for m in modes)
    )
    per: dict[str, list[tuple[int, dict]]] = {m: [] for m in modes}
    for t in (int(x) for x in a.tokens.split(",")):
        cells, io = "", 0
        for mode in modes:
            r = measure(t, kernel, a.engine, MODES[mode])
            prev = per[mode][-1] if per[mode] else None
            per[mode].append((t, r))
            io = r["io_bytes"]
            marginal = f"{(r['peak_kb'] - prev[1]['peak_kb']) / (t - prev[0]):>9.1f}" if prev else f"{'':>9}"
            cells += (
                f" | {r['secs']:>9.1f} {1e6 * r['secs'] / t:>9.0f} {r['peak_kb'] / 1024:>8.0f} "
                f"{(r['peak_kb'] - r['base_kb']) / t:>9.1f} {marginal}"
            )
        print(f"{t:>8} {io / 2**20:>10.0f}{cells}", flush=True)
    for mode, rows in per.items():
        flatness(mode, rows)


def flatness(mode: str, rows: list[tuple[int, dict]]) -> None:
    """How far time per token and marginal memory per token spread across the rows."""
    us = [r["secs"] / t for t, r in rows]
    steps = list(itertools.pairwise(rows))
    kb = [(b["peak_kb"] - a["peak_kb"]) / (tb - ta) for (ta, a), (tb, b) in steps]
    # what each further token costs, free of the run's fixed part (compiling its
    # programs): shown beside the goal's figure, which counts that part at small t
    us_more = [(b["secs"] - a["secs"]) / (tb - ta) for (ta, a), (tb, b) in steps]

    def spread(xs):
        return max(xs) / min(xs) if xs and min(xs) > 0 else float("inf")

    ok = spread(us) <= FLAT and spread(kb) <= FLAT
    print(
        f"{mode}: time/token spread {spread(us):.2f}x (marginal time/token {spread(us_more):.2f}x), "
        f"marginal memory/token spread {spread(kb):.2f}x: "
        f"{'flat' if ok else 'NOT flat'} within {FLAT}x"
    )


if __name__ == "__main__":
    main()
