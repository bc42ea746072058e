"""Flags cases: bad command lines for `pto-run` and `pto-opt`."""

from __future__ import annotations

import random

import numpy as np

from pto.bench.fuzzing.cases import PKG
from pto.bench.fuzzing.npy import npy_bytes
from pto.bench.fuzzing.semantic import apply_hints, emit_mlir, gen_semantic_kernel

RUN_FLAGS = {
    "--tokens": [
        "-1",
        "0",
        "1",
        "3",
        "2147483648",
        "9223372036854775808",
        "18446744073709551616",
        "abc",
        "1e3",
        "",
        " 3",
        "0x10",
    ],
    "--seed": ["-1", "4294967296", "18446744073709551616", "x", "", "7"],
    "--l2-size": [
        "0",
        "-1",
        "1",
        "512",
        "4096",
        "1073741824",
        "1073741825",
        "1099511627776",
        "18446744073709551616",
        "x",
        "",
    ],
    "--max-memory": ["0", "-1", "1", "1000", str(1 << 70), "x", ""],
    "--target": [
        "",
        " ",
        "nope",
        "ascend950",
        "../targets/ascend910b1",
        "ascend910b1.toml",
        "/etc/passwd",
        "ASCEND910B1",
        "ascend910b1\n",
    ],
    "--trace": ["", "{d}/kernel.mlir", "{d}/x.npy", "{d}", "/nonexistent/dir/t.json", "{d}/t.json", "{d}/out"],
    "--output-dir": ["", "{d}", "{d}/kernel.mlir", "/proc/pto-fuzz", "{d}/out", "{d}/x.npy"],
    "--pass-pipeline": [
        "",
        "cse",
        "pto-classify-skeleton",
        "tile-to-npu",
        "bogus",
        "pto-sk03-pipeline{factors=0}",
        "pto-sk03-pipeline{factors=-1}",
        "pto-sk03-pipeline{factors=1,2,3}",
        "pto-sk03-pipeline{target=nope}",
        "builtin.module(",
        "pto-sk03-pipeline{",
        "pto-sk03-pipeline{factors=99999999999999999999}",
        "pto-sk03-pipeline{bogus=1}",
        "pto-to-tile",
        "builtin.module(pto-sk03-pipeline,pto-sk03-pipeline)",
        "pto-sk03-pipeline{target=ascend950}",
        "pto-sk03-pipeline{factors=}",
    ],
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
OPT_SWITCHES = [
    "--split-input-file",
    "--verify-diagnostics",
    "--mlir-print-ir-after-all",
    "--mlir-print-ir-before-all",
    "--mlir-print-op-generic",
    "--print-op-generic",
    "--run-reproducer",
    "--list-passes",
    "--version",
    "--allow-unregistered-dialect",
    "--bogus",
    "--shrink",
    "--parsing-diagnostics",
    "-h",
]
FLAG_KERNELS = [
    "examples/sk03_standard.mlir",
    "examples/levels/sk03_standard.tile.mlir",
    "examples/levels/sk03_standard.npu.mlir",
    "examples/hc_pre.mlir",
]


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
    return f"pto-{tool} [{kname}] {' '.join(changed)}", {
        "tool": tool,
        "argv": argv,
        "files": files,
        "primary": "kernel.mlir",
    }
