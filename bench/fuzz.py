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

Outcomes: clean (a diagnosed error), accepted (exit 0), traceback (an exception escaping a
tool's `main`, or a raw non-pto exception raised inside the project by an API call),
internal (exit 3 or 'internal error'), hang (over --timeout seconds; the issue's bar is
10 s for an input under 10 KB), wrong (a golden mismatch, an input file modified, or an
accepted API module that does not parse back).

Cases run in-process in a pool of forked workers (the tools' `main(argv)`; stdout and
stderr captured): a SIGALRM at the timeout records where a hang is, and the parent kills
a worker that does not answer soon after. A case's content depends only on (--seed, its
index). Crashes are deduplicated by (outcome, exception type, innermost frame in the pto
package); each distinct one is reduced (line-based delta debugging of the mutated text,
keeping the signature) and written to --out/findings/, with results.jsonl and summary.txt.
"""

from __future__ import annotations

import os

# One BLAS thread per worker: --jobs is the parallelism (set before numpy is imported).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import builtins  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from multiprocessing.connection import wait as mp_wait  # noqa: E402
from pathlib import Path  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import pto  # noqa: E402
import pto.frontend  # noqa: E402, F401  (loaded before the workers fork)
from pto.tools import pto_opt, pto_run  # noqa: E402

PKG = Path(pto.__file__).resolve().parent  # the pto package (the repo root)
NOT_PROJECT = (PKG / "bench", PKG / "test")  # inside the package dir, but not pto code
KINDS = ("text", "semantic", "npy", "flags", "api")
OUTCOMES = ("clean", "accepted", "traceback", "internal", "hang", "wrong")
BAD = ("traceback", "internal", "hang", "wrong")

# Findings the brief says are being fixed elsewhere: (regex on the signature or the
# stderr, label). Still reported, only labelled.
KNOWN = [
    (r"^api:", "known: Python API misuse raises a raw exception (being fixed)"),
    (r"Forward declared|use before|dominance|KeyError.*pto_to_tile|pto_to_tile.*KeyError",
     "known: use-before-def passes verify (dominance check being fixed)"),
    (r"returns? (its|one of its) (own )?argument|is the argument", "known: kernel returning its own argument"),
]


# ---------------------------------------------------------------------------- cases


@dataclass
class Case:
    id: int
    kind: str
    label: str  # the mutators or recipe that made it
    payload: dict  # what the worker needs (see run_cli_case / run_api_case)
    timeout: float = 10.0


@dataclass
class Result:
    id: int
    kind: str
    label: str
    outcome: str
    code: int | None = None
    secs: float = 0.0
    sig: str = ""  # the dedup key of a bad outcome
    frame: str = ""  # innermost pto frame of a crash or hang
    detail: str = ""  # first lines of stderr, or what was wrong
    notes: list[str] = field(default_factory=list)


def case_rng(seed: int, index: int, kind: str) -> random.Random:
    """One generator per case, so that a case depends only on (seed, index)."""
    return random.Random(f"pto-fuzz:{seed}:{index}:{kind}")


# --------------------------------------------------------------------------- corpus


@dataclass
class Seed:
    name: str
    text: str
    level: str  # pto, tile, npu or other


def corpus_paths() -> list[Path]:
    """Every tracked .mlir of examples/ and test/ (lit's Output/ copies are not tracked)."""
    try:
        out = subprocess.run(["git", "ls-files", "*.mlir"], cwd=PKG, capture_output=True, text=True, check=True)
        paths = [PKG / p for p in out.stdout.split()]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in PKG.rglob("*.mlir") if "Output" not in p.parts]
    return sorted(p for p in paths if p.parts[len(PKG.parts)] in ("examples", "test") and p.is_file())


def split_chunks(text: str) -> list[str]:
    return [c for c in re.split(r"^// -----\s*$", text, flags=re.M) if c.strip()]


def level_of(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)  # CHECK lines of a pto test may name npu ops
    for level in ("npu", "tile", "pto"):
        if re.search(rf"\b{level}\.[a-z_]+", text):
            return level
    return "other"


def quiet_call(fn, *args):
    """fn(*args) with stdout and stderr captured: (return value or exit code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = fn(*args)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def load_corpus() -> list[Seed]:
    """The chunks `pto-opt` accepts as they are (the 'valid .mlir' of the issue)."""
    seeds: list[Seed] = []
    with tempfile.TemporaryDirectory(prefix="ptofuzz-corpus-") as d:
        path = os.path.join(d, "chunk.mlir")
        for p in corpus_paths():
            for i, chunk in enumerate(split_chunks(p.read_text(errors="replace"))):
                Path(path).write_text(chunk)
                if quiet_call(pto_opt.main, [path])[0] == 0:
                    seeds.append(Seed(f"{p.relative_to(PKG)}#{i}", chunk, level_of(chunk)))
    return seeds


def tree_digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


# ----------------------------------------------------------------- text mutations

INTERESTING_INTS = ["0", "1", "-1", "2", "3", "15", "17", "33", "127", "128", "4097", "65536", "2147483647",
                    "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
                    "18446744073709551616", "-9223372036854775809", "1e20", "99999999999999999999999999999"]
INTERESTING_FLOATS = ["0.0", "-0.0", "1.0e+39", "1.0e-50", "-1.0", "1.0e+308", "3.4028235e+38", "0x7FC00000",
                      "0x7F800000", "1e400", "5", "-1.0e-06"]
ELEM_TYPES = ["bf16", "f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "index", "ui8", "si8", "i0",
              "i128", "complex<f32>", "none", "tensor<4xf32>"]
KEYWORDS = ["rint", "round", "trunc", "floor", "ceil", "none", "sat", "b_trans", "a_trans", "inplace",
            "none_cacheable", "normal", "vector", "cube", "gm", "ub", "l1", "l0a", "l0b", "l0c", "mte1", "mte2",
            "mte3", "fix", "sum", "max", "min", "mean", "absmax", "split_k", "after", "rows", "cache", "acc",
            "transpose", "step", "to", "in", "nbuffer", "l1_reuse", "tile", "m", "k", "n", "eps"]
PUNCT = list("{}()<>[],:=%@#!?x\"-.") + ["->", "::", "^bb0", "\n", " "]
ODD_TEXT = ["\x00", "\ufeff", "\u202e", "é", "\\", "\t", "\r", "'", "`", "$", "🙂", "\udcff"]


def _sub_one(rng: random.Random, text: str, pattern: str, repl) -> str:
    """Replace one random match of `pattern` with repl(match)."""
    ms = list(re.finditer(pattern, text))
    if not ms:
        return text
    m = rng.choice(ms)
    return text[:m.start()] + repl(m) + text[m.end():]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def mut_delete_line(rng, text, corpus):
    ls = _lines(text)
    if ls:
        del ls[rng.randrange(len(ls))]
    return "".join(ls)


def mut_dup_line(rng, text, corpus):
    ls = _lines(text)
    if ls:
        i = rng.randrange(len(ls))
        ls.insert(rng.randrange(len(ls) + 1), ls[i])
    return "".join(ls)


def mut_move_line(rng, text, corpus):
    """Moving a line up is the usual way to a use before its definition."""
    ls = _lines(text)
    if len(ls) > 1:
        line = ls.pop(rng.randrange(len(ls)))
        ls.insert(rng.randrange(len(ls) + 1), line)
    return "".join(ls)


def mut_int(rng, text, corpus):
    return _sub_one(rng, text, r"(?<![\w%.#@])\d+(?![\w.])", lambda m: rng.choice(INTERESTING_INTS))


def mut_float(rng, text, corpus):
    return _sub_one(rng, text, r"-?\d+\.\d*(e[+-]?\d+)?", lambda m: rng.choice(INTERESTING_FLOATS))


def mut_elem_type(rng, text, corpus):
    return _sub_one(rng, text, r"(?<=x)(bf16|f16|f32|i8|i32|i64|index)(?=[>,])", lambda m: rng.choice(ELEM_TYPES))


def mut_dim(rng, text, corpus):
    dims = ["?", "0", "1", "3", "17", "33", "4096", "65536", "9223372036854775807", "-1", "?x?"]
    return _sub_one(rng, text, r"(?<=[<x])(\?|\d+)(?=x)", lambda m: rng.choice(dims))


def mut_ssa(rng, text, corpus):
    """Swap a use for another value (maybe later, maybe of another type) or an unknown one."""
    names = sorted(set(re.findall(r"%[\w$.]+", text))) or ["%x"]
    return _sub_one(rng, text, r"(?<=[ ,(\[])%[\w$.]+", lambda m: rng.choice(names + ["%undefined", "%0"]))


def mut_opname(rng, text, corpus):
    ops = sorted({o for s in corpus for o in re.findall(r"\b(?:pto|tile|npu|arith|scf|func|tensor)\.[a-z_]+", s.text)})
    return _sub_one(rng, text, r"\b(?:pto|tile|npu|arith|scf|func|tensor)\.[a-z_]+", lambda m: rng.choice(ops))


def mut_keyword(rng, text, corpus):
    return _sub_one(rng, text, r"\b(" + "|".join(KEYWORDS) + r")\b", lambda m: rng.choice(KEYWORDS))


def mut_delete_token(rng, text, corpus):
    return _sub_one(rng, text, r"[^\s]+", lambda m: "")


def mut_insert_token(rng, text, corpus):
    vocab = re.findall(r"[^\s]+", rng.choice(corpus).text) or ["x"]
    i = rng.randrange(len(text) + 1)
    return text[:i] + " " + rng.choice(vocab) + " " + text[i:]


def mut_truncate(rng, text, corpus):
    return text[:rng.randrange(len(text) + 1)]


def mut_punct(rng, text, corpus):
    i = rng.randrange(len(text) + 1)
    if rng.random() < 0.5 and i < len(text):
        return text[:i] + text[i + 1:]
    return text[:i] + rng.choice(PUNCT) + text[i:]


def mut_string(rng, text, corpus):
    """An unterminated (or huge) string literal: the lexer's worst case."""
    body = "".join(rng.choice("ab\\\"") for _ in range(rng.randrange(8, 64)))
    i = rng.randrange(len(text) + 1)
    return text[:i] + '"' + body + ("" if rng.random() < 0.7 else '"') + text[i:]


