"""The performance claims of SK03.md, reproduced under the machine model.

    python bench/claims.py [--tokens T] [--target NAME]

Each claim runs the same kernel two ways on the same target and prints the two numbers
compared; a claim that does not hold under the model is reported as not holding. The
kernels are the examples; a variant pins one decision with a hint (a cache policy, a
cube tile) or a pipeline option (the unroll factors), nothing else changes. `--target`
runs them on another target or calibration (`ascend910b1-pypto020`: the cube path as
PyPTO 0.2.0's simulator prices it); the examples name the default, `ascend910b1`.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context

from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.report import Report
from pto.interp.run import random_inputs, run, signature
from pto.targets import DEFAULT_TARGET, load_target

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
STD = (EXAMPLES / "sk03_standard.mlir").read_text()
HC = (EXAMPLES / "hc_pre.mlir").read_text()
TARGET = re.compile(r'pto\.target = "[^"]*"')
MIB = 1 << 20


def measure(text: str, tokens: int, factors: str | None = None, l2_size: int | None = None) -> Report:
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, text, "claim").parse_module()
    inputs = random_inputs(signature(m), tokens, 0)
    lower(ctx, m, "pto-sk03-pipeline" + (f"{{factors={factors}}}" if factors else ""))
    rep = run(m, inputs, l2_size=l2_size).report
    assert rep is not None
    return rep


def pin_cache(text: str, arg: str, policy: str) -> str:
    text = re.sub(
        rf"(%{arg}: tensor<[^>]*>)( \{{pto.cache = [^}}]*\}})?",
        rf"\1 {{pto.cache = #pto.cache<{policy}>}}",
        text,
        count=1,
    )
    return text


def pin_cube_tile(text: str, label: str, tile: str) -> str:
    return text.replace(f'{{pto.label = "{label}"}}', f'{{pto.label = "{label}", pto.cube_tile = {tile}}}')


def activation_misses(r: Report, weight: str) -> int:
    return int(sum(t["misses"] for n, t in r.tensors.items() if n != weight))


@dataclass
class Claim:
    key: str
    what: str
    a_name: str
    a: float
    b_name: str
    b: float
    unit: str
    held: bool

    def row(self) -> str:
        return (
            f"({self.key}) {self.what:<52} {self.a_name:>22} {self.a:>12,.0f} {self.b_name:>22} "
            f"{self.b:>12,.0f} {self.unit:<10} {'held' if self.held else 'NOT held'}"
        )


def versus(key: str, what: str, names: tuple[str, str], a: float, b: float, unit: str, fewer: bool = True) -> Claim:
    """A claim that the first way gives the smaller number (`fewer`) or the larger."""
    return Claim(key, what, names[0], a, names[1], b, unit, a < b if fewer else a > b)


def claim_a(t: int) -> list[Claim]:
    """Under L2 pressure (a 4 MiB L2; the 8 MiB weight streams through it once per token
    tile), a NONE_CACHEABLE weight leaves L2 to the activations."""
    l2 = 4 * MIB
    nc = measure(pin_cache(STD, "w", "none_cacheable"), t, l2_size=l2)
    normal = measure(pin_cache(STD, "w", "normal"), t, l2_size=l2)
    ways = ("none_cacheable", "normal")
    what = "std weight NONE_CACHEABLE, L2 4 MiB: activation misses"
    return [
        versus("a", what, ways, activation_misses(nc, "w"), activation_misses(normal, "w"), "misses"),
        versus("a", "  ... and total cycles", ways, nc.cycles, normal.cycles, "cycles"),
    ]


def claim_b(t: int) -> list[Claim]:
    """hc_fn is reused by every token tile and fits in L2: NONE_CACHEABLE refetches it."""
    nc = measure(pin_cache(HC, "hc_fn", "none_cacheable"), t)
    normal = measure(pin_cache(HC, "hc_fn", "normal"), t)
    ways = ("none_cacheable", "normal")
    return [
        versus("b", "hc_pre hc_fn NONE_CACHEABLE: HBM bytes", ways, nc.hbm_bytes, normal.hbm_bytes, "bytes", False),
        versus("b", "  ... and total cycles", ways, nc.cycles, normal.cycles, "cycles", False),
    ]


def claim_c(t: int) -> list[Claim]:
    """The unroll variant's factors against a flat token loop (factor 1 only)."""
    unrolled = measure(HC, t, "256,64,16,4,1")
    flat = measure(HC, t, "1")
    what = "hc_pre unroll [256,64,16,4,1] vs flat loop: cycles"
    return [versus("c", what, ("unrolled", "flat"), unrolled.cycles, flat.cycles, "cycles")]


def claim_d(t: int) -> list[Claim]:
    """Split-K against no split-K, same tiles otherwise (64-row token tiles)."""
    tiles = "#pto.cube_tile<m = [16, 16], k = [512, 2048], n = [128, 128]{}>"
    split = measure(pin_cube_tile(HC, "hc-linear", tiles.format(", split_k")), t, "64")
    nosplit = measure(pin_cube_tile(HC, "hc-linear", tiles.format("")), t, "64")
    what = "hc_pre split-K vs none (k=[512,2048]): cycles"
    return [versus("d", what, ("split_k", "no split"), split.cycles, nosplit.cycles, "cycles")]


def claim_e(t: int) -> tuple[list[Claim], str]:
    """The variant's host pre-transposed hc_fn against b_trans with the same tiles; and,
    not judged, the direct effect: the L1 -> L0B transpose the host layout saves."""
    host = measure(HC, t, "64")
    btrans = measure(
        pin_cube_tile(HC, "hc-linear", "#pto.cube_tile<m = [16, 16], k = [512, 1024], n = [128, 128], split_k>"),
        t,
        "64",
    )
    what = "hc_pre host pre-transposed hc_fn vs b_trans: cycles"
    claim = versus("e", what, ("host transpose", "b_trans"), host.cycles, btrans.cycles, "cycles")
    mte1 = [sum(c["mte1"] for c in r.cores.values()) for r in (host, btrans)]
    return [claim], f"    (e) cube MTE1 busy cycles, all cores: host transpose {mte1[0]:,.0f}, b_trans {mte1[1]:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--target", default=DEFAULT_TARGET, help=f"the target (default {DEFAULT_TARGET})")
    args = ap.parse_args()
    t = args.tokens
    global STD, HC
    try:  # an unknown name or a bad file: one line before any run
        load_target(args.target)
    except ValueError as e:
        ap.error(str(e))
    STD, HC = (TARGET.sub(f'pto.target = "{args.target}"', x) for x in (STD, HC))
    claims = claim_a(t) + claim_b(t) + claim_c(t) + claim_d(t)
    last, mte1_note = claim_e(t)
    claims += last
    print(f"SK03.md claims under the model (target {args.target}, t={t})")
    for c in claims:
        print(c.row())
    print(mte1_note)
    held = sum(all(c.held for c in claims if c.key == k) for k in "abcde")
    print(f"claims held: {held}/5")


if __name__ == "__main__":
    main()
