"""Engines cases: a semantic kernel lowered to the npu level and run on both engines
(`interp`, the reference, and `compiled`), which must agree bit for bit and figure for
figure (docs/model.md, "Two engines").

One case makes five runs of the same lowered module, all traced: interp full, compiled
full, compiled full again (its programs are kept on their regions, so this one reuses
them), interp timing-only and compiled timing-only. A run-time error is fine if every
run raises it alike (class, message, the same op object); anything else is a finding.

    python -m pto.bench.fuzzing.engines [--l2-size N] kernel.mlir x.npy w.npy ...   (a reproducer)
"""

from __future__ import annotations

import math
import random
import re
import sys
from pathlib import Path

import numpy as np

from pto.bench.fuzzing.cases import Result
from pto.bench.fuzzing.semantic import apply_hints, emit_mlir, gen_semantic_kernel, make_inputs

# (engine, numerics) per run, and its name in a finding.
RUNS = (("interp", True), ("compiled", True), ("compiled", True), ("interp", False), ("compiled", False))
NAMES = ("interp", "compiled", "compiled again", "interp timing-only", "compiled timing-only")
# The pairs compared, and whether their outputs must agree: a timing-only run computes
# nothing, so only its figures are the full run's.
PAIRS = ((0, 1, True), (1, 2, True), (3, 4, True), (0, 3, False), (1, 4, False))
MAX_TOKENS = 40
# L2 sizes (multiples of 16 ways of 512-byte lines, both targets'): in a small L2 the
# hits depend on the order of the cores' accesses, so the counters see the interleaving.
SMALL_L2 = (8192, 16384, 65536, 1 << 20)


def gen_engines(rng: random.Random, corpus) -> tuple[str, dict]:
    """The semantic kind's kernels and hints; few tokens, as the reference engine is
    xDSL's interpreter and a case makes five runs."""
    form, kern = gen_semantic_kernel(rng)
    tokens = rng.randint(1, MAX_TOKENS)
    big = form == "mhc" or kern["args"][0][1][-1] >= 1024
    if big:
        tokens = min(tokens, 9)  # K up to 16384: seconds per run in the interpreter
    h = kern["hints"]
    label = f"{form} K={kern['args'][0][1][-1]} t={tokens} " + " ".join(f"{k}={v}" for k, v in sorted(h.items()))
    seed = rng.randrange(1 << 16)
    l2_size = rng.choice(SMALL_L2) if rng.random() < 0.3 else None
    if l2_size:
        label += f" l2={l2_size}"
    return label, engines_payload(kern, tokens, seed, l2_size)


def engines_payload(kern: dict, tokens: int, seed: int, l2_size: int | None = None) -> dict:
    """The kernel's text and inputs as files (for the reproducer), and the kernel as data
    (for simplifying a finding)."""
    files: dict[str, dict[str, object]] = {"kernel.mlir": {"text": emit_mlir(apply_hints(kern))}}
    for i, (name, *_rest) in enumerate(kern["args"]):
        files[f"{name}.npy"] = {"array": {"kernel": kern, "tokens": tokens, "seed": seed, "index": i}}
    return {
        "engines": kern,
        "tokens": tokens,
        "seed": seed,
        "l2_size": l2_size,
        "files": files,
        "primary": "kernel.mlir",
    }


# ---------------------------------------------------------------------------- running


def lowered(text: str, name: str = "kernel.mlir"):
    """The npu-level module of a pto-level kernel, as pto-run lowers it (the default
    pipeline, pto-sk03-pipeline, its options read from the kernel's attributes)."""
    from xdsl.context import Context

    from pto.driver.lower import lower
    from pto.driver.parse import LocatingParser
    from pto.driver.pipelines import to_npu
    from pto.driver.registry import load_dialects
    from pto.driver.verify import verify_each

    ctx = Context()
    load_dialects(ctx)
    module = LocatingParser(ctx, text, name).parse_module()
    verify_each(module)
    lower(ctx, module, to_npu("pto"))
    return module