def mut_splice(rng, text, corpus):
    other = _lines(rng.choice(corpus).text) or ["\n"]
    ls = _lines(text)
    ls.insert(rng.randrange(len(ls) + 1), rng.choice(other))
    return "".join(ls)


def mut_drop_attr(rng, text, corpus):
    return _sub_one(rng, text, r"pto\.\w+ = (#[\w.]+<[^>]*>|array<[^>]*>|\"[^\"]*\"|\{[^{}]*\}),? ?", lambda m: "")


def mut_nest(rng, text, corpus):
    """Deep nesting: recursion depth in the parsers."""
    depth = rng.choice([50, 500, 3000])
    o, c = rng.choice([("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"), ("tensor<", ">")])
    i = rng.randrange(len(text) + 1)
    return text[:i] + o * depth + (c * depth if rng.random() < 0.5 else "") + text[i:]


def mut_odd_char(rng, text, corpus):
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(ODD_TEXT) + text[i:]


def mut_dup_func(rng, text, corpus):
    """A second function of the same name, or a second kernel."""
    return text + "\n" + (text if rng.random() < 0.5 else rng.choice(corpus).text)


TEXT_MUTATORS = {f.__name__[4:]: f for f in (
    mut_delete_line, mut_dup_line, mut_move_line, mut_int, mut_float, mut_elem_type, mut_dim, mut_ssa,
    mut_opname, mut_keyword, mut_delete_token, mut_insert_token, mut_truncate, mut_punct, mut_string,
    mut_splice, mut_drop_attr, mut_nest, mut_odd_char, mut_dup_func)}
# Cheap, local mutations most of the time; the blunt ones less often.
TEXT_WEIGHTS = {"int": 4, "float": 2, "elem_type": 3, "dim": 3, "ssa": 3, "opname": 2, "keyword": 3,
                "delete_line": 2, "dup_line": 1, "move_line": 2, "delete_token": 2, "insert_token": 2,
                "truncate": 1, "punct": 2, "string": 1, "splice": 1, "drop_attr": 2, "nest": 1, "odd_char": 1,
                "dup_func": 1}

LEVEL_PIPELINES = {
    "pto": ["builtin.module(pto-sk03-pipeline)", "pto-classify-skeleton,pto-to-tile",
            "pto-sk03-pipeline{factors=3,1}",
            "pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings"],
    "tile": ["tile-assign-shapes,tile-to-npu", "tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu",
             "tile-to-npu", "tile-assign-shapes"],
    "npu": ["cse", "canonicalize", "dce"],
    "other": ["cse", "canonicalize"],
}


def gen_text(rng: random.Random, corpus: list[Seed]) -> tuple[str, dict]:
    seed = rng.choice(corpus)
    text = seed.text
    names = list(TEXT_WEIGHTS)
    picked = rng.choices(names, [TEXT_WEIGHTS[n] for n in names], k=rng.choice([1, 1, 2, 3]))
    for name in picked:
        text = TEXT_MUTATORS[name](rng, text, corpus)
    level = seed.level
    r = rng.random()
    if r < 0.25 and level in ("pto", "tile", "npu"):
        tool = "run"
        argv = ["{d}/kernel.mlir", "--random-inputs", "--tokens", str(rng.choice([1, 2, 3, 5, 17, 40]))]
        if level != "npu":
            argv += ["--golden", "--output-dir", "{d}/out"]
    elif r < 0.4:
        tool, argv = "opt", ["{d}/kernel.mlir"]
    else:
        tool, argv = "opt", ["{d}/kernel.mlir", f"--pass-pipeline={rng.choice(LEVEL_PIPELINES[level])}"]
    label = f"{seed.name} {'+'.join(picked)} -> pto-{tool}"
    return label, {"tool": tool, "argv": argv, "files": {"kernel.mlir": {"text": text}}, "primary": "kernel.mlir"}


# ------------------------------------------------------------- semantic mutations
#
# A kernel is a small program of ops (data, so that it crosses to the worker and can be
# simplified); `emit_mlir` prints it at the pto level and `eval_numpy` is an independent
# float64 model of the same math, not the project's interpreter.

TT = tuple  # (shape, dtype): shape entries are ints or None (the token axis)


def mlir_type(t) -> str:
    shape, dtype = t
    return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in shape) + dtype + ">"


def fmt_float(v: float) -> str:
    return f"{v:.6e}"


def emit_op(op: dict, types: dict) -> str:
    k, res, a = op["op"], op["res"], op["args"]
    ins = ", ".join(mlir_type(types[x]) for x in a)
    outs = ", ".join(mlir_type(types[r]) for r in res)
    attrs = op.get("attrs") or {}
    attr = (" {" + ", ".join(f"{n} = {v}" for n, v in attrs.items()) + "}") if attrs else ""
    lhs = ", ".join("%" + r for r in res)
    opnds = ", ".join("%" + x for x in a)
    if k == "rms_norm":
        return f"  {lhs} = pto.rms_norm {opnds} eps = {fmt_float(op['eps'])}{attr} : {ins} -> {outs}"
    if k == "cast":
        return f"  {lhs} = pto.cast {opnds} {op['mode']}{attr} : {ins} -> {outs}"
    if k == "matmul":
        flags = "".join(f" {f}" for f in ("a_trans", "b_trans") if op.get(f))
        return f"  {lhs} = pto.matmul {opnds}{flags}{attr} : {ins} -> {outs}"
    if k in ("muls", "adds"):
        return f"  {lhs} = pto.{k} {opnds}, {fmt_float(op['scalar'])}{attr} : {ins} -> {outs}"
    if k == "reduce":
        return f"  {lhs} = pto.reduce {op['kind']} {opnds}{attr} : {ins} -> {outs}"
    if k == "reshape":
        return f"  {lhs} = pto.reshape {opnds} inplace{attr} : {ins} -> {outs}"
    return f"  {lhs} = pto.{k} {opnds}{attr} : {ins} -> {outs}"  # add, sub, mul, div, sqrt, quant, dequant


