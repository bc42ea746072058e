"""Reducing a finding to a small reproducer (delta debugging) and writing it."""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from pathlib import Path

from pto.bench.fuzzing.cases import KNOWN, Case, Result
from pto.bench.fuzzing.engines import engines_payload
from pto.bench.fuzzing.pool import Pool
from pto.bench.fuzzing.run import materialize, subst
from pto.bench.fuzzing.semantic import semantic_payload


def with_primary(case: Case, text: str) -> Case:
    p = json.loads(json.dumps(case.payload, default=_bytes_default), object_hook=_bytes_hook)
    if "api" in p:
        p["api"] = text
    else:
        p["files"][p["primary"]] = {"text": text}
        p.pop("semantic", None)  # a reduced kernel has no independent model any more
    return Case(case.id, case.kind, case.label, p, case.timeout)


def _bytes_default(o):
    if isinstance(o, bytes):
        return {"__bytes__": o.hex()}
    raise TypeError(type(o))


def _bytes_hook(d):
    return bytes.fromhex(d["__bytes__"]) if set(d) == {"__bytes__"} else d


def primary_text(case: Case) -> str | None:
    p = case.payload
    if "api" in p:
        return p["api"]
    spec = p["files"].get(p.get("primary", ""), {})
    return spec.get("text")


class Budget(Exception):
    pass


def ddmin(units: list[str], still_fails) -> list[str]:
    """Zeller's delta debugging over lines: the smallest list (1-minimal if the budget
    allows) for which still_fails holds."""
    n = 2
    while len(units) >= 2:
        size = math.ceil(len(units) / n)
        chunks = [units[i : i + size] for i in range(0, len(units), size)]
        for i in range(len(chunks)):
            complement = [u for j, c in enumerate(chunks) if j != i for u in c]
            if complement and still_fails(complement):
                units, n = complement, max(n - 1, 2)
                break
        else:
            if n >= len(units):
                break
            n = min(len(units), 2 * n)
    return units


def reduce_case(pool: Pool, case: Case, res: Result, max_secs: float, max_tests: int) -> tuple[Case, int]:
    """A smaller case with the same signature: lines of the kernel (or API program), then
    for a semantic 'wrong', the hints and tokens one by one."""
    tests = [0]
    deadline = time.perf_counter() + max_secs
    seen: dict[str, bool] = {}

    def same(c: Case) -> bool:
        if tests[0] >= max_tests or time.perf_counter() > deadline:
            raise Budget()
        tests[0] += 1
        r = pool.run_one(c)
        return r.outcome == res.outcome and r.sig == res.sig

    best = case
    if "engines" in case.payload:  # a kernel as data: its hints and tokens, not its lines
        try:
            best = simplify_engines(case, same)
        except Budget:
            pass
        return best, tests[0]
    if "semantic" in case.payload and res.outcome == "wrong":
        try:
            best = simplify_semantic(case, same)
        except Budget:
            return best, tests[0]
    text = primary_text(best)
    if text is None or "semantic" in best.payload:
        return best, tests[0]

    def still_fails(lines: list[str]) -> bool:
        t = "".join(lines)
        if t not in seen:
            seen[t] = same(with_primary(best, t))
        return seen[t]

    lines = text.splitlines(keepends=True)
    try:
        lines = ddmin(lines, still_fails)
    except Budget:
        pass
    # ddmin keeps the last passing list; recover it from the cache when the budget hit.
    passing = [t for t, ok in seen.items() if ok]
    if passing:
        best = with_primary(best, min(passing, key=len))
    return best, tests[0]


def simplify_semantic(case: Case, same) -> Case:
    p = case.payload
    kern = json.loads(json.dumps(p["semantic"]))
    tokens, seed = p["tokens"], p["seed"]
    via = "pipeline-flag" if "--pass-pipeline" in p["argv"] else "default"
    for h in sorted(kern["hints"]):
        trial = json.loads(json.dumps(kern))
        del trial["hints"][h]
        if same(Case(case.id, case.kind, case.label, semantic_payload(trial, tokens, seed, via), case.timeout)):
            kern = trial
    for t in (1, 2, 3, 5, 9, 17):
        if t < tokens and same(
            Case(case.id, case.kind, case.label, semantic_payload(kern, t, seed, via), case.timeout)
        ):
            tokens = t
            break
    return Case(case.id, case.kind, case.label, semantic_payload(kern, tokens, seed, via), case.timeout)


def simplify_engines(case: Case, same) -> Case:
    """An engines finding with fewer hints and tokens. (The kernel's line-based reduction
    does not fit: a line dropped from a valid kernel makes an invalid one, which the
    lowering rejects before the engines run.)"""
    p = case.payload
    kern = json.loads(json.dumps(p["engines"]))
    tokens, seed = p["tokens"], p["seed"]

    def trial(k: dict, t: int) -> Case:
        return Case(case.id, case.kind, case.label, engines_payload(k, t, seed, p.get("l2_size")), case.timeout)

    for h in sorted(kern["hints"]):
        fewer = json.loads(json.dumps(kern))
        del fewer["hints"][h]
        if same(trial(fewer, tokens)):
            kern = fewer
    for t in (1, 2, 3, 5, 9, 17):
        if t < tokens and same(trial(kern, t)):
            tokens = t
            break
    return trial(kern, tokens)


def write_reproducer(out: Path, n: int, case: Case, res: Result, count: int, first: Result, tests: int) -> Path:
    d = out / "findings" / f"{n:03d}-{res.outcome}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    p = case.payload
    if "api" in p:
        (d / "repro.py").write_text(p["api"])
        cmd = f"python {d / 'repro.py'}"
    elif "engines" in p:
        materialize(p["files"], str(d))
        inputs = " ".join(f"{name}.npy" for name, *_ in p["engines"]["args"])
        l2 = f"--l2-size {p['l2_size']} " if p.get("l2_size") else ""
        cmd = f"cd {d} && python -m pto.bench.fuzzing.engines {l2}kernel.mlir {inputs}"
        (d / "repro.sh").write_text("#!/bin/sh\n" + cmd + "\n")
    else:
        materialize(p["files"], str(d))
        tool = "pto-run" if p["tool"] == "run" else "pto-opt"
        cmd = f"cd {d} && {tool} " + " ".join(_shq(a) for a in subst(p["argv"], "."))
        (d / "repro.sh").write_text("#!/bin/sh\n" + cmd + "\n")
    known = known_label(res.sig + " " + res.detail)
    (d / "README.txt").write_text(
        f"signature: {res.sig}\noutcome:   {res.outcome}\nframe:     {res.frame or '-'}\n"
        f"known:     {known or '-'}\nseen:      {count} cases (first: case {first.id}, {first.label})\n"
        f"reduced:   {tests} test runs\nrun:       {cmd}\n\nwhat the reduced case printed:\n{res.detail}\n"
    )
    return d


def _shq(a: str) -> str:
    return a if re.fullmatch(r"[\w./=,:{}+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def known_label(text: str) -> str:
    return next((label for pat, label in KNOWN if re.search(pat, text)), "")
