"""Running one case in a worker: the tools' `main` or an API program, and its outcome."""

from __future__ import annotations

import builtins
import contextlib
import gc
import hashlib
import io
import itertools
import json
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

import ml_dtypes
import numpy as np

from pto.bench.fuzzing.cases import NOT_PROJECT, PKG, Case, Result
from pto.bench.fuzzing.corpus import level_of, quiet_call
from pto.bench.fuzzing.engines import run_engines_case
from pto.bench.fuzzing.npy import npy_bytes
from pto.bench.fuzzing.semantic import eval_numpy, make_inputs
from pto.tools import pto_opt, pto_run


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that `except Exception` does not eat it."""


_alarm: dict = {}


def is_project(filename: str) -> bool:
    if not os.path.isabs(filename):  # '<fuzz-case>', or a Cython frame's relative path
        return False
    try:
        p = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return PKG in p.parents and not any(n in p.parents or n == p for n in NOT_PROJECT)


def frame_key(filename: str, lineno: int, func: str) -> str:
    return f"{Path(filename).resolve().relative_to(PKG)}:{lineno} {func}"


def innermost_project_frame(tb) -> str:
    """The innermost frame of a traceback that is inside the pto package."""
    best = ""
    for fs in traceback.extract_tb(tb):
        if is_project(fs.filename):
            best = frame_key(fs.filename, fs.lineno or 0, fs.name)
    return best


def deepest_cause(e: BaseException) -> BaseException:
    """The original exception behind `raise X from e` / an exception raised while handling."""
    seen = set()
    while id(e) not in seen:
        seen.add(id(e))
        nxt = e.__cause__ or e.__context__
        if nxt is None or not innermost_project_frame(nxt.__traceback__):
            break
        e = nxt
    return e


def _on_alarm(signum, frame):
    stack = []
    while frame is not None:
        stack.append(frame)
        frame = frame.f_back
    where = next(
        (
            frame_key(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
            for f in stack
            if is_project(f.f_code.co_filename)
        ),
        "",
    )
    _alarm["hang"] = where or "<outside pto>"
    raise Hang()


# The tools print their internal-error line inside the `except` that caught the bug: a
# print that sees an exception being handled keeps it, so the crash's frame is known.
_handled: list = [None]


def _recording_print(*args, **kwargs):
    exc = sys.exc_info()[1]
    if exc is not None:
        _handled[0] = exc
    return builtins.print(*args, **kwargs)


def install_print_hooks() -> None:
    import pto.frontend.api as api

    for mod in (pto_opt, pto_run, api):
        vars(mod)["print"] = _recording_print  # module globals shadow the builtin


def digest_dir(d: str) -> dict[str, str]:
    out = {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            if os.path.isfile(p) and not os.path.islink(p):
                try:
                    with open(p, "rb") as fh:
                        out[os.path.relpath(p, d)] = hashlib.sha256(fh.read()).hexdigest()
                except OSError:
                    pass
    return out


def materialize(files: dict, d: str) -> None:
    """Write a case's files: text, raw bytes, a generated input array, or a symlink."""
    for name, spec in files.items():
        path = os.path.join(d, name)
        if "symlink" in spec:
            os.symlink(os.path.join(d, spec["symlink"]), path)
            continue
        if "text" in spec:
            data = spec["text"].encode("utf-8", "surrogatepass")
        elif "bytes" in spec:
            data = spec["bytes"]
        else:
            a = spec["array"]
            data = npy_bytes(make_inputs(a["kernel"], a["tokens"], a["seed"])[a["index"]])
        with open(path, "wb") as f:
            f.write(data)
        if "mode" in spec:
            os.chmod(path, spec["mode"])


def subst(argv: list[str], d: str) -> list[str]:
    return [a.replace("{d}", d) for a in argv]


def classify_cli(code, err: str) -> str:
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if code == 3 or "internal error" in err:
        return "internal"
    if code == 0:
        return "accepted"
    if code in (1, 2):
        return "clean"
    return "internal"  # any other exit status is not one the tools document


LEVEL_RANK = {"pto": 0, "tile": 1, "npu": 2}


def lowered_ir_rejected(p: dict, err: str) -> str:
    """An error naming an op of a level below the input's: the lowering built IR that its
    own verifier rejects (issue 10: a lowering must produce valid IR or reject at the
    user's op). Returns the message with numbers as N, or ''."""
    text = (p.get("files", {}).get(p.get("primary", ""), {}) or {}).get("text")
    if text is None:
        return ""
    level = LEVEL_RANK.get(level_of(text), 2)
    for m in re.finditer(r"error: '(pto|tile|npu)\.(\w+)'([^\n]*)", err):
        if LEVEL_RANK[m.group(1)] > level:
            return re.sub(r"\d+", "N", f"'{m.group(1)}.{m.group(2)}'{m.group(3)}")[:160]
    return ""


