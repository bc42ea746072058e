"""How well the machine model ranks SK-03 configurations against PyPTO 0.2.0's simulator.

    python bench/fidelity.py [--only SUBSTRING] [--results FILE] [--json OUT] [--target NAME]

`bench/fidelity/pypto_results.json` holds PyPTO's cycle counts for a set of SK-03
configurations (form, token count, K, N, unroll list, vector and cube tiles, split-K,
weight cache policy, pass options), measured once with `bench/fidelity/regen_pypto.py`
in a separate venv with PyPTO installed; this script needs no PyPTO. It builds the same
kernel at the `pto` level, lowers it with the SK-03 pipeline and runs it on the model,
then prints per configuration the two cycle counts and their ratio, and per group of
equal form/t/K/N the Spearman rank correlation, whether both pick the same best
configuration, what the model's pick costs under PyPTO over PyPTO's best, and the
median cycle ratio. Configurations that PyPTO could not run are skipped.

The kernels run on `ascend910b1-pypto020`, the calibration that prices the cube path as
PyPTO 0.2.0's simulator does (docs/model.md); `--target ascend910b1` runs them on the
device-anchored default instead.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from xdsl.context import Context

from pto.diagnostics import DiagnosticError
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.run import random_inputs, run, signature
from pto.targets import load_target

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "fidelity" / "pypto_results.json"
# What PyPTO 0.2.0's simulator is compared with: the calibration that reproduces it.
TARGET = "ascend910b1-pypto020"


def _tile(c: dict) -> str:
    t = c["cube_tile"]
    sk = ", split_k" if c["split_k"] else ""
    return f"#pto.cube_tile<m = {t['m']}, k = {t['k']}, n = {t['n']}{sk}>"


def _vec(v: list[int]) -> str:
    return f"array<i64: {', '.join(map(str, v))}>"


SETTINGS = ("cube_l1_reuse_setting", "vec_nbuffer_setting", "cube_nbuffer_setting")


def _attrs(c: dict, target: str) -> str:
    # A setting PyPTO ran without merges nothing ({-1: 1}); pto-ir's defaults would.
    given = {name: c["pass_options"].get(name, {"-1": 1}) for name in SETTINGS}
    opts = ", ".join(
        f"{name} = {{{', '.join(f'{chr(34)}{k}{chr(34)} = {v}' for k, v in m.items())}}}" for name, m in given.items()
    )
    unroll = f"pto.unroll = {_vec(c['unroll'])}"
    # PyPTO without stitch_function_max_num (0 in its configuration) runs the bodies one
    # after another (measured): one body per stitch.
    stitch = c["runtime_options"].get("stitch_function_max_num") or 1
    runtime = f"pto.runtime = {{stitch_function_max_num = {stitch}}}"
    return f'{{pto.target = "{target}", {unroll}, {runtime}{", pto.options = {" + opts + "}" if opts else ""}}}'


def _cache(c: dict) -> str:
    return " {pto.cache = #pto.cache<none_cacheable>}" if c["cache"] == "none_cacheable" else ""


def kernel(c: dict, target: str = TARGET) -> str:
    """The configuration as a `pto`-level kernel."""
    k, n, form = c["K"], c["N"], c["form"]
    vt, pvt, tile = _vec(c["vec_tile"]), _vec(c["post_vec_tile"]), _tile(c)
    if form == "std":
        return f"""func.func @std(%x: tensor<?x{k}xbf16>, %g: tensor<{k}xbf16>,
                   %w: tensor<{n}x{k}xbf16>{_cache(c)})
    -> tensor<?x{n}xbf16>
    attributes {_attrs(c, target)} {{
  %r = pto.rms_norm %x, %g eps = 1.0e-06 {{pto.label = "rmsnorm", pto.vec_tile = {vt}}}
      : tensor<?x{k}xbf16>, tensor<{k}xbf16> -> tensor<?x{k}xf32>
  %b = pto.cast %r rint {{pto.label = "cast", pto.vec_tile = {vt}}} : tensor<?x{k}xf32> -> tensor<?x{k}xbf16>
  %y = pto.matmul %b, %w b_trans {{pto.label = "linear", pto.cube_tile = {tile}}}
      : tensor<?x{k}xbf16>, tensor<{n}x{k}xbf16> -> tensor<?x{n}xf32>
  %o = pto.cast %y rint {{pto.label = "post", pto.vec_tile = {pvt}}} : tensor<?x{n}xf32> -> tensor<?x{n}xbf16>
  func.return %o : tensor<?x{n}xbf16>
}}"""
    if form == "quant":
        return f"""func.func @quant(%x: tensor<?x{k}xbf16>, %g: tensor<{k}xbf16>,
                   %w: tensor<{n}x{k}xi8>{_cache(c)}, %ws: tensor<{n}x1xf32>)
    -> tensor<?x{n}xbf16>
    attributes {_attrs(c, target)} {{
  %r = pto.rms_norm %x, %g eps = 1.0e-06 {{pto.label = "rmsnorm", pto.vec_tile = {vt}}}
      : tensor<?x{k}xbf16>, tensor<{k}xbf16> -> tensor<?x{k}xf32>
  %q, %s = pto.quant %r {{pto.label = "quant"}} : tensor<?x{k}xf32> -> tensor<?x{k}xi8>, tensor<?x1xf32>
  %a = pto.matmul %q, %w b_trans {{pto.label = "linear", pto.cube_tile = {tile}}}
      : tensor<?x{k}xi8>, tensor<{n}x{k}xi8> -> tensor<?x{n}xi32>
  %d = pto.dequant %a, %s, %ws {{pto.label = "dequant", pto.vec_tile = {pvt}}}
      : tensor<?x{n}xi32>, tensor<?x1xf32>, tensor<{n}x1xf32> -> tensor<?x{n}xf32>
  %o = pto.cast %d rint : tensor<?x{n}xf32> -> tensor<?x{n}xbf16>
  func.return %o : tensor<?x{n}xbf16>
}}"""
    return f"""func.func @mhc(%x: tensor<?x{k}xbf16>, %w: tensor<{n}x{k}xf32>{_cache(c)}) -> tensor<?x{n}xf32>
    attributes {_attrs(c, target)} {{
  %xf = pto.cast %x none {{pto.label = "pre", pto.vec_tile = {vt}}} : tensor<?x{k}xbf16> -> tensor<?x{k}xf32>
  %sq = pto.mul %xf, %xf {{pto.label = "norm"}} : tensor<?x{k}xf32>, tensor<?x{k}xf32> -> tensor<?x{k}xf32>
  %ms = pto.reduce mean %sq {{pto.vec_tile = {vt}}} : tensor<?x{k}xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %y = pto.matmul %xf, %w b_trans {{pto.label = "linear", pto.cube_tile = {tile}}}
      : tensor<?x{k}xf32>, tensor<{n}x{k}xf32> -> tensor<?x{n}xf32>
  %o = pto.div %y, %r {{pto.label = "out", pto.vec_tile = {pvt}}}
      : tensor<?x{n}xf32>, tensor<?x1xf32> -> tensor<?x{n}xf32>
  func.return %o : tensor<?x{n}xf32>
}}"""


def measure(c: dict, target: str = TARGET) -> float:
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, kernel(c, target), c["id"]).parse_module()
    inputs = random_inputs(signature(m), c["t"], 0)
    lower(ctx, m, "pto-sk03-pipeline{factors=" + ",".join(map(str, c["unroll"])) + "}")
    rep = run(m, inputs).report
    assert rep is not None
    return rep.cycles


def ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for q in range(i, j + 1):
            r[order[q]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="run the configurations whose id contains this")
    ap.add_argument("--results", default=str(RESULTS), help="PyPTO's results (JSON)")
    ap.add_argument("--json", help="also write the per-configuration figures here")
    ap.add_argument("--target", default=TARGET, help=f"the target the model runs (default {TARGET})")
    args = ap.parse_args(argv)
    try:  # an unknown name or a bad file: one line before any run
        load_target(args.target)
    except ValueError as e:
        ap.error(str(e))
    data = json.loads(Path(args.results).read_text())
    configs = [c for c in data["configs"] if c.get("cycles") and args.only in c["id"]]
    rows = []
    print(f"target {args.target}")
    print(f"{'configuration':44} {'PyPTO':>10} {'pto-ir':>10} {'ratio':>6} {'wall s':>6}")
    skipped = []
    for c in configs:
        t0 = time.perf_counter()
        try:
            ours = measure(c, args.target)
        except DiagnosticError as e:  # a configuration pto-ir rejects: said, not ranked
            skipped.append(c["id"])
            print(f"{c['id']:44} {c['cycles']:>10} {'-':>10} {'-':>6}   rejected: {e}", flush=True)
            continue
        wall = time.perf_counter() - t0
        rows.append({"id": c["id"], "group": c["group"], "pypto": c["cycles"], "pto_ir": ours})
        print(f"{c['id']:44} {c['cycles']:>10} {ours:>10.0f} {ours / c['cycles']:>6.2f} {wall:>6.1f}", flush=True)
    summarise(rows)
    if skipped:
        print(f"{len(skipped)} configuration(s) rejected by pto-ir: {', '.join(skipped)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def group_figures(rs: list[dict]) -> dict:
    """One group's agreement: the Spearman rank correlation, whether both pick the same
    best configuration, what the model's pick costs under PyPTO over PyPTO's best
    (issue 33's goal: at most 1.03) and the median pto-ir/PyPTO cycle ratio."""
    a, b = [r["pypto"] for r in rs], [r["pto_ir"] for r in rs]
    pick = min(rs, key=lambda r: r["pto_ir"])
    best = min(rs, key=lambda r: r["pypto"])
    return {
        "spearman": spearman(a, b) if len(rs) > 1 else float("nan"),
        "same_best": pick["id"] == best["id"],
        "pick_cost": pick["pypto"] / best["pypto"],
        "median_ratio": statistics.median(y / x for x, y in zip(a, b, strict=True)),
    }


def summarise(rows: list[dict]) -> None:
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    print(f"\n{'group':32} {'n':>3} {'spearman':>8} {'same best':>9} {'pick cost':>9} {'ratio':>6}")
    rhos, same, picks = [], 0, []
    for g, rs in groups.items():
        f = group_figures(rs)
        rhos += [f["spearman"]] if f["spearman"] == f["spearman"] else []
        same += f["same_best"]
        picks.append(f["pick_cost"])
        print(
            f"{g:32} {len(rs):>3} {f['spearman']:>8.2f} {'yes' if f['same_best'] else 'no':>9} "
            f"{f['pick_cost']:>9.3f} {f['median_ratio']:>6.2f}"
        )
    ratios = [r["pto_ir"] / r["pypto"] for r in rows]
    mean_rho = statistics.fmean(rhos) if rhos else float("nan")
    print(
        f"\nmean per-group Spearman {mean_rho:.2f}; same best configuration in {same} of "
        f"{len(groups)} groups; the model's pick costs at most {max(picks):.3f}x PyPTO's best "
        f"({sum(p <= 1.03 for p in picks)} of {len(groups)} groups within 1.03x); median "
        f"pto-ir/PyPTO cycle ratio {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
