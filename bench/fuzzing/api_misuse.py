"""API cases: a Python API program with one or two hostile arguments."""

from __future__ import annotations

import random

#
# A standard program with slots; a case puts a hostile value in one or two slots, or
# inserts one hostile call. The program text is the reproducer.

HOSTILE = [
    "None",
    '"a"',
    "3.5",
    "-1",
    "0",
    "[]",
    "[None]",
    '["a"]',
    "{}",
    "object()",
    "float('nan')",
    "2**64",
    "True",
    "np.int64(3)",
    "(1, 2)",
    'b"x"',
    "[1.5, 2]",
    "[-4]",
    "[0, 0]",
    '""',
    "[[1]]",
    "lambda: 0",
    "1e300",
    "-2**63",
]

BUILDER_PROGRAM = [
    (
        "k = pto.Kernel({name}, target={target}, unroll={unroll}, options={options})",
        {"name": '"f"', "target": '"ascend910b1"', "unroll": "None", "options": "None"},
    ),
    (
        "x = k.arg({xname}, {xshape}, {xdtype}, cache={xcache})",
        {"xname": '"x"', "xshape": "[None, 64]", "xdtype": '"bf16"', "xcache": "None"},
    ),
    ('g = k.arg("g", {gshape}, "bf16")', {"gshape": "[64]"}),
    ('w = k.arg("w", [32, 64], "bf16", cache={wcache})', {"wcache": '"none_cacheable"'}),
    (
        "n = pto.rms_norm(x, {gamma}, eps={eps}, label={label}, vec_tile={vec_tile})",
        {"gamma": "g", "eps": "1e-6", "label": '"rmsnorm"', "vec_tile": "None"},
    ),
    ("nb = pto.cast(n, {dtype}, round={round})", {"dtype": '"bf16"', "round": "None"}),
    (
        "y = pto.matmul(nb, {wv}, b_trans={btrans}, cube_tile={cube_tile})",
        {"wv": "w", "btrans": "True", "cube_tile": "None"},
    ),
    ("k.ret({ret})", {"ret": 'pto.cast(y, "bf16")'}),
    ("m = k.module()", {}),
    ("c = pto.compile(m, pipeline={pipeline}, target={ctarget})", {"pipeline": "None", "ctarget": "None"}),
    (
        "r = pto.run(c, {inputs}, tokens={tokens}, seed={seed}, level={level}, golden={golden}, l2_size={l2}, "
        "trace={trace})",
        {
            "inputs": "None",
            "tokens": "3",
            "seed": "0",
            "level": '"npu"',
            "golden": "True",
            "l2": "None",
            "trace": "None",
        },
    ),
    ("v = pto.check({got}, {want})", {"got": "r.outputs[0]", "want": "r.outputs[0]"}),
    ("t = c.text({level_text})", {"level_text": '"npu"'}),
]

TRACE_PROGRAM = [
    ("def kern(x, g, w, out):", {}),
    ("    pto.set_cache_policy(w, {tcache})", {"tcache": '"none_cacheable"'}),
    (
        "    for idx, p in pto.loop_unroll({start}, {stop}, {step}, unroll_list={ulist}):",
        {"start": "0", "stop": "None", "step": "1", "ulist": "[4, 1]"},
    ),
    ("        xt = pto.view(x, {vshape}, {voff})", {"vshape": "[p, 64]", "voff": "[idx, 0]"}),
    ("        pto.set_semantic_label({slabel})", {"slabel": '"rmsnorm"'}),
    ("        pto.set_vec_tile_shapes({vts})", {"vts": "2, 64"}),
    ('        nb = pto.cast(pto.rms_norm(xt, g), "bf16")', {}),
    (
        "        pto.set_cube_tile_shapes({ctm}, {ctk}, {ctn})",
        {"ctm": "[16, 16]", "ctk": "[64, 64]", "ctn": "[32, 32]"},
    ),
    ("        y = pto.matmul(nb, w, b_trans=True)", {}),
    ('        pto.assemble(pto.cast(y, "bf16"), {aoff}, out)', {"aoff": "[idx, 0]"}),
    (
        'm = pto.trace(kern, target={ttarget}, x=pto.arg({txshape}, "bf16"), g=pto.arg([64], "bf16"), '
        'w=pto.arg([32, 64], "bf16"), out=pto.arg([None, 32], "bf16"))',
        {"ttarget": '"ascend910b1"', "txshape": "[None, 64]"},
    ),
    ("c = pto.compile(m)", {}),
    ("r = pto.run(c, tokens={ttokens}, golden=True)", {"ttokens": "5"}),
]

