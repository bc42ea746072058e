"""pto-run's predictions against public hardware measurements of SK-03 math.

    python bench/hardware.py [--only SUBSTRING] [--json OUT]

`bench/hardware/measurements.toml` holds figures measured on Ascend devices by other
implementations of the same math (tilelang-ascend, ops-transformer, cann-recipes-infer),
each with its source, device, shape, dtypes and time. For each, this script runs the
kernel of `bench/hardware/` that the entry names, at the entry's token count, on the
target matching the device (`ascend910b1` for 910B, `ascend950` for 950), lowered with
the default SK-03 pipeline, timing only: with the kernel's pinned tiles and unroll where
it writes down how the measured implementation runs, else pto-ir's own choice, and the
entry's `l1_buffers` / `l0_buffers` (tile-to-npu's copies of the cube tiles, default 2). Cycles
become time at the target's clock (`clock_mhz` of its TOML). It prints per entry the
measured and predicted times and their ratio (predicted / measured), then how many are
within 2x.

This is a check of absolute scale, not a fit: nothing in the targets is tuned to these
figures, and the other implementations make their own choices (docs/model.md, "Against
hardware measurements").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from xdsl.context import Context

from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.run import run, signature, unread_inputs
from pto.lowering.pto_sk03_pipeline import PtoSk03PipelinePass
from pto.lowering.tile_to_npu import TileToNpuPass
from pto.targets import load_target

HERE = Path(__file__).resolve().parent / "hardware"
MEASUREMENTS = HERE / "measurements.toml"


@dataclass
class Row:
    id: str
    source: str
    device: str
    shape: str
    covers: str
    measured_us: float
    target: str
    cycles: float
    predicted_us: float

    @property
    def ratio(self) -> float:
        return self.predicted_us / self.measured_us


def load(path: Path = MEASUREMENTS) -> list[dict]:
    return list(tomllib.loads(path.read_text())["measurement"])


def predict(m: dict) -> tuple[float, float]:
    """pto-run's cycles for the entry's kernel at its token count, and the time they take
    at its target's clock (us)."""
    text = (HERE / m["kernel"]).read_text()
    # The kernel file names the target it was written for; an entry that says another
    # would be run on the wrong machine without a word, so refuse it.
    if f'pto.target = "{m["target"]}"' not in text:
        raise ValueError(f"{m['id']}: {m['kernel']} is not written for target {m['target']}")
    ctx = Context()
    load_dialects(ctx)
    module = LocatingParser(ctx, text, m["kernel"]).parse_module()
    inputs = unread_inputs(signature(module), m["tokens"])
    # An implementation that keeps one copy of its cube tiles (`l1_buffers` / `l0_buffers`
    # of the entry) is run so: the default double buffering would overlap what it waits for.
    passes = PtoSk03PipelinePass().passes()
    passes[-1] = TileToNpuPass(l1_buffers=m.get("l1_buffers", 2), l0_buffers=m.get("l0_buffers", 2))
    lower(ctx, module, passes)
    # Timing only: the outputs are not compared here (the examples' goldens cover the
    # numerics of these forms), and the large shapes would cost minutes of numpy.
    rep = run(module, inputs, numerics=False).report
    assert rep is not None
    return rep.cycles, rep.cycles / load_target(m["target"]).clock_mhz


def measure(m: dict) -> Row:
    cycles, us = predict(m)
    where = m["source"] + (f" ({m['repo']}:{m['path']}@{m['commit'][:8]})" if "repo" in m else "")
    return Row(m["id"], where, m["device"], m["shape"], m["covers"], m["measured_us"], m["target"], cycles, us)


def table(rows: list[Row]) -> str:
    lines = [f"{'measurement':38} {'device':12} {'shape':54} {'measured':>10} {'predicted':>10} {'ratio':>6}"]
    for r in rows:
        lines.append(
            f"{r.id:38} {r.device:12} {r.shape:54} {r.measured_us:>8.1f}us {r.predicted_us:>8.1f}us {r.ratio:>6.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="run the measurements whose id contains this")
    ap.add_argument("--measurements", default=str(MEASUREMENTS), help="the measurements (TOML)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    ms = [m for m in load(Path(args.measurements)) if args.only in m["id"]]
    rows = []
    for m in ms:
        t0 = time.perf_counter()
        rows.append(measure(m))
        print(f"  {m['id']}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(table(rows))
    print("\nsources:")
    for r in rows:
        print(f"  {r.id}: {r.source}; predicted on {r.target}, covers {r.covers}")
    outside = [r for r in rows if not 0.5 <= r.ratio <= 2]
    print(f"\nwithin 2x: {len(rows) - len(outside)} of {len(rows)}")
    for r in outside:
        print(f"  outside 2x: {r.id} (ratio {r.ratio:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