def five_runs(module, inputs: list[np.ndarray], l2_size: int | None = None) -> list:
    """Each run's RunResult, or what it raised."""
    from pto.interp.run import run

    outs: list = []
    for engine, numerics in RUNS:
        try:
            outs.append(run(module, inputs, l2_size=l2_size, trace=True, engine=engine, numerics=numerics))
        except Exception as e:  # noqa: BLE001 - judged below, against the other runs
            outs.append(e)
    return outs


def run_engines_case(p: dict, res: Result) -> None:
    from pto.diagnostics import DiagnosticError

    text = p["files"][p["primary"]]["text"]
    try:
        module = lowered(text)
    except DiagnosticError as e:  # the pipeline rejects the kernel: nothing to compare
        res.outcome, res.detail = "clean", f"lowering: {e}"[:600]
        return
    except Exception as e:  # noqa: BLE001 - a lowering crash is the semantic kind's finding
        from pto.bench.fuzzing.run import deepest_cause, innermost_project_frame

        cause = deepest_cause(e)
        res.outcome, res.frame = "internal", innermost_project_frame(cause.__traceback__)
        res.sig = f"internal: lowering raised {type(cause).__name__} at {res.frame or '?'}"
        res.detail = f"{type(e).__name__}: {e}"[:600]
        return
    judge(five_runs(module, make_inputs(p["engines"], p["tokens"], p["seed"]), p.get("l2_size")), res)


# ---------------------------------------------------------------------------- judging


def judge(outs: list, res: Result) -> None:
    """Sets res's outcome from the five runs (see the module docstring)."""
    errs = [(i, o) for i, o in enumerate(outs) if isinstance(o, BaseException)]
    if errs:
        _judge_errors(outs, errs, res)
        return
    for i, j, with_outputs in PAIRS:
        diff = first_difference(outs[i], outs[j], with_outputs)
        if diff is not None:
            what, detail = diff
            res.outcome, res.sig = "wrong", f"wrong: engines: {NAMES[i]} vs {NAMES[j]}: {what}"
            res.detail = detail[:600]
            return
    res.outcome = "accepted"


def _judge_errors(outs: list, errs: list, res: Result) -> None:
    from pto.bench.fuzzing.run import innermost_project_frame
    from pto.interp.machine import MachineError
    from pto.interp.run import InputError

    i, first = errs[0]
    if len(errs) < len(outs):
        ok = next(n for n, o in enumerate(outs) if not isinstance(o, BaseException))
        res.outcome, res.frame = "traceback", innermost_project_frame(first.__traceback__)
        res.sig = f"traceback: engines: {NAMES[i]} raised {type(first).__name__}, {NAMES[ok]} did not"
        res.detail = f"{NAMES[i]}: {type(first).__name__}: {first}"[:600]
        return
    raw = next(((n, e) for n, e in errs if not isinstance(e, MachineError | InputError)), None)
    if raw is not None:  # a bug of the model, even if both engines share it
        n, e = raw
        res.outcome, res.frame = "traceback", innermost_project_frame(e.__traceback__)
        res.sig = f"traceback: engines: {NAMES[n]} raised {type(e).__name__} at {res.frame or '?'}"
        res.detail = f"{type(e).__name__}: {e}"[:600]
        return
    for n, e in errs[1:]:
        if (
            type(e) is not type(first)
            or str(e) != str(first)
            or getattr(e, "op", None) is not getattr(first, "op", None)
        ):
            res.outcome = "traceback"
            what = "class" if type(e) is not type(first) else "message" if str(e) != str(first) else "op"
            res.sig = f"traceback: engines: {NAMES[i]} and {NAMES[n]} raise errors of different {what}"
            res.detail = f"{NAMES[i]}: {type(first).__name__}: {first}\n{NAMES[n]}: {type(e).__name__}: {e}"[:600]
            return
    res.outcome, res.detail = "clean", f"every run: {type(first).__name__}: {first}"[:600]


