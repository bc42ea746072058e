"""Token scaling: the SK-03 standard kernel (examples/sk03_standard.mlir, K=4096,
N=1024, its unroll list) run at the npu level for growing token counts, each in a fresh
process so its peak RSS is its own.

    python bench/token_scaling.py [--tokens 1000,10000,100000] [--engine E] [--no-numerics]

Prints per token count: the run's wall time (lowering excluded), its time per token,
the process's peak RSS, the kernel's inputs and outputs, the peak RSS per token above the
process's size before the inputs existed, and the marginal RSS per token against the
previous row (what each further token costs, free of the fixed part). Goal (issues 10 and 14): time and memory
grow linearly with t, i.e. the per-token columns stay flat (within 1.5x) across the table.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="1000,10000,100000")
    ap.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE)
    ap.add_argument("--no-numerics", dest="numerics", action="store_false", help="time only")
    a = ap.parse_args()
    print(f"engine {a.engine}{'' if a.numerics else ', timing only'}")
    kernel = str(Path(__file__).resolve().parent.parent / "examples" / "sk03_standard.mlir")
    print(f"{'tokens':>8} {'run s':>8} {'us/token':>9} {'peak RSS MB':>12} {'in+out MB':>10} {'RSS KB/token':>13} "
          f"{'marginal KB/token':>18}")
    prev = None
    for t in (int(x) for x in a.tokens.split(",")):
        m = measure(t, kernel, a.engine, a.numerics)
        per_kb = (m["peak_kb"] - m["base_kb"]) / t
        marginal = f"{(m['peak_kb'] - prev[1]) / (t - prev[0]):>18.1f}" if prev and t > prev[0] else f"{'':>18}"
        print(f"{t:>8} {m['secs']:>8.1f} {1e6 * m['secs'] / t:>9.0f} {m['peak_kb'] / 1024:>12.0f} "
              f"{m['io_bytes'] / 2**20:>10.0f} {per_kb:>13.1f} {marginal}")
        prev = (t, m["peak_kb"])


if __name__ == "__main__":
    main()
