"""Semantic cases: valid but unusual SK-03 kernels, with an independent numpy model of each."""

from __future__ import annotations

import json
import math
import random

import ml_dtypes
import numpy as np

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
    lines = [
        f"func.func @kernel({', '.join(args)}) -> ({rets})",
        f"    attributes {{{fattrs}}} {{" if fattrs else "    {",
    ]
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
UNROLLS = [
    [1],
    [3, 1],
    [17, 5, 1],
    [128, 64, 1],
    [7],
    [2, 1],
    [16, 3],
    [33, 1],
    [64, 32, 16, 8, 4, 2, 1],
    [5, 5, 1],
    [1, 3],
    [256, 1],
    [15, 1],
    [4],
]


def _cube_tile(rng) -> str:
    m0 = rng.choice([16, 32, 64, 128])
    k0 = rng.choice([16, 32, 64, 128, 256])
    n0 = rng.choice([16, 32, 64, 128, 256])
    ks = [k0, k0 * rng.choice([1, 2, 4])]
    if rng.random() < 0.2:
        ks.append(k0 * rng.choice([1, 2]))
    split = ", split_k" if rng.random() < 0.25 else ""
    return (
        f"#pto.cube_tile<m = [{m0}, {m0 * rng.choice([1, 2])}], k = [{', '.join(map(str, ks))}], "
        f"n = [{n0}, {n0 * rng.choice([1, 2])}]{split}>"
    )


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
        self.ops.append(
            {"op": opname, "res": res, "args": list(args), "types": [[list(s), d] for s, d in types], **params}
        )
        return res if len(res) > 1 else res[0]


def gen_semantic_kernel(rng: random.Random) -> tuple[str, dict]:
    """One valid-but-unusual SK-03 kernel as data, and its form. (The random draws keep
    their order: a case's content depends only on the seed and its index.)"""
    form = rng.choice(["standard", "standard", "c_v", "quant", "quant", "quant_scale_in", "epilogue", "plain", "mhc"])
    kdim, ndim = rng.choice(DIMS), rng.choice(DIMS)
    if rng.random() < 0.15:
        kdim = rng.choice([512, 1024, 4096])
    b = KB()
    b_trans = form.startswith("quant") or rng.random() < 0.7
    if form == "mhc":
        out = _mhc_body(rng, b)
    elif form in ("quant", "quant_scale_in"):
        out = _quant_body(rng, b, form, kdim, ndim)
    elif form == "c_v":
        out = _cube_then_norm_body(rng, b, kdim, ndim, b_trans)
    else:
        out = _linear_body(rng, b, form, kdim, ndim, b_trans)
    kern = {"args": b.args, "ops": b.ops, "rets": [out], "hints": _hints(rng, form, kdim), "form": form}
    return form, kern


T = None  # the token axis of a shape


def _mhc_body(rng: random.Random, b: KB) -> str:
    kdim, ndim = 16384, rng.choice([1, 3, 15, 17, 24, 33, 64])
    x = b.arg("x", [T, kdim], "bf16")
    w = b.arg("w", [ndim, kdim], "f32")
    xf = b.op("cast", [x], [([T, kdim], "f32")], mode="none")
    y = b.op("matmul", [xf, w], [([T, ndim], "f32")], b_trans=True)
    sq = b.op("mul", [xf, xf], [([T, kdim], "f32")])
    ms = b.op("reduce", [sq], [([T, 1], "f32")], kind="mean")
    e = b.op("adds", [ms], [([T, 1], "f32")], scalar=1e-6)
    r = b.op("sqrt", [e], [([T, 1], "f32")])
    return b.op("div", [y, r], [([T, ndim], "f32")])


def _quant_body(rng: random.Random, b: KB, form: str, kdim: int, ndim: int) -> str:
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
    return b.op("cast", [d], [([T, ndim], "bf16")], mode="rint")