# Plausible wrong values per slot, beside the generic hostile ones.
SLOT_VALUES = {
    "target": ['"nope"', '""', '"ascend950"'],
    "unroll": ["[0]", "[3, 1]", '["a"]', "[]", "[-1]", "[2**40]"],
    "options": ["5", '{"bogus": {0: 1}}', '{"vec_nbuffer_setting": {0: "a"}}', '{"vec_nbuffer_setting": 3}'],
    "xshape": ["[None, -4]", "[None]", "[None, None]", '"3x4"', "[None, 64.0]", "[None, 0]", "[4, 64]"],
    "xdtype": ['"float32"', '"i4"', '"f64"', "np.float32", '"BF16"'],
    "xcache": ['"sometimes"', "True"],
    "gshape": ["[65]", "[]", "[1, 64]"],
    "eps": ['"a"', "-1.0", "float('inf')", "1e39"],
    "label": ["123", '""', '"a\\nb"', '"\\""'],
    "vec_tile": ["[4]", '["a", 64]', "[0, 64]", "[4, 64, 1]"],
    "dtype": ['"i8"', '"f64"', '"x"'],
    "round": ['"up"', '"rint"', "1"],
    "wv": ["x", "g", "nb", "n"],
    "btrans": ['"no"', "None"],
    "cube_tile": [
        "pto.cube_tile([16, 16], [64, 64], [32, 32])",
        "pto.cube_tile([16], [64], [32])",
        "pto.cube_tile(['a'], [1], [1])",
        "pto.cube_tile([16, 24], [64, 64], [32, 32])",
        "(16, 64, 32)",
    ],
    "ret": ["x", "3", "n", "y", "pto.cast(y, 'bf16'), x"],
    "pipeline": ['"bogus"', '"cse"', '""', '"pto-sk03-pipeline{factors=0}"'],
    "ctarget": ['"nope"'],
    "inputs": [
        "[np.zeros((3, 64)), np.zeros(64), np.zeros((32, 64))]",
        "[1, 2, 3]",
        '{"x": np.zeros((3, 64))}',
        "[]",
        "np.zeros(3)",
    ],
    "tokens": ["-1", '"3"', "0", "2**40", "3.5"],
    "seed": ["-1", "2**70"],
    "level": ['"tile"', '"pto"', '"x"'],
    "l2": ["0", "-1", "2**40", "513"],
    "trace": ['"/nonexistent/t.json"', '"."', '""'],
    "got": ["[1, 2]", "np.zeros((2, 2))", "r.outputs[0].astype(np.float64)", "r.outputs[0][:1]"],
    "want": ["np.zeros((5, 5))", "[1.0]", "r.outputs[0].astype(np.float64)"],
    "level_text": ['"bogus"', "0"],
    "tcache": ['"x"'],
    "start": ["1"],
    "stop": ["3"],
    "step": ["2"],
    "ulist": ['["a"]', "[]", "[0]", "[1.5]"],
    "vshape": ["[p, 65]", "[idx, 64]"],
    "voff": ["[0, 0]", "[idx, 1]"],
    "slabel": ["3"],
    "vts": ['"a"', "0, 0", ""],
    "ctm": ["[16]"],
    "ctk": ['"a"'],
    "ctn": ["[0, 0]"],
    "aoff": ["[0, 0]", "[idx, 3]"],
    "ttarget": ['"nope"'],
    "txshape": ["[None, 63]", "[4, 64]"],
    "ttokens": ["0", "-3"],
}
EXTRA_CALLS = [
    "pto.muls(x, {bad})",
    "pto.adds(x, {bad})",
    "pto.reduce(x, {bad})",
    "pto.quant({bad})",
    "pto.dequant({bad}, {bad})",
    "pto.reshape(x, {bad})",
    "x + {bad}",
    "x * {bad}",
    "x / {bad}",
    "pto.add(x, {bad})",
    "pto.cube_tile({bad}, [16, 16], [16, 16])",
    "pto.set_vec_tile_shapes({bad})",
    "pto.view(x, {bad}, {bad})",
    "next(pto.loop_unroll(0, None, 1, unroll_list={bad}))",
    "pto.set_cache_policy(x, {bad})",
    "pto.set_pass_options(x={bad})",
    "pto.assemble(x, {bad}, w)",
    "pto.sqrt({bad})",
    "pto.arg({bad}, 'bf16')",
    "pto.trace({bad})",
    "pto.compile({bad})",
    "pto.run({bad}, tokens=3)",
    "pto.check({bad}, {bad})",
    "pto.Kernel({bad}).module()",
    "k.arg('x', [None, 64], 'bf16')",
    "pto.rms_norm(x, eps={bad}, out_dtype={bad})",
    "pto.cast(x, 'f32', sat={bad})",
    "pto.matmul(x, w, out_dtype={bad})",
    "pto.matmul(x, pto.Kernel('other').arg('w', [32, 64], 'bf16'), b_trans=True)",
    "pto.dequant(y, x)",
    "k.ret({bad})",
    "pto.reduce(x, 'sum', vec_tile={bad})",
]


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