def input_paths(argv: list[str]) -> list[str]:
    """The files a command reads: its first positional argument and each --input."""
    ins = [a for a in argv[:1] if a and not a.startswith("-")]
    for i, a in enumerate(argv):
        if a == "--input" and i + 1 < len(argv):
            ins.append(argv[i + 1])
        elif a.startswith("--input="):
            ins.append(a.split("=", 1)[1])
    return [x for x in ins if x and os.path.isfile(x)]


def golden_verdict(p: dict, d: str, res: Result, out: str) -> None:
    """For an accepted semantic run: the tool's --golden verdict and an independent one."""
    kern = p["semantic"]
    try:
        report = json.loads(out)
    except ValueError:
        res.outcome, res.sig, res.detail = "wrong", "wrong: --json output is not JSON", out[:300]
        return
    try:  # the files the tool read (an npy case may have swapped one for a hostile one)
        paths = [p["argv"][i + 1] for i, a in enumerate(p["argv"][:-1]) if a == "--input"]
        inputs = [load_array(subst([q], d)[0]) for q in paths]
        want = eval_numpy(kern, inputs)
    except Exception as e:  # noqa: BLE001 - inputs the model cannot take: no independent verdict
        res.notes.append(f"no independent golden ({type(e).__name__})")
        want = None
    if want is None:
        return
    if not all(np.isfinite(w).all() for w in want):
        res.notes.append("reference has NaN/Inf")
        return  # the acceptance rule cannot pass; nothing to compare
    for i, w in enumerate(want):
        path = os.path.join(d, "out", f"result{i}.npy")
        if not os.path.exists(path):
            res.outcome, res.sig = "wrong", "wrong: an output .npy is missing"
            return
        got = np.load(path)
        if got.dtype == np.dtype("V2"):  # numpy saves bfloat16 as raw 2-byte records
            got = got.view(ml_dtypes.bfloat16)
        got = got.astype(np.float64)
        elem = kern["ops"][-1]["types"][0][1] if len(want) == 1 else "f32"
        if got.shape != w.shape:
            res.outcome, res.sig = "wrong", f"wrong: output shape {got.shape}, want {w.shape}"
            return
        bad, nonfinite = indep_mismatch(got, w, elem)
        if nonfinite or bad > 0.05:
            res.outcome = "wrong"
            res.sig = f"wrong: vs independent numpy ({kern['form']}{', NaN/Inf' if nonfinite else ''})"
            res.detail = f"output {i}: {bad:.1%} beyond 4x tolerance, {nonfinite} NaN/Inf where the reference is finite"
            return
    for name, v in (report.get("golden") or {}).items():
        if not v.get("ok"):
            res.outcome = "wrong"
            res.sig = f"wrong: npu vs pto-level golden ({kern['form']})"
            res.detail = f"golden {name}: {v}"
            return


def load_array(path: str) -> np.ndarray:
    x = np.load(path, allow_pickle=False)
    return x.view(ml_dtypes.bfloat16) if x.dtype == np.dtype("V2") else x


TOL = {"bf16": (1e-4, 0.0078125), "f16": (1e-4, 0.0009765625), "f32": (1e-4, 1e-4), "i8": (0, 0.005), "i32": (0, 0)}


def indep_mismatch(got: np.ndarray, want: np.ndarray, elem: str) -> tuple[float, int]:
    """(fraction beyond 4x SK03.md's tolerance, NaN/Inf where the reference is finite).
    4x and a 5% bar: this model differs from the project's in the last bit of RMSNorm and
    quant ties, so only gross errors count."""
    atol, rtol = TOL.get(elem, (1e-3, 1e-2))
    with np.errstate(all="ignore"):
        err = np.abs(got - want)
        bad = ~(err <= 4 * (atol + rtol * np.abs(want)))
    nonfinite = int((~np.isfinite(got) & np.isfinite(want)).sum())
    return (float(bad.mean()) if bad.size else 0.0), nonfinite


def reference_nonfinite(p: dict, d: str) -> bool | None:
    """For a --golden mismatch of a mutated kernel: does the pto-level reference itself
    hold NaN/Inf? (Then the acceptance rule cannot pass and the mismatch means nothing.)"""
    try:
        from xdsl.context import Context

        from pto.driver.parse import LocatingParser
        from pto.driver.registry import load_dialects
        from pto.interp.run import random_inputs, run, signature

        ctx = Context()
        load_dialects(ctx)
        module = LocatingParser(ctx, Path(d, p["primary"]).read_text(), "k").parse_module()
        argv = p["argv"]
        tokens = int(argv[argv.index("--tokens") + 1])
        ref = run(module, random_inputs(signature(module), tokens, 0)).outputs
        return any(not np.isfinite(np.asarray(r, dtype=np.float64)).all() for r in ref)
    except Exception:  # noqa: BLE001 - best effort
        return None