def _cube_then_norm_body(rng: random.Random, b: KB, kdim: int, ndim: int, b_trans: bool) -> str:
    x = b.arg("x", [T, kdim], "bf16")
    w = b.arg("w", [ndim, kdim] if b_trans else [kdim, ndim], "bf16", cache=rng.random() < 0.5)
    g = b.arg("gamma", [ndim], "bf16")
    y = b.op("matmul", [x, w], [([T, ndim], rng.choice(["f32", "bf16"]))], b_trans=b_trans)
    n = b.op("rms_norm", [y, g], [([T, ndim], "f32")], eps=rng.choice([1e-6, 1e-5]))
    return b.op("cast", [n], [([T, ndim], "bf16")], mode="rint")


def _linear_body(rng: random.Random, b: KB, form: str, kdim: int, ndim: int, b_trans: bool) -> str:
    """The standard form, without the norm (plain) or with an epilogue after the matmul."""
    x = b.arg("x", [T, kdim], "bf16")
    g = b.arg("gamma", [kdim], "bf16") if form != "plain" and rng.random() < 0.8 else None
    w = b.arg("w", [ndim, kdim] if b_trans else [kdim, ndim], "bf16", cache=rng.random() < 0.5)
    if form == "plain":
        nb = x
    else:
        n = b.op("rms_norm", [x] + ([g] if g else []), [([T, kdim], "f32")], eps=rng.choice([1e-6, 1e-5, 1.0]))
        nb = b.op("cast", [n], [([T, kdim], "bf16")], mode="rint")
    mm_out = rng.choice(["f32", "f32", "bf16"]) if form != "epilogue" else "f32"
    y = b.op("matmul", [nb, w], [([T, ndim], mm_out)], b_trans=b_trans)
    if form == "epilogue":
        y = _epilogue(rng, b, y, ndim)
    return y if mm_out == "bf16" or rng.random() < 0.2 else b.op("cast", [y], [([T, ndim], "bf16")], mode="rint")


def _epilogue(rng: random.Random, b: KB, y: str, ndim: int) -> str:
    kind = rng.choice(["muls", "adds", "bias", "rowscale"])
    if kind in ("muls", "adds"):
        return b.op(kind, [y], [([T, ndim], "f32")], scalar=rng.choice([0.5, -2.0, 0.125]))
    if kind == "bias":
        bias = b.arg("bias", [ndim], "f32")
        return b.op("add", [y, bias], [([T, ndim], "f32")])
    sc = b.arg("row_scale", [T, 1], "f32")
    return b.op("mul", [y, sc], [([T, ndim], "f32")])


def _hints(rng: random.Random, form: str, kdim: int) -> dict:
    """Hints, each droppable when a finding is simplified."""
    hints: dict = {}
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
        hints["options"] = rng.choice(
            [
                '{cube_l1_reuse_setting = {"-1" = 2, "1" = 1}}',
                '{vec_nbuffer_setting = {"0" = 2}}',
                '{cube_nbuffer_setting = {"-1" = 4}}',
                '{cube_l1_reuse_setting = {"-1" = 3}, vec_nbuffer_setting = {"0" = 1}}',
            ]
        )
    if rng.random() < 0.1:
        hints["stitch"] = rng.choice([1, 2, 3])
    return hints


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
    return {
        "tool": "run",
        "argv": argv,
        "files": files,
        "primary": "kernel.mlir",
        "semantic": kern,
        "tokens": tokens,
        "seed": seed,
    }


def gen_semantic(rng: random.Random, corpus) -> tuple[str, dict]:
    form, kern = gen_semantic_kernel(rng)
    tokens = rng.choice([1, 2, 3, 15, 16, 17, 33, 64, 130] + ([0] if rng.random() < 0.1 else []))
    if form == "mhc" or kern["args"][0][1][-1] >= 1024:
        tokens = min(tokens, 17)
    h = kern["hints"]
    label = f"{form} K={kern['args'][0][1][-1]} t={tokens} " + " ".join(f"{k}={v}" for k, v in sorted(h.items()))
    return label, semantic_payload(kern, tokens, rng.randrange(1 << 16), rng.choice(["default", "pipeline-flag"]))