def emit_mlir(k: dict) -> str:
    types = {n: (tuple(s), d) for n, s, d, _ in k["args"]}
    for op in k["ops"]:
        types.update({r: (tuple(t[0]), t[1]) for r, t in zip(op["res"], op["types"], strict=True)})
    args = []
    for name, shape, dtype, cache in k["args"]:
        extra = " {pto.cache = #pto.cache<none_cacheable>}" if cache else ""
        args.append(f"%{name}: {mlir_type((shape, dtype))}{extra}")
    rets = ", ".join(mlir_type(types[r]) for r in k["rets"])
    fattrs = ", ".join(f"{n} = {v}" for n, v in k["func_attrs"].items())
    lines = [f"func.func @kernel({', '.join(args)}) -> ({rets})",
             f"    attributes {{{fattrs}}} {{" if fattrs else "    {"]
    lines += [emit_op(op, types) for op in k["ops"]]
    lines.append(f"  func.return {', '.join('%' + r for r in k['rets'])} : {rets}")
    lines.append("}")
    return "\n".join(lines) + "\n"


F32_MAX = float(np.finfo(np.float32).max)
NP_TYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "i8": np.int8, "i32": np.int32}


def to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Round a float64 value to `dtype` (nearest even), kept as float64 for the next op."""
    if dtype in ("i8", "i32"):
        return np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float64).astype(NP_TYPES[dtype]).astype(np.float64)


def eval_numpy(k: dict, inputs: list[np.ndarray]) -> list[np.ndarray]:
    env = {name: np.asarray(x).astype(np.float64) for (name, *_), x in zip(k["args"], inputs, strict=True)}
    with np.errstate(all="ignore"):
        for op in k["ops"]:
            a = [env[x] for x in op["args"]]
            kind, out_t = op["op"], op["types"][0]
            if kind == "rms_norm":  # in f32, as the hardware: x^2 may overflow to inf
                xf = a[0].astype(np.float32)
                ms = np.mean(xf * xf, axis=-1, keepdims=True, dtype=np.float32)
                y = (xf / np.sqrt(ms + np.float32(op["eps"]))).astype(np.float64)
                vals = [y * a[1] if len(a) > 1 else y]
            elif kind == "cast":
                vals = [a[0]]
            elif kind == "matmul":
                lhs = a[0].swapaxes(-1, -2) if op.get("a_trans") else a[0]
                rhs = a[1].swapaxes(-1, -2) if op.get("b_trans") else a[1]
                # Where a partial sum may pass f32's range, whether the hardware's f32
                # accumulator overflows depends on its summation order: no reference (NaN).
                order_dependent = np.abs(lhs) @ np.abs(rhs) > F32_MAX
                vals = [np.where(order_dependent, np.nan, lhs @ rhs)]
            elif kind == "quant":
                amax = np.max(np.abs(a[0]), axis=-1, keepdims=True).astype(np.float32)
                y = a[0].astype(np.float32) * np.float32(127) / amax  # in f32, as SK03.md's formula
                vals = [np.clip(np.rint(y), -128, 127), amax / np.float32(127)]
            elif kind == "dequant":  # in f32, as SK03.md's cast * scale * scale: a product may overflow
                prod = a[0].astype(np.float32) * a[1].astype(np.float32)
                vals = [(prod * a[2].reshape(1, -1).astype(np.float32) if len(a) > 2 else prod).astype(np.float64)]
            elif kind in ("muls", "adds"):
                vals = [a[0] * op["scalar"] if kind == "muls" else a[0] + op["scalar"]]
            elif kind in ("add", "sub", "mul", "div"):
                vals = [{"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[kind](a[0], a[1])]
            elif kind == "sqrt":
                vals = [np.sqrt(a[0])]
            elif kind == "reduce":
                vals = [np.mean(a[0], axis=-1, keepdims=True)]
            elif kind == "reshape":
                vals = [a[0].reshape([a[0].shape[0]] + list(out_t[0][1:]))]
            else:
                raise ValueError(kind)
            for r, t, v in zip(op["res"], op["types"], vals, strict=True):
                env[r] = to_dtype(v, t[1])
    return [env[r] for r in k["rets"]]


def make_inputs(k: dict, tokens: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = []
    for name, shape, dtype, _ in k["args"]:
        shp = tuple(tokens if d is None else d for d in shape)
        if dtype == "i8":
            x = rng.integers(-127, 128, shp).astype(np.int8)
        elif name.endswith("scale"):
            x = rng.uniform(0.001, 0.02, shp).astype(NP_TYPES[dtype])
        else:
            fan_in = shape[-1] if name.startswith("w") and len(shape) > 1 else 1
            x = (rng.standard_normal(shp) / math.sqrt(fan_in)).astype(NP_TYPES[dtype])
        xs.append(x)
    return xs


DIMS = [1, 3, 15, 16, 17, 32, 33, 64, 128, 256]
UNROLLS = [[1], [3, 1], [17, 5, 1], [128, 64, 1], [7], [2, 1], [16, 3], [33, 1], [64, 32, 16, 8, 4, 2, 1],
           [5, 5, 1], [1, 3], [256, 1], [15, 1], [4]]


def _cube_tile(rng) -> str:
    m0 = rng.choice([16, 32, 64, 128])
    k0 = rng.choice([16, 32, 64, 128, 256])
    n0 = rng.choice([16, 32, 64, 128, 256])
    ks = [k0, k0 * rng.choice([1, 2, 4])]
    if rng.random() < 0.2:
        ks.append(k0 * rng.choice([1, 2]))
    split = ", split_k" if rng.random() < 0.25 else ""
    return (f"#pto.cube_tile<m = [{m0}, {m0 * rng.choice([1, 2])}], k = [{', '.join(map(str, ks))}], "
            f"n = [{n0}, {n0 * rng.choice([1, 2])}]{split}>")


class KB:
    """Builds a semantic kernel as data: args, ops, results, hints."""

    def __init__(self):
        self.args: list = []
        self.ops: list = []
        self.n = 0

    def arg(self, name, shape, dtype, cache=False):
        self.args.append([name, list(shape), dtype, cache])
        return name

    def op(self, opname, args, types, **params):
        res = []
        for _ in types:
            self.n += 1
            res.append(f"v{self.n}")
        self.ops.append({"op": opname, "res": res, "args": list(args), "types": [[list(s), d] for s, d in types],
                         **params})
        return res if len(res) > 1 else res[0]


def gen_semantic_kernel(rng: random.Random) -> tuple[str, dict]:
    """One valid-but-unusual SK-03 kernel as data, and its form."""
    form = rng.choice(["standard", "standard", "c_v", "quant", "quant", "quant_scale_in", "epilogue", "plain",
                       "mhc"])
    kdim, ndim = rng.choice(DIMS), rng.choice(DIMS)
    if rng.random() < 0.15:
        kdim = rng.choice([512, 1024, 4096])
    b = KB()
    T = None
    hints: dict = {}
    b_trans = form.startswith("quant") or rng.random() < 0.7
    if form == "mhc":
        kdim, ndim = 16384, rng.choice([1, 3, 15, 17, 24, 33, 64])
        x = b.arg("x", [T, kdim], "bf16")
        w = b.arg("w", [ndim, kdim], "f32")
        xf = b.op("cast", [x], [([T, kdim], "f32")], mode="none")
        y = b.op("matmul", [xf, w], [([T, ndim], "f32")], b_trans=True)
        sq = b.op("mul", [xf, xf], [([T, kdim], "f32")])
        ms = b.op("reduce", [sq], [([T, 1], "f32")], kind="mean")
        e = b.op("adds", [ms], [([T, 1], "f32")], scalar=1e-6)
        r = b.op("sqrt", [e], [([T, 1], "f32")])
        out = b.op("div", [y, r], [([T, ndim], "f32")])
    elif form in ("quant", "quant_scale_in"):
        w = b.arg("w", [ndim, kdim], "i8", cache=rng.random() < 0.5)
        if form == "quant":
            x = b.arg("x", [T, kdim], "bf16")
            g = b.arg("gamma", [kdim], "bf16") if rng.random() < 0.7 else None
            n = b.op("rms_norm", [x] + ([g] if g else []), [([T, kdim], "f32")], eps=1e-6)
            q, s = b.op("quant", [n], [([T, kdim], "i8"), ([T, 1], "f32")])
        else:  # the activation's per-token scale is an input, as the real indexer kernel has it
            q = b.arg("xq", [T, kdim], "i8")
            s = b.arg("x_scale", [T, 1], "f32")
        ws = b.arg("w_scale", [ndim, 1], "f32") if rng.random() < 0.8 else None
        acc = b.op("matmul", [q, w], [([T, ndim], "i32")], b_trans=True)
        d = b.op("dequant", [acc, s] + ([ws] if ws else []), [([T, ndim], "f32")])
        out = b.op("cast", [d], [([T, ndim], "bf16")], mode="rint")
    else:
        x = b.arg("x", [T, kdim], "bf16")
        wshape = [ndim, kdim] if b_trans else [kdim, ndim]
        if form == "c_v":
            w = b.arg("w", wshape, "bf16", cache=rng.random() < 0.5)
            g = b.arg("gamma", [ndim], "bf16")
            y = b.op("matmul", [x, w], [([T, ndim], rng.choice(["f32", "bf16"]))], b_trans=b_trans)
            n = b.op("rms_norm", [y, g], [([T, ndim], "f32")], eps=rng.choice([1e-6, 1e-5]))
            out = b.op("cast", [n], [([T, ndim], "bf16")], mode="rint")
        else:
            g = b.arg("gamma", [kdim], "bf16") if form != "plain" and rng.random() < 0.8 else None
            w = b.arg("w", wshape, "bf16", cache=rng.random() < 0.5)
            if form == "plain":
                nb = x
            else:
                n = b.op("rms_norm", [x] + ([g] if g else []), [([T, kdim], "f32")], eps=rng.choice([1e-6, 1e-5, 1.0]))
                nb = b.op("cast", [n], [([T, kdim], "bf16")], mode="rint")
            mm_out = rng.choice(["f32", "f32", "bf16"]) if form != "epilogue" else "f32"
            y = b.op("matmul", [nb, w], [([T, ndim], mm_out)], b_trans=b_trans)
            if form == "epilogue":
                kind = rng.choice(["muls", "adds", "bias", "rowscale"])
                if kind in ("muls", "adds"):
                    y = b.op(kind, [y], [([T, ndim], "f32")], scalar=rng.choice([0.5, -2.0, 0.125]))
                elif kind == "bias":
                    bias = b.arg("bias", [ndim], "f32")
                    y = b.op("add", [y, bias], [([T, ndim], "f32")])
                else:
                    sc = b.arg("row_scale", [T, 1], "f32")
                    y = b.op("mul", [y, sc], [([T, ndim], "f32")])
            out = y if mm_out == "bf16" or rng.random() < 0.2 else b.op("cast", [y], [([T, ndim], "bf16")], mode="rint")
    # Hints, each droppable when a finding is simplified.
    if rng.random() < 0.6:
        hints["unroll"] = rng.choice(UNROLLS)
    if rng.random() < 0.4:
        hints["cube_tile"] = _cube_tile(rng)
    if rng.random() < 0.3 and form != "mhc":
        rows = rng.choice([1, 2, 4, 8])
        cols = rng.choice([d for d in (kdim, kdim // 2, kdim // 4, 16) if d > 0])
        hints["vec_tile"] = [rows, cols]
    if rng.random() < 0.2:
        hints["target"] = "ascend950"
    if rng.random() < 0.2:
        hints["options"] = rng.choice(['{cube_l1_reuse_setting = {"-1" = 2, "1" = 1}}',
                                       '{vec_nbuffer_setting = {"0" = 2}}', '{cube_nbuffer_setting = {"-1" = 4}}',
                                       '{cube_l1_reuse_setting = {"-1" = 3}, vec_nbuffer_setting = {"0" = 1}}'])
    if rng.random() < 0.1:
        hints["stitch"] = rng.choice([1, 2, 3])
    kern = {"args": b.args, "ops": b.ops, "rets": [out], "hints": hints, "form": form}
    return form, kern


def apply_hints(kern: dict) -> dict:
    """The kernel with its hints as attributes (on the function, the matmul, the first vector op)."""
    k = json.loads(json.dumps(kern))
    h = k["hints"]
    fa = {"pto.target": f'"{h.get("target", "ascend910b1")}"'}
    if "unroll" in h:
        fa["pto.unroll"] = f"array<i64: {', '.join(map(str, h['unroll']))}>"
    if "options" in h:
        fa["pto.options"] = h["options"]
    if "stitch" in h:
        fa["pto.runtime"] = f"{{stitch_function_max_num = {h['stitch']}}}"
    k["func_attrs"] = fa
    for op in k["ops"]:
        if op["op"] == "matmul" and "cube_tile" in h:
            op["attrs"] = {"pto.cube_tile": h["cube_tile"]}
    vec = next((op for op in k["ops"] if op["op"] in ("rms_norm", "quant", "cast")), None)
    if vec is not None and "vec_tile" in h:
        op_attrs = vec.setdefault("attrs", {})
        op_attrs["pto.vec_tile"] = f"array<i64: {', '.join(map(str, h['vec_tile']))}>"
    return k


def semantic_payload(kern: dict, tokens: int, seed: int, via: str) -> dict:
    text = emit_mlir(apply_hints(kern))
    files: dict[str, dict[str, object]] = {"kernel.mlir": {"text": text}}
    argv = ["{d}/kernel.mlir"]
    for i, (name, *_rest) in enumerate(kern["args"]):
        files[f"{name}.npy"] = {"array": {"kernel": kern, "tokens": tokens, "seed": seed, "index": i}}
        argv += ["--input", f"{{d}}/{name}.npy"]
    argv += ["--golden", "--json", "--output-dir", "{d}/out"]
    if via == "pipeline-flag":
        argv += ["--pass-pipeline", "pto-sk03-pipeline"]
    return {"tool": "run", "argv": argv, "files": files, "primary": "kernel.mlir", "semantic": kern,
            "tokens": tokens, "seed": seed}


def gen_semantic(rng: random.Random, corpus) -> tuple[str, dict]:
    form, kern = gen_semantic_kernel(rng)
    tokens = rng.choice([1, 2, 3, 15, 16, 17, 33, 64, 130] + ([0] if rng.random() < 0.1 else []))
    if form == "mhc" or kern["args"][0][1][-1] >= 1024:
        tokens = min(tokens, 17)
    h = kern["hints"]
    label = f"{form} K={kern['args'][0][1][-1]} t={tokens} " + " ".join(f"{k}={v}" for k, v in sorted(h.items()))
    return label, semantic_payload(kern, tokens, rng.randrange(1 << 16), rng.choice(["default", "pipeline-flag"]))


# ----------------------------------------------------------------- bad .npy files


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def npy_header(header: str, data: bytes = b"", version: bytes = b"\x01\x00") -> bytes:
    h = header.encode("latin1")
    return b"\x93NUMPY" + version + struct.pack("<H", len(h)) + h + data


def bad_npy(rng: random.Random, good: np.ndarray) -> tuple[str, bytes]:
    """One hostile variant of a good input array, as (what, file bytes)."""
    shp = good.shape
    variants = {
        "f32 for bf16": lambda: npy_bytes(good.astype(np.float32)),
        "f64": lambda: npy_bytes(good.astype(np.float64)),
        "i8": lambda: npy_bytes(good.astype(np.float32).astype(np.int8)),
        "u8": lambda: npy_bytes(np.abs(good.astype(np.float32)).astype(np.uint8)),
        "bool": lambda: npy_bytes(good.astype(np.float32) > 0),
        "complex": lambda: npy_bytes(good.astype(np.complex64)),
        "i16": lambda: npy_bytes(good.astype(np.float32).astype(np.int16)),
        "f16": lambda: npy_bytes(good.astype(np.float16)),
        "structured": lambda: npy_bytes(np.zeros(shp, dtype=[("a", "<f4"), ("b", "<i2")])),
        "V2 raw": lambda: npy_bytes(np.zeros(shp, dtype="V2")),
        "extra dim": lambda: npy_bytes(good.reshape((1,) + shp)),
        "scalar": lambda: npy_bytes(np.array(good.flat[0] if good.size else 0, dtype=good.dtype)),
        "0 tokens": lambda: npy_bytes(good[:0]),
        "transposed": lambda: npy_bytes(np.ascontiguousarray(good.T)),
        "fortran": lambda: npy_bytes(np.asfortranarray(good)),
        "flattened": lambda: npy_bytes(good.reshape(-1)),
        "one more row": lambda: npy_bytes(np.concatenate([good, good[:1]]) if good.ndim and len(good) else good),
        "NaN": lambda: npy_bytes(np.full(shp, np.nan, dtype=good.dtype) if good.dtype.kind == "f" or
                                 good.dtype == ml_dtypes.bfloat16 else good),
        "Inf": lambda: npy_bytes(np.full(shp, np.inf, dtype=np.float32).astype(good.dtype)
                                 if good.dtype.kind != "i" else good),
        "max value": lambda: npy_bytes(np.full(shp, 3.0e38, dtype=np.float32).astype(good.dtype)
                                       if good.dtype.kind != "i" else np.full(shp, 127, good.dtype)),
        "zeros": lambda: npy_bytes(np.zeros_like(good)),
        "empty file": lambda: b"",
        "magic only": lambda: b"\x93NUMPY",
        "truncated data": lambda: npy_bytes(good)[:-max(1, good.nbytes // 2)],
        "truncated header": lambda: npy_bytes(good)[:rng.randrange(8, 60)],
        "random bytes": lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))),
        "text": lambda: b"1 2 3\n4 5 6\n",
        "npz": lambda: _npz(good),
        "pickle": lambda: npy_header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }".ljust(118) + "\n",
                                     b"\x80\x04N."),
        "bad header dict": lambda: npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3 }".ljust(118)
                                              + "\n"),
        "unterminated header": lambda: npy_header("{'descr': '<f4\n"),
        "header not a dict": lambda: npy_header("[1, 2, 3]".ljust(118) + "\n"),
        "huge declared shape": lambda: npy_header(
            f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({1 << 40}, {shp[-1] if shp else 1}), }}"
            .ljust(118) + "\n", b"\0" * 64),
        "negative shape": lambda: npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }"
                                             .ljust(118) + "\n"),
        "version 9": lambda: npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }".ljust(118)
                                        + "\n", b"\0" * 4, b"\x09\x00"),
        "header length huge": lambda: b"\x93NUMPY\x01\x00\xff\xff{'descr'",
        "unknown descr": lambda: npy_header("{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }".ljust(118)
                                            + "\n", b"\0" * 8),
        "deep header": lambda: npy_header("{'descr': " + "[" * 500 + "]" * 500 + "}\n"),
        "big-endian": lambda: npy_bytes(good.astype(np.float32).astype(">f4")) if good.dtype != np.int8
        else npy_bytes(good.astype(">i2")),
    }
    what = rng.choice(sorted(variants))
    return what, variants[what]()


def _npz(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, a=arr)
    return buf.getvalue()


def gen_npy(rng: random.Random, corpus) -> tuple[str, dict]:
    """A small semantic kernel whose inputs are fine but one (or its place) is hostile."""
    _, kern = gen_semantic_kernel(rng)
    kern["hints"] = {}
    if kern["args"][0][1][-1] > 256:  # keep the arrays small: this kind is about the files
        return gen_npy(rng, corpus)
    tokens = rng.choice([1, 3, 17])
    p = semantic_payload(kern, tokens, rng.randrange(1 << 16), "default")
    names = [a[0] for a in kern["args"]]
    r = rng.random()
    if r < 0.75:
        victim = rng.randrange(len(names))
        good = make_inputs(kern, tokens, p["seed"])[victim]
        what, data = bad_npy(rng, good)
        p["files"][f"{names[victim]}.npy"] = {"bytes": data}
        label = f"{kern['form']} {names[victim]}: {what}"
    else:  # the file itself is not a plain file
        what = rng.choice(["missing", "directory", "the kernel", "duplicate", "one too few", "one too many",
                           "/dev/null", "symlink to kernel", "dangling symlink", "unreadable"])
        label = f"{kern['form']} input: {what}"
        inputs = [i for i, a in enumerate(p["argv"]) if a == "--input"]
        i = rng.choice(inputs) + 1
        if what == "missing":
            p["argv"][i] = "{d}/nope.npy"
        elif what == "directory":
            p["argv"][i] = "{d}"
        elif what == "the kernel":
            p["argv"][i] = "{d}/kernel.mlir"
        elif what == "duplicate":
            p["argv"][i] = p["argv"][inputs[0] + 1]
        elif what == "one too few":
            del p["argv"][i - 1:i + 1]
        elif what == "one too many":
            p["argv"][i:i] = [p["argv"][i], "--input"]
        elif what == "/dev/null":
            p["argv"][i] = "/dev/null"
        elif what == "symlink to kernel":
            p["files"]["link.npy"] = {"symlink": "kernel.mlir"}
            p["argv"][i] = "{d}/link.npy"
        elif what == "dangling symlink":
            p["files"]["link.npy"] = {"symlink": "nowhere.npy"}
            p["argv"][i] = "{d}/link.npy"
        else:
            p["files"]["locked.npy"] = {"bytes": b"", "mode": 0}
            p["argv"][i] = "{d}/locked.npy"
    if rng.random() < 0.2:
        p["argv"] += ["--tokens", str(rng.choice([0, 1, tokens, tokens + 1, -1]))]
    return label, p


# -------------------------------------------------------------------- bad flags

RUN_FLAGS = {
    "--tokens": ["-1", "0", "1", "3", "2147483648", "9223372036854775808", "18446744073709551616", "abc", "1e3",
                 "", " 3", "0x10"],
    "--seed": ["-1", "4294967296", "18446744073709551616", "x", "", "7"],
    "--l2-size": ["0", "-1", "1", "512", "4096", "1073741824", "1073741825", "1099511627776",
                  "18446744073709551616", "x", ""],
    "--max-memory": ["0", "-1", "1", "1000", str(1 << 70), "x", ""],
    "--target": ["", " ", "nope", "ascend950", "../targets/ascend910b1", "ascend910b1.toml", "/etc/passwd",
                 "ASCEND910B1", "ascend910b1\n"],
    "--trace": ["", "{d}/kernel.mlir", "{d}/x.npy", "{d}", "/nonexistent/dir/t.json", "{d}/t.json", "{d}/out"],
    "--output-dir": ["", "{d}", "{d}/kernel.mlir", "/proc/pto-fuzz", "{d}/out", "{d}/x.npy"],
    "--pass-pipeline": ["", "cse", "pto-classify-skeleton", "tile-to-npu", "bogus", "pto-sk03-pipeline{factors=0}",
                        "pto-sk03-pipeline{factors=-1}", "pto-sk03-pipeline{factors=1,2,3}",
                        "pto-sk03-pipeline{target=nope}", "builtin.module(", "pto-sk03-pipeline{",
                        "pto-sk03-pipeline{factors=99999999999999999999}", "pto-sk03-pipeline{bogus=1}",
                        "pto-to-tile", "builtin.module(pto-sk03-pipeline,pto-sk03-pipeline)",
                        "pto-sk03-pipeline{target=ascend950}", "pto-sk03-pipeline{factors=}"],
    "--input": ["{d}/x.npy", "{d}/nope.npy", "{d}", "{d}/kernel.mlir", ""],
}
RUN_SWITCHES = ["--random-inputs", "--golden", "--json", "--bogus", "-x", "--tokens=", "--help"]
OPT_FLAGS = {
    "--pass-pipeline": RUN_FLAGS["--pass-pipeline"] + ["builtin.module(cse)", "test-pass-failure"],
    "-p": ["cse", "pto-sk03-pipeline", "tile-unroll{factors=0}", "", ",", "cse,,dce", "tile-assign-shapes{target=}"],
    "-o": ["{d}/out.mlir", "{d}", "/nonexistent/dir/o.mlir", ""],
    "--mlir-print-ir-tree-dir": ["{d}/tree", "{d}/kernel.mlir", ""],
    "--mlir-pass-pipeline-crash-reproducer": ["{d}/repro.mlir", "{d}/kernel.mlir", "{d}", ""],
    "--target": ["mlir", "x"],
    "--frontend": ["x"],
}
OPT_SWITCHES = ["--split-input-file", "--verify-diagnostics", "--mlir-print-ir-after-all",
                "--mlir-print-ir-before-all", "--mlir-print-op-generic", "--print-op-generic", "--run-reproducer",
                "--list-passes", "--version", "--allow-unregistered-dialect", "--bogus", "--shrink",
                "--parsing-diagnostics", "-h"]
FLAG_KERNELS = ["examples/sk03_standard.mlir", "examples/levels/sk03_standard.tile.mlir",
                "examples/levels/sk03_standard.npu.mlir", "examples/hc_pre.mlir"]


def gen_flags(rng: random.Random, corpus) -> tuple[str, dict]:
    tool = rng.choice(["run", "run", "opt"])
    if rng.random() < 0.5:  # a small kernel keeps the accepted runs fast
        _, kern = gen_semantic_kernel(rng)
        while kern["args"][0][1][-1] > 256:
            _, kern = gen_semantic_kernel(rng)
        kern["hints"] = {}
        kernel_text = emit_mlir(apply_hints(kern))
        kname = "semantic"
    else:
        kname = rng.choice(FLAG_KERNELS)
        kernel_text = (PKG / kname).read_text()
    files = {"kernel.mlir": {"text": kernel_text}, "x.npy": {"bytes": npy_bytes(np.zeros((2, 4), np.float32))}}
    argv = ["{d}/kernel.mlir"]
    if tool == "run":
        argv += ["--random-inputs", "--tokens", str(rng.choice([1, 2, 3]))]
    flags, switches = (RUN_FLAGS, RUN_SWITCHES) if tool == "run" else (OPT_FLAGS, OPT_SWITCHES)
    changed = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if rng.random() < 0.75:
            f = rng.choice(sorted(flags))
            v = rng.choice(flags[f])
            argv += [f"{f}={v}"] if rng.random() < 0.3 else [f, v]
            changed.append(f"{f} {v!r}")
        else:
            s = rng.choice(switches)
            argv.append(s)
            changed.append(s)
    r = rng.random()
    if r < 0.05:  # the kernel argument itself
        argv[0] = rng.choice(["{d}/nope.mlir", "{d}", "{d}/x.npy", "", "-", "/dev/null"])
        changed.append(f"kernel {argv[0]!r}")
    elif r < 0.08:
        argv.insert(0, rng.choice(["--", "-", "{d}/kernel.mlir"]))
        changed.append(f"extra positional {argv[0]!r}")
    return f"pto-{tool} [{kname}] {' '.join(changed)}", {"tool": tool, "argv": argv, "files": files,
                                                         "primary": "kernel.mlir"}


# ------------------------------------------------------------------ API misuse
#
# A standard program with slots; a case puts a hostile value in one or two slots, or
# inserts one hostile call. The program text is the reproducer.

HOSTILE = ["None", '"a"', "3.5", "-1", "0", "[]", "[None]", '["a"]', "{}", "object()", "float('nan')", "2**64",
           "True", "np.int64(3)", "(1, 2)", 'b"x"', "[1.5, 2]", "[-4]", "[0, 0]", '""', "[[1]]", "lambda: 0",
           "1e300", "-2**63"]

BUILDER_PROGRAM = [
    ("k = pto.Kernel({name}, target={target}, unroll={unroll}, options={options})",
     {"name": '"f"', "target": '"ascend910b1"', "unroll": "None", "options": "None"}),
    ("x = k.arg({xname}, {xshape}, {xdtype}, cache={xcache})",
     {"xname": '"x"', "xshape": "[None, 64]", "xdtype": '"bf16"', "xcache": "None"}),
    ('g = k.arg("g", {gshape}, "bf16")', {"gshape": "[64]"}),
    ('w = k.arg("w", [32, 64], "bf16", cache={wcache})', {"wcache": '"none_cacheable"'}),
    ("n = pto.rms_norm(x, {gamma}, eps={eps}, label={label}, vec_tile={vec_tile})",
     {"gamma": "g", "eps": "1e-6", "label": '"rmsnorm"', "vec_tile": "None"}),
    ("nb = pto.cast(n, {dtype}, round={round})", {"dtype": '"bf16"', "round": "None"}),
    ("y = pto.matmul(nb, {wv}, b_trans={btrans}, cube_tile={cube_tile})",
     {"wv": "w", "btrans": "True", "cube_tile": "None"}),
    ("k.ret({ret})", {"ret": 'pto.cast(y, "bf16")'}),
    ("m = k.module()", {}),
    ("c = pto.compile(m, pipeline={pipeline}, target={ctarget})", {"pipeline": "None", "ctarget": "None"}),
    ("r = pto.run(c, {inputs}, tokens={tokens}, seed={seed}, level={level}, golden={golden}, l2_size={l2}, "
     "trace={trace})",
     {"inputs": "None", "tokens": "3", "seed": "0", "level": '"npu"', "golden": "True", "l2": "None",
      "trace": "None"}),
    ("v = pto.check({got}, {want})", {"got": "r.outputs[0]", "want": "r.outputs[0]"}),
    ("t = c.text({level_text})", {"level_text": '"npu"'}),
]

TRACE_PROGRAM = [
    ("def kern(x, g, w, out):", {}),
    ("    pto.set_cache_policy(w, {tcache})", {"tcache": '"none_cacheable"'}),
    ("    for idx, p in pto.loop_unroll({start}, {stop}, {step}, unroll_list={ulist}):",
     {"start": "0", "stop": "None", "step": "1", "ulist": "[4, 1]"}),
    ("        xt = pto.view(x, {vshape}, {voff})", {"vshape": "[p, 64]", "voff": "[idx, 0]"}),
    ("        pto.set_semantic_label({slabel})", {"slabel": '"rmsnorm"'}),
    ("        pto.set_vec_tile_shapes({vts})", {"vts": "2, 64"}),
    ('        nb = pto.cast(pto.rms_norm(xt, g), "bf16")', {}),
    ("        pto.set_cube_tile_shapes({ctm}, {ctk}, {ctn})", {"ctm": "[16, 16]", "ctk": "[64, 64]",
                                                               "ctn": "[32, 32]"}),
    ("        y = pto.matmul(nb, w, b_trans=True)", {}),
    ('        pto.assemble(pto.cast(y, "bf16"), {aoff}, out)', {"aoff": "[idx, 0]"}),
    ("m = pto.trace(kern, target={ttarget}, x=pto.arg({txshape}, \"bf16\"), g=pto.arg([64], \"bf16\"), "
     "w=pto.arg([32, 64], \"bf16\"), out=pto.arg([None, 32], \"bf16\"))",
     {"ttarget": '"ascend910b1"', "txshape": "[None, 64]"}),
    ("c = pto.compile(m)", {}),
    ("r = pto.run(c, tokens={ttokens}, golden=True)", {"ttokens": "5"}),
]

# Plausible wrong values per slot, beside the generic hostile ones.
SLOT_VALUES = {
    "target": ['"nope"', '""', '"ascend950"'], "unroll": ["[0]", "[3, 1]", '["a"]', "[]", "[-1]", "[2**40]"],
    "options": ["5", '{"bogus": {0: 1}}', '{"vec_nbuffer_setting": {0: "a"}}', '{"vec_nbuffer_setting": 3}'],
    "xshape": ["[None, -4]", "[None]", "[None, None]", '"3x4"', "[None, 64.0]", "[None, 0]", "[4, 64]"],
    "xdtype": ['"float32"', '"i4"', '"f64"', "np.float32", '"BF16"'], "xcache": ['"sometimes"', "True"],
    "gshape": ["[65]", "[]", "[1, 64]"], "eps": ['"a"', "-1.0", "float('inf')", "1e39"],
    "label": ["123", '""', '"a\\nb"', '"\\""'], "vec_tile": ["[4]", '["a", 64]', "[0, 64]", "[4, 64, 1]"],
    "dtype": ['"i8"', '"f64"', '"x"'], "round": ['"up"', '"rint"', "1"], "wv": ["x", "g", "nb", "n"],
    "btrans": ['"no"', "None"], "cube_tile": ["pto.cube_tile([16, 16], [64, 64], [32, 32])",
                                             "pto.cube_tile([16], [64], [32])", "pto.cube_tile(['a'], [1], [1])",
                                             "pto.cube_tile([16, 24], [64, 64], [32, 32])", "(16, 64, 32)"],
    "ret": ["x", "3", "n", "y", "pto.cast(y, 'bf16'), x"], "pipeline": ['"bogus"', '"cse"', '""',
                                                                        '"pto-sk03-pipeline{factors=0}"'],
    "ctarget": ['"nope"'], "inputs": ["[np.zeros((3, 64)), np.zeros(64), np.zeros((32, 64))]", "[1, 2, 3]",
                                      '{"x": np.zeros((3, 64))}', "[]", "np.zeros(3)"],
    "tokens": ["-1", '"3"', "0", "2**40", "3.5"], "seed": ["-1", "2**70"], "level": ['"tile"', '"pto"', '"x"'],
    "l2": ["0", "-1", "2**40", "513"], "trace": ['"/nonexistent/t.json"', '"."', '""'],
    "got": ["[1, 2]", "np.zeros((2, 2))", "r.outputs[0].astype(np.float64)", "r.outputs[0][:1]"],
    "want": ["np.zeros((5, 5))", "[1.0]", "r.outputs[0].astype(np.float64)"],
    "level_text": ['"bogus"', "0"], "tcache": ['"x"'], "start": ["1"], "stop": ["3"], "step": ["2"],
    "ulist": ['["a"]', "[]", "[0]", "[1.5]"], "vshape": ["[p, 65]", "[idx, 64]"], "voff": ["[0, 0]", "[idx, 1]"],
    "slabel": ["3"], "vts": ['"a"', "0, 0", ""], "ctm": ["[16]"], "ctk": ['"a"'], "ctn": ["[0, 0]"],
    "aoff": ["[0, 0]", "[idx, 3]"], "ttarget": ['"nope"'], "txshape": ["[None, 63]", "[4, 64]"],
    "ttokens": ["0", "-3"],
}
EXTRA_CALLS = ["pto.muls(x, {bad})", "pto.adds(x, {bad})", "pto.reduce(x, {bad})", "pto.quant({bad})",
               "pto.dequant({bad}, {bad})", "pto.reshape(x, {bad})", "x + {bad}", "x * {bad}", "x / {bad}",
               "pto.add(x, {bad})", "pto.cube_tile({bad}, [16, 16], [16, 16])", "pto.set_vec_tile_shapes({bad})",
               "pto.view(x, {bad}, {bad})", "next(pto.loop_unroll(0, None, 1, unroll_list={bad}))",
               "pto.set_cache_policy(x, {bad})", "pto.set_pass_options(x={bad})", "pto.assemble(x, {bad}, w)",
               "pto.sqrt({bad})", "pto.arg({bad}, 'bf16')", "pto.trace({bad})", "pto.compile({bad})",
               "pto.run({bad}, tokens=3)", "pto.check({bad}, {bad})", "pto.Kernel({bad}).module()",
               "k.arg('x', [None, 64], 'bf16')", "pto.rms_norm(x, eps={bad}, out_dtype={bad})",
               "pto.cast(x, 'f32', sat={bad})", "pto.matmul(x, w, out_dtype={bad})",
               "pto.matmul(x, pto.Kernel('other').arg('w', [32, 64], 'bf16'), b_trans=True)",
               "pto.dequant(y, x)", "k.ret({bad})", "pto.reduce(x, 'sum', vec_tile={bad})"]


def gen_api(rng: random.Random, corpus) -> tuple[str, dict]:
    program = BUILDER_PROGRAM if rng.random() < 0.75 else TRACE_PROGRAM
    slots = [s for _, d in program for s in d]
    values = {s: d[s] for _, d in program for s in d}
    changed = []
    if rng.random() < 0.75:
        for s in rng.sample(slots, rng.choice([1, 1, 1, 2])):
            pool = SLOT_VALUES.get(s, []) * 2 + HOSTILE
            values[s] = rng.choice(pool)
            changed.append(f"{s}={values[s]}")
    lines = [tmpl.format(**values) for tmpl, _ in program]
    if not changed or rng.random() < 0.3:
        call = rng.choice(EXTRA_CALLS)
        stmt = call.format(bad=rng.choice(HOSTILE))
        at = rng.randrange(4, 10) if program is BUILDER_PROGRAM else rng.randrange(4, 10)
        indent = ""
        if program is TRACE_PROGRAM and at < 10:
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines.insert(at, indent + stmt)
        changed.append(stmt)
    if rng.random() < 0.5 and program is BUILDER_PROGRAM:  # half the programs stop after building
        lines = [ln for ln in lines if not ln.startswith(("c = ", "r = ", "v = ", "t = "))]
    code = "import numpy as np\nimport ml_dtypes\nimport pto\n" + "\n".join(lines) + "\n"
    return "api " + "; ".join(changed), {"api": code, "primary": "api"}


GENERATORS = {"text": gen_text, "semantic": gen_semantic, "npy": gen_npy, "flags": gen_flags, "api": gen_api}


def make_case(seed: int, index: int, kind: str, corpus: list[Seed], timeout: float) -> Case:
    label, payload = GENERATORS[kind](case_rng(seed, index, kind), corpus)
    # A semantic case is a valid kernel that runs: slower than a rejection, which is what
    # the 10 s bar is about (a K = 16384 mhc kernel on small tiles runs for seconds).
    return Case(index, kind, label, payload, timeout * (3 if kind == "semantic" else 1))


# ======================================================================= worker side


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
    where = next((frame_key(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in stack
                  if is_project(f.f_code.co_filename)), "")
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


TOL = {"bf16": (1e-4, 0.0078125), "f16": (1e-4, 0.0009765625), "f32": (1e-4, 1e-4), "i8": (0, 0.005),
       "i32": (0, 0)}


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
        inputs -= {os.path.relpath(os.path.realpath(b), os.path.realpath(d))
                   for a, b in itertools.pairwise(argv) if a == "-o" and b}
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


class Pool:
    """Forked workers; a case that does not answer within timeout + grace is a hang and
    its worker is killed and replaced."""

    def __init__(self, jobs: int, tmp_root: str, mem_limit: int, grace: float = 5.0):
        self.ctx = mp.get_context("fork")
        self.tmp_root, self.mem_limit, self.grace = tmp_root, mem_limit, grace
        self.workers = [self._spawn() for _ in range(max(1, jobs))]

    def _spawn(self) -> dict:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=worker_main, args=(child, self.tmp_root, self.mem_limit), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "case": None, "deadline": 0.0, "start": 0.0}

    def _replace(self, w: dict) -> None:
        if w["proc"].is_alive():
            w["proc"].kill()
        w["proc"].join(5)
        w["conn"].close()
        w.update(self._spawn())

    def run(self, cases):
        """Yield a Result per case, in completion order."""
        todo = list(reversed(list(cases)))
        while todo or any(w["case"] is not None for w in self.workers):
            for w in self.workers:
                if w["case"] is None and todo:
                    case = todo.pop()
                    try:
                        w["conn"].send(case)
                    except (BrokenPipeError, OSError):
                        self._replace(w)
                        w["conn"].send(case)
                    w.update(case=case, start=time.perf_counter(),
                             deadline=time.perf_counter() + case.timeout + self.grace)
            busy = [w for w in self.workers if w["case"] is not None]
            timeout = max(0.0, min(w["deadline"] for w in busy) - time.perf_counter())
            ready = mp_wait([w["conn"] for w in busy], timeout)
            for w in busy:
                case = w["case"]
                if w["conn"] in ready:
                    try:
                        res = w["conn"].recv()
                    except (EOFError, OSError):
                        code = w["proc"].exitcode if not w["proc"].is_alive() else None
                        w["proc"].join(1)
                        code = w["proc"].exitcode
                        res = Result(case.id, case.kind, case.label, "internal", secs=time.perf_counter() - w["start"],
                                     sig=f"the process died (exit {code})",
                                     detail=f"worker exit code {code} (a signal if negative; -9: the OOM killer)")
                        self._replace(w)
                    else:
                        if needs_fresh_worker(res):
                            self._replace(w)
                    w["case"] = None
                    yield res
                elif time.perf_counter() > w["deadline"]:
                    self._replace(w)
                    w["case"] = None
                    yield Result(case.id, case.kind, case.label, "hang", secs=case.timeout + self.grace,
                                 sig="hang (killed: no answer to the alarm, stuck outside Python)",
                                 frame="<killed>")

    def run_one(self, case: Case) -> Result:
        return next(iter(self.run([case])))

    def close(self) -> None:
        for w in self.workers:
            try:
                w["conn"].send(None)
            except (BrokenPipeError, OSError):
                pass
        for w in self.workers:
            w["proc"].join(5)
            if w["proc"].is_alive():
                w["proc"].kill()


# ----------------------------------------------------------------------- reduction


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
        chunks = [units[i:i + size] for i in range(0, len(units), size)]
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
        if t < tokens and same(Case(case.id, case.kind, case.label, semantic_payload(kern, t, seed, via),
                                    case.timeout)):
            tokens = t
            break
    return Case(case.id, case.kind, case.label, semantic_payload(kern, tokens, seed, via), case.timeout)


def write_reproducer(out: Path, n: int, case: Case, res: Result, count: int, first: Result,
                     tests: int) -> Path:
    d = out / "findings" / f"{n:03d}-{res.outcome}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    p = case.payload
    if "api" in p:
        (d / "repro.py").write_text(p["api"])
        cmd = f"python {d / 'repro.py'}"
    else:
        materialize(p["files"], str(d))
        tool = "pto-run" if p["tool"] == "run" else "pto-opt"
        cmd = f"cd {d} && {tool} " + " ".join(_shq(a) for a in subst(p["argv"], "."))
        (d / "repro.sh").write_text("#!/bin/sh\n" + cmd + "\n")
    known = known_label(res.sig + " " + res.detail)
    (d / "README.txt").write_text(
        f"signature: {res.sig}\noutcome:   {res.outcome}\nframe:     {res.frame or '-'}\n"
        f"known:     {known or '-'}\nseen:      {count} cases (first: case {first.id}, {first.label})\n"
        f"reduced:   {tests} test runs\nrun:       {cmd}\n\nwhat the reduced case printed:\n{res.detail}\n")
    return d


def _shq(a: str) -> str:
    return a if re.fullmatch(r"[\w./=,:{}+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def known_label(text: str) -> str:
    return next((label for pat, label in KNOWN if re.search(pat, text)), "")


# ------------------------------------------------------------------------- summary


def summary_table(results: list[Result], kinds: list[str], wall: float) -> str:
    head = f"{'kind':10}{'cases':>7}" + "".join(f"{o:>10}" for o in OUTCOMES) + f"{'distinct':>9}{'cases/s':>9}"
    rows = [head, "-" * len(head)]
    total: Counter[str] = Counter()
    for kind in [*kinds, "all"]:
        rs = [r for r in results if kind in ("all", r.kind)]
        c = Counter(r.outcome for r in rs)
        distinct = len({r.sig for r in rs if r.outcome in BAD})
        secs = sum(r.secs for r in rs)
        rate = len(rs) / secs if secs else 0.0
        if kind == "all":
            rows.append("-" * len(head))
            rate = len(rs) / wall if wall else 0.0
        rows.append(f"{kind:10}{len(rs):>7}" + "".join(f"{c[o]:>10}" for o in OUTCOMES) + f"{distinct:>9}{rate:>9.1f}")
        total += c
    notes = Counter(n for r in results for n in r.notes)
    if notes:
        rows.append("")
        rows += [f"note: {n}: {k} cases" for n, k in notes.most_common()]
    return "\n".join(rows)


# ---------------------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="bench/fuzz.py", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(KINDS))
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
    corpus = load_corpus()
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
            findings.append({"sig": sig, "outcome": first.outcome, "count": len(rs), "frame": res.frame,
                             "known": known_label(sig + " " + first.detail), "dir": str(path),
                             "text": primary_text(case), "detail": res.detail, "label": first.label})
            log(f"  finding {n}: {sig} ({len(rs)} cases) -> {path}")
    finally:
        pool.close()
        shutil.rmtree(tmp_root, ignore_errors=True)
    inputs_ok = tree_digest(corpus_files) == before
    table = summary_table(results, a.kinds, wall)
    text = (f"pto-fuzz: {a.cases} cases, seed {a.seed}, kinds {','.join(a.kinds)}, jobs {a.jobs}, "
            f"timeout {a.timeout} s: {wall:.0f} s\n\n{table}\n\nrepository corpus byte-identical afterwards: "
            f"{'yes' if inputs_ok else 'NO'}\n")
    if findings:
        text += f"\n{len(findings)} distinct findings (reproducers in {out / 'findings'}):\n"
        text += "\n".join(f"  {f['count']:5} x {f['sig']}" + (f"  [{f['known']}]" if f["known"] else "")
                          for f in findings) + "\n"
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
