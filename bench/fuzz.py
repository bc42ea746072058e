"""Fuzz `pto-opt`, `pto-run` and the Python API with hostile but realistic inputs
(issue 10), classify every outcome, and write a minimal reproducer per distinct crash.

    python bench/fuzz.py --cases 10000 --seed 0 --kinds text,semantic,npy,flags,api \
        --jobs 2 --out /tmp/fuzz

Kinds of case (case i is of kind kinds[i % len(kinds)]):

- text:     1-3 mutations of a valid `.mlir` of the repo (examples/, examples/levels/,
            test/**, split on `// -----`, kept if `pto-opt` accepts it), then `pto-opt`
            (verify, or the level's pipeline) or `pto-run --random-inputs --golden`.
- semantic: a valid but unusual SK-03 kernel (K/N of 1, 3, 15, 17, 33, odd unroll lists,
            split-K, int8 forms, vec tiles, epilogues, ascend950...) run with
            `pto-run --input ... --golden` and checked against an independent numpy model.
- npy:      a small kernel with one bad `.npy` input (dtype, shape, corrupt header,
            truncated, huge declared shape, NaN...).
- flags:    bad command lines for `pto-run` and `pto-opt` (numbers out of range, outputs
            onto inputs, empty values, bad pipelines, missing files).
- api:      a Python API program with one or two hostile arguments.
- engines:  (only when --kinds names it: ten times a semantic case's time) a semantic
            kernel, lowered by pto-sk03-pipeline with its hints, run on 1..40 tokens five
            times (a third in a small L2, whose hits depend on the order of the cores'
            accesses), all traced: engine interp, compiled, compiled again on the same module
            (its cached programs), then interp and compiled timing-only (numerics=False).
            The engines must agree bit for bit (outputs as raw bytes) and figure for
            figure (report, write counts, trace events), and each timing-only report must
            be its full run's (`bench/fuzzing/engines.py`).

Outcomes: clean (a diagnosed error), accepted (exit 0), traceback (an exception escaping a
tool's `main`, or a raw non-pto exception raised inside the project by an API call),
internal (exit 3 or 'internal error'), hang (over --timeout seconds; the issue's bar is
10 s for an input under 10 KB), wrong (a golden mismatch, an input file modified, or an
accepted API module that does not parse back). For engines: accepted (all five runs
agree), clean (the lowering rejects the kernel, or every run raises the same error class
and message at the same op), wrong (two runs differ: the pair and the first figure that
differs are the signature), traceback (the runs disagree on raising, raise different
errors, or raise a non-pto exception), internal (the lowering crashed).

Cases run in-process in a pool of forked workers (the tools' `main(argv)`; stdout and
stderr captured): a SIGALRM at the timeout records where a hang is, and the parent kills
a worker that does not answer soon after. A case's content depends only on (--seed, its
index). Crashes are deduplicated by (outcome, exception type, innermost frame in the pto
package); each distinct one is reduced (line-based delta debugging of the mutated text,
keeping the signature; an engines case drops hints and tokens instead, since a valid
kernel missing a line no longer lowers) and written to --out/findings/, with
results.jsonl and summary.txt (an engines reproducer: `repro.sh`, which runs
`python -m pto.bench.fuzzing.engines kernel.mlir INPUTS.npy...`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# One BLAS thread per worker: --jobs is the parallelism (set before numpy is imported).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pto.frontend  # noqa: E402, F401  (loaded before the workers fork)
from pto.bench.fuzzing.cases import BAD, DEFAULT_KINDS, KINDS, PKG, Case, Result  # noqa: E402
from pto.bench.fuzzing.corpus import corpus_paths, load_corpus, tree_digest  # noqa: E402
from pto.bench.fuzzing.engines import judge  # noqa: E402
from pto.bench.fuzzing.generate import make_case  # noqa: E402
from pto.bench.fuzzing.pool import Pool  # noqa: E402
from pto.bench.fuzzing.reduce import known_label, primary_text, reduce_case, write_reproducer  # noqa: E402
from pto.bench.fuzzing.semantic import F32_MAX, eval_numpy  # noqa: E402
from pto.bench.fuzzing.summary import summary_table  # noqa: E402

# The harness as test_fuzz_smoke drives it.
__all__ = [
    "BAD",
    "DEFAULT_KINDS",
    "F32_MAX",
    "KINDS",
    "Case",
    "Pool",
    "eval_numpy",
    "fuzz",
    "judge",
    "load_corpus",
    "make_case",
    "parse_args",
]


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="bench/fuzz.py", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(DEFAULT_KINDS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a case is a hang")
    ap.add_argument("--mem-limit", type=int, default=6 << 30, help="address space per worker (0: none)")
    ap.add_argument("--reduce-secs", type=float, default=60.0, help="time to reduce each distinct finding")
    ap.add_argument("--reduce-tests", type=int, default=300)
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    a.kinds = [k.strip() for k in a.kinds.split(",") if k.strip()]
    bad = [k for k in a.kinds if k not in KINDS]
    if bad or not a.kinds:
        ap.error(f"unknown kind(s) {bad} (known: {', '.join(KINDS)})")
    return a


def fuzz(a: argparse.Namespace) -> dict:
    """Run a fuzz campaign; returns {'results', 'findings', 'summary', 'inputs_ok'}."""
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpus = load_corpus() if "text" in a.kinds else []  # seconds of pto-opt; only text cases mutate it
    corpus_files = corpus_paths()
    before = tree_digest(corpus_files)
    log = (lambda *x: None) if a.quiet else (lambda *x: print(*x, file=sys.stderr, flush=True))
    log(f"pto-fuzz: {len(corpus)} valid corpus chunks from {len(corpus_files)} files; pto at {PKG}")
    cases = [make_case(a.seed, i, a.kinds[i % len(a.kinds)], corpus, a.timeout) for i in range(a.cases)]
    by_id = {c.id: c for c in cases}
    tmp_root = tempfile.mkdtemp(prefix="ptofuzz-")
    pool = Pool(a.jobs, tmp_root, a.mem_limit)
    results: list[Result] = []
    try:
        with open(out / "results.jsonl", "w") as jl:
            for r in pool.run(cases):
                results.append(r)
                jl.write(json.dumps(r.__dict__) + "\n")
                if r.outcome in BAD:
                    log(f"  case {r.id} [{r.kind}] {r.outcome}: {r.sig}")
                if len(results) % 500 == 0:
                    log(f"  {len(results)}/{len(cases)} cases, {time.perf_counter() - t0:.0f} s")
        wall = time.perf_counter() - t0
        results.sort(key=lambda r: r.id)
        groups: dict[str, list[Result]] = {}
        for r in results:
            if r.outcome in BAD:
                groups.setdefault(r.sig, []).append(r)
        findings = []
        for n, (sig, rs) in enumerate(sorted(groups.items(), key=lambda kv: kv[1][0].id), 1):
            first = min(rs, key=lambda r: (len(primary_text(by_id[r.id]) or ""), r.id))
            case, tests, res = by_id[first.id], 0, first
            if not a.no_reduce:
                case, tests = reduce_case(pool, case, first, a.reduce_secs, a.reduce_tests)
                res = pool.run_one(case)
                if res.sig != sig:  # flaky (e.g. a hang near the limit): keep the original
                    case, res = by_id[first.id], first
            path = write_reproducer(out, n, case, res, len(rs), rs[0], tests)
            findings.append(
                {
                    "sig": sig,
                    "outcome": first.outcome,
                    "count": len(rs),
                    "frame": res.frame,
                    "known": known_label(sig + " " + first.detail),
                    "dir": str(path),
                    "text": primary_text(case),
                    "detail": res.detail,
                    "label": first.label,
                }
            )
            log(f"  finding {n}: {sig} ({len(rs)} cases) -> {path}")
    finally:
        pool.close()
        shutil.rmtree(tmp_root, ignore_errors=True)
    inputs_ok = tree_digest(corpus_files) == before
    table = summary_table(results, a.kinds, wall)
    text = (
        f"pto-fuzz: {a.cases} cases, seed {a.seed}, kinds {','.join(a.kinds)}, jobs {a.jobs}, "
        f"timeout {a.timeout} s: {wall:.0f} s\n\n{table}\n\nrepository corpus byte-identical afterwards: "
        f"{'yes' if inputs_ok else 'NO'}\n"
    )
    if findings:
        text += f"\n{len(findings)} distinct findings (reproducers in {out / 'findings'}):\n"
        text += (
            "\n".join(f"  {f['count']:5} x {f['sig']}" + (f"  [{f['known']}]" if f["known"] else "") for f in findings)
            + "\n"
        )
    (out / "summary.txt").write_text(text)
    (out / "findings.json").write_text(json.dumps(findings, indent=1))
    return {"results": results, "findings": findings, "summary": text, "inputs_ok": inputs_ok}


def main(argv=None) -> int:
    a = parse_args(argv)
    r = fuzz(a)
    print(r["summary"])
    return 1 if r["findings"] or not r["inputs_ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