def run_cli_case(p: dict, res: Result, d: str) -> None:
    materialize(p["files"], d)
    before = digest_dir(d)
    argv = subst(p["argv"], d)
    main = pto_run.main if p["tool"] == "run" else pto_opt.main
    _handled[0] = None
    out, err = io.StringIO(), io.StringIO()
    code, escaped = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Hang:
            raise
        except BaseException as e:  # noqa: BLE001 - an exception escaping main is the finding
            escaped = e
    res.code = code
    out_text, err_text = out.getvalue(), err.getvalue()
    res.detail = "\n".join(err_text.strip().splitlines()[:3])[:600]
    if escaped is not None:
        res.outcome = "traceback"
        res.frame = innermost_project_frame(escaped.__traceback__)
        res.sig = f"traceback {type(escaped).__name__} at {res.frame or '?'}"
        res.detail = f"{type(escaped).__name__}: {escaped}"[:600]
    else:
        res.outcome = classify_cli(code, err_text)
        if res.outcome in ("internal", "traceback"):
            exc = _handled[0]
            if exc is not None:
                cause = deepest_cause(exc)
                res.frame = innermost_project_frame(cause.__traceback__)
                res.sig = f"{res.outcome} {type(cause).__name__} at {res.frame}"
            if not res.frame:
                msg = re.sub(r"\d+", "N", next((ln for ln in err_text.splitlines() if "error" in ln), err_text[:120]))
                res.sig = f"{res.outcome}: {msg[:160]}"
    if res.outcome == "clean" and (bad_ir := lowered_ir_rejected(p, err_text)):
        res.outcome, res.sig = "internal", f"internal: the lowering emitted IR its verifier rejects: {bad_ir}"
    for path, line, kind in sorted(set(re.findall(r"(\S+\.py):(\d+): (\w+Warning)", err_text))):
        where = frame_key(path, int(line), "") if is_project(path) else f"{path}:{line}"
        res.notes.append(f"{kind} reached stderr ({where.strip()})")
    if res.outcome == "clean" and not err_text.strip():
        res.notes.append("failed with nothing on stderr")
    _handled[0] = None  # a live exception keeps the failed IR alive (see needs_fresh_worker)
    # Inputs (the kernel and the --input files) must be byte-identical afterwards.
    after = digest_dir(d)
    inputs = {os.path.relpath(os.path.realpath(x), os.path.realpath(d)) for x in input_paths(argv)}
    if p["tool"] == "opt":  # `pto-opt k.mlir -o k.mlir` rewrites in place on request, as mlir-opt
        inputs -= {
            os.path.relpath(os.path.realpath(b), os.path.realpath(d))
            for a, b in itertools.pairwise(argv)
            if a == "-o" and b
        }
    touched = sorted(f for f, h in before.items() if after.get(f) != h and f in inputs)
    if touched and res.outcome not in ("traceback", "internal"):
        res.outcome, res.sig = "wrong", f"wrong: pto-{p['tool']} modified its input ({', '.join(touched)})"
        res.detail = f"files changed: {touched}\n" + res.detail
        return
    if "semantic" in p and res.outcome in ("accepted", "clean") and out_text.lstrip().startswith("{"):
        golden_verdict(p, d, res, out_text)  # --json printed a report: the run went through
    elif res.outcome == "clean" and "--golden" in argv and "MISMATCH" in out_text:
        # A mutated kernel that runs but whose npu result disagrees with its pto level.
        if reference_nonfinite(p, d) is False:
            res.outcome, res.sig = "wrong", "wrong: npu vs pto-level golden (mutated kernel)"
            res.detail = "\n".join(ln for ln in out_text.splitlines() if "golden" in ln or "at [" in ln)[:600]


