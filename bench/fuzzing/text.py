"""Text cases: 1-3 mutations of a valid `.mlir` of the corpus."""

from __future__ import annotations

import random
import re

from pto.bench.fuzzing.corpus import Seed

INTERESTING_INTS = [
    "0",
    "1",
    "-1",
    "2",
    "3",
    "15",
    "17",
    "33",
    "127",
    "128",
    "4097",
    "65536",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775809",
    "1e20",
    "99999999999999999999999999999",
]
INTERESTING_FLOATS = [
    "0.0",
    "-0.0",
    "1.0e+39",
    "1.0e-50",
    "-1.0",
    "1.0e+308",
    "3.4028235e+38",
    "0x7FC00000",
    "0x7F800000",
    "1e400",
    "5",
    "-1.0e-06",
]
ELEM_TYPES = [
    "bf16",
    "f16",
    "f32",
    "f64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "index",
    "ui8",
    "si8",
    "i0",
    "i128",
    "complex<f32>",
    "none",
    "tensor<4xf32>",
]
KEYWORDS = [
    "rint",
    "round",
    "trunc",
    "floor",
    "ceil",
    "none",
    "sat",
    "b_trans",
    "a_trans",
    "inplace",
    "none_cacheable",
    "normal",
    "vector",
    "cube",
    "gm",
    "ub",
    "l1",
    "l0a",
    "l0b",
    "l0c",
    "mte1",
    "mte2",
    "mte3",
    "fix",
    "sum",
    "max",
    "min",
    "mean",
    "absmax",
    "split_k",
    "after",
    "rows",
    "cache",
    "acc",
    "transpose",
    "step",
    "to",
    "in",
    "nbuffer",
    "l1_reuse",
    "tile",
    "m",
    "k",
    "n",
    "eps",
]
PUNCT = list('{}()<>[],:=%@#!?x"-.') + ["->", "::", "^bb0", "\n", " "]
ODD_TEXT = ["\x00", "\ufeff", "\u202e", "é", "\\", "\t", "\r", "'", "`", "$", "🙂", "\udcff"]


def _sub_one(rng: random.Random, text: str, pattern: str, repl) -> str:
    """Replace one random match of `pattern` with repl(match)."""
    ms = list(re.finditer(pattern, text))
    if not ms:
        return text
    m = rng.choice(ms)
    return text[: m.start()] + repl(m) + text[m.end() :]


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
    return text[: rng.randrange(len(text) + 1)]


def mut_punct(rng, text, corpus):
    i = rng.randrange(len(text) + 1)
    if rng.random() < 0.5 and i < len(text):
        return text[:i] + text[i + 1 :]
    return text[:i] + rng.choice(PUNCT) + text[i:]


def mut_string(rng, text, corpus):
    """An unterminated (or huge) string literal: the lexer's worst case."""
    body = "".join(rng.choice('ab\\"') for _ in range(rng.randrange(8, 64)))
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


TEXT_MUTATORS = {
    f.__name__[4:]: f
    for f in (
        mut_delete_line,
        mut_dup_line,
        mut_move_line,
        mut_int,
        mut_float,
        mut_elem_type,
        mut_dim,
        mut_ssa,
        mut_opname,
        mut_keyword,
        mut_delete_token,
        mut_insert_token,
        mut_truncate,
        mut_punct,
        mut_string,
        mut_splice,
        mut_drop_attr,
        mut_nest,
        mut_odd_char,
        mut_dup_func,
    )
}
# Cheap, local mutations most of the time; the blunt ones less often.
TEXT_WEIGHTS = {
    "int": 4,
    "float": 2,
    "elem_type": 3,
    "dim": 3,
    "ssa": 3,
    "opname": 2,
    "keyword": 3,
    "delete_line": 2,
    "dup_line": 1,
    "move_line": 2,
    "delete_token": 2,
    "insert_token": 2,
    "truncate": 1,
    "punct": 2,
    "string": 1,
    "splice": 1,
    "drop_attr": 2,
    "nest": 1,
    "odd_char": 1,
    "dup_func": 1,
}

LEVEL_PIPELINES = {
    "pto": [
        "builtin.module(pto-sk03-pipeline)",
        "pto-classify-skeleton,pto-to-tile",
        "pto-sk03-pipeline{factors=3,1}",
        "pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings",
    ],
    "tile": [
        "tile-assign-shapes,tile-to-npu",
        "tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu",
        "tile-to-npu",
        "tile-assign-shapes",
    ],
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