def first_difference(a, b, with_outputs: bool) -> tuple[str, str] | None:
    """(what differs, with numbers as N: the dedup key; the values) or None. Outputs are
    compared as raw bytes, so NaN payloads and -0.0 count."""
    if with_outputs:
        for k, (x, y) in enumerate(zip(a.outputs, b.outputs, strict=True)):
            if d := _array_difference(x, y, f"output {k}"):
                return "outputs", d
    for k, (x, y) in enumerate(zip(a.write_counts, b.write_counts, strict=True)):
        if d := _array_difference(x, y, f"write counts of output {k}"):
            return "write_counts", d
    if a.host_transposes != b.host_transposes:
        return "host transposes", f"{a.host_transposes} vs {b.host_transposes}"
    if (path := json_difference(a.report.to_json(), b.report.to_json(), "report")) is not None:
        where, detail = path
        return re.sub(r"\d+", "N", where), detail
    return _events_difference(a.report.events, b.report.events)


def _array_difference(x: np.ndarray, y: np.ndarray, name: str) -> str:
    if x.dtype != y.dtype or x.shape != y.shape:
        return f"{name}: {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
    xb = np.ascontiguousarray(x).view(np.uint8).reshape(x.shape + (-1,) if x.ndim else (-1,))
    yb = np.ascontiguousarray(y).view(np.uint8).reshape(y.shape + (-1,) if y.ndim else (-1,))
    bad = (xb != yb).any(axis=-1) if x.ndim else np.array([(xb != yb).any()])
    if not bad.any():
        return ""
    where = tuple(int(v) for v in np.argwhere(bad)[0])
    return f"{name}: {int(bad.sum())} of {x.size} elements differ, first at {list(where)}: {x[where]!r} vs {y[where]!r}"


def json_difference(a, b, path: str) -> tuple[str, str] | None:
    """The first place two reports' JSON differ (keys in order, floats exactly, NaN
    equal to NaN): (its path, the two values)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path} (keys)", f"{list(a)} vs {list(b)}"
        for k in a:
            if (d := json_difference(a[k], b[k], f"{path}.{k}")) is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length)", f"{len(a)} vs {len(b)}"
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if (d := json_difference(x, y, f"{path}[{k}]")) is not None:
                return d
        return None
    if _same_value(a, b):
        return None
    return path, f"{path}: {a!r} vs {b!r}"


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _events_difference(a: list, b: list) -> tuple[str, str] | None:
    """Trace events in order; the key names the field that differs first."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            field = next((f for f in vars(x) if getattr(x, f) != getattr(y, f)), "?")
            return f"trace events ({field})", f"event {k} of {len(a)}: {x} vs {y}"
    if len(a) != len(b):
        return (
            "trace events (count)",
            f"{len(a)} vs {len(b)} events; first extra: {(a if len(a) > len(b) else b)[min(len(a), len(b))]}",
        )
    return None


# ---------------------------------------------------------------------------- reproducer


def main(argv: list[str] | None = None) -> int:
    """Run a reproducer's kernel and inputs (in the kernel's argument order) on both
    engines and print the verdict; 1 if it is a finding."""
    argv = sys.argv[1:] if argv is None else list(argv)
    l2_size = None
    if argv[:1] == ["--l2-size"] and len(argv) > 1:
        l2_size, argv = int(argv[1]), argv[2:]
    if not argv:
        print("usage: python -m pto.bench.fuzzing.engines [--l2-size N] kernel.mlir INPUT.npy ...", file=sys.stderr)
        return 2
    from pto.tools.pto_run import load_npy

    module = lowered(Path(argv[0]).read_text(), argv[0])
    from pto.interp.run import signature

    inputs = [load_npy(p, a.elem) for p, a in zip(argv[1:], signature(module).inputs, strict=True)]
    res = Result(0, "engines", argv[0], "accepted")
    judge(five_runs(module, inputs, l2_size), res)
    print(f"{res.outcome}: {res.sig or '-'}\n{res.detail}")
    return 0 if res.outcome in ("accepted", "clean") else 1


if __name__ == "__main__":
    sys.exit(main())