def run_api_case(p: dict, res: Result, d: str) -> None:
    from xdsl.dialects.builtin import ModuleOp

    import pto.frontend.builder as builder
    import pto.frontend.loop as loop

    ns: dict = {"__name__": "__fuzz_case__"}
    cwd = os.getcwd()
    os.chdir(d)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                exec(compile(p["api"], "<fuzz-case>", "exec"), ns)  # noqa: S102 - the case is our own program
                exc = None
            except Hang:
                raise
            except BaseException as e:  # noqa: BLE001
                exc = e
    finally:
        os.chdir(cwd)
        leaked = bool(builder._pinned) or bool(loop._traces)
        builder._pinned.clear()
        loop._traces.clear()
    if leaked:
        res.notes.append("the builder's global state leaked past the call")
    if exc is None:
        res.outcome = "accepted"
        m = ns.get("m")
        if isinstance(m, ModuleOp):
            check_roundtrip(m, res, d)
        r = ns.get("r")
        if res.outcome == "accepted" and r is not None and getattr(r, "golden", None) and not r.ok:
            res.outcome, res.sig = "wrong", "wrong: pto.run(golden=True) not ok"
            res.detail = "; ".join(v.describe("out") for v in r.golden)[:600]
        return
    project_exc = type(exc).__module__.split(".")[0] == "pto"
    frame = innermost_project_frame(exc.__traceback__)
    res.detail = f"{type(exc).__name__}: {exc}"[:600]
    tb = traceback.extract_tb(exc.__traceback__)
    user_last = max((i for i, f in enumerate(tb) if f.filename == "<fuzz-case>"), default=-1)
    project_last = max((i for i, f in enumerate(tb) if is_project(f.filename)), default=-1)
    if user_last > project_last:  # the program's own code raised (e.g. in a traced function)
        res.outcome = "clean"
    elif project_exc or not frame:
        res.outcome = "clean"  # the project's own exception type, or Python's call checks
    else:
        res.outcome, res.frame = "traceback", frame
        res.sig = f"api: raw {type(exc).__module__}.{type(exc).__name__} at {frame}"


def check_roundtrip(m, res: Result, d: str) -> None:
    """An accepted API module must print as IR that pto-opt reads back."""
    try:
        text = str(m)
    except Exception as e:  # noqa: BLE001
        res.outcome, res.frame = "traceback", innermost_project_frame(e.__traceback__)
        res.sig = f"api: raw {type(e).__name__} printing the module at {res.frame or '(xdsl)'}"
        res.detail = f"{type(e).__name__}: {e}"[:600]
        return
    path = os.path.join(d, "built.mlir")
    Path(path).write_text(text)
    code, _, err = quiet_call(pto_opt.main, [path])
    if code != 0:
        res.outcome, res.sig = "wrong", "wrong: the API built a module pto-opt cannot read back"
        res.detail = (err.strip().splitlines() or [""])[0][:300] + "\n" + text[:400]


def run_case(case: Case, tmp_root: str) -> Result:
    res = Result(case.id, case.kind, case.label, "accepted")
    d = tempfile.mkdtemp(prefix=f"c{case.id}-", dir=tmp_root)
    _alarm.clear()
    start = time.perf_counter()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, case.timeout)
    try:
        if "api" in case.payload:
            run_api_case(case.payload, res, d)
        elif "engines" in case.payload:
            run_engines_case(case.payload, res)
        else:
            run_cli_case(case.payload, res, d)
    except Hang:
        pass
    except Exception as e:  # noqa: BLE001 - a bug of the harness itself: report it, do not die
        res.outcome, res.sig = "internal", f"harness error {type(e).__name__}: {e}"[:200]
        res.detail = traceback.format_exc()[-800:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    res.secs = time.perf_counter() - start
    if "hang" in _alarm:
        res.outcome, res.frame = "hang", _alarm["hang"]
        res.sig = f"hang at {res.frame}"
    if not gc.isenabled():  # a tool left the collector off
        gc.enable()
        res.notes.append("gc left disabled")
    for root, dirs, _ in os.walk(d):  # a case may have made a file unreadable
        for x in dirs:
            os.chmod(os.path.join(root, x), 0o755)
    shutil.rmtree(d, ignore_errors=True)
    return res


def worker_main(conn, tmp_root: str, mem_limit: int) -> None:
    """Run cases sent by the parent until told to stop (or after a hang, which may have
    left state behind: the parent starts a fresh worker)."""
    if mem_limit:
        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    sys.stdin = io.StringIO("")
    install_print_hooks()
    import warnings

    warnings.simplefilter("always")  # a warning on every case, not once per worker
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            return
        res = run_case(case, tmp_root)
        conn.send(res)
        if needs_fresh_worker(res):
            return


def needs_fresh_worker(res: Result) -> bool:
    """After a hang, a crash or any API program the process may hold state that would be
    blamed on the next case (a failed lowering whose exception is still referenced leaves
    IR attached that makes every later parse fail): the parent forks a fresh worker."""
    return res.outcome in ("hang", "traceback", "internal") or res.kind == "api"


# ======================================================================= parent side
