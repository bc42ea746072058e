#!/usr/bin/env python3
"""Regenerate bench/fidelity/pypto_results.json from PyPTO 0.2.0's cost-model simulator.

Run with the separate PyPTO venv (never a dependency of pto-ir):

    /work/pypto-venv/bin/python bench/fidelity/regen_pypto.py [--only ID,ID] [--jobs 2] [--timeout 60]

Each configuration runs in its own subprocess with a fresh temporary cwd (the simulator
writes under ./output/). The kernels below are our own SK-03 kernels written against the
public pypto API; no PyPTO source is copied here.

Kernel shapes (all forms: one token loop, pypto.loop_unroll(0, t, 1, unroll_list=unroll),
body of p tokens: x_tile = view(x, [p, K], [idx, 0])):
  std  : gamma_f = cast(gamma[1,K], fp32) before the loop; per body:
         set_vec_tile_shapes(*vec_tile); xf = cast(x_tile, fp32);
         r = rsqrt(sum(xf*xf, -1, keepdim) * (1/K) + eps); y = cast(xf * r * gamma_f, bf16);
         set_cube_tile_shapes(m, k, n, split_k); acc = matmul(y, w[N,K] bf16, fp32, b_trans=True);
         set_vec_tile_shapes(*post_vec_tile); assemble(cast(acc, bf16), [idx,0], out[t,N] bf16)
  quant: same RMSNorm (fp32), then amax = amax(abs(y), -1, keepdim); s = amax * (1/127);
         yq = y * reciprocal(amax) * 127; q = cast(cast(cast(yq, int32, RINT), fp16, ROUND), int8, TRUNC, sat ON);
         acc = matmul(q, w[N,K] int8, int32, b_trans=True);
         set_vec_tile_shapes(*post_vec_tile); d = cast(acc, fp32) * s * w_scale[1,N] (w_scale [N,1] reshaped inplace);
         assemble(cast(d, bf16), [idx,0], out[t,N] bf16)
  mhc  : set_vec_tile_shapes(*vec_tile); xf = cast(x_tile, fp32);
         set_cube_tile_shapes(...); acc = matmul(xf, hc_fn[24,K] fp32, fp32, b_trans=True)  # [p,24]
         set_vec_tile_shapes(*vec_tile); r = sqrt(sum(xf*xf, -1, keepdim) * (1/K) + eps);
         set_vec_tile_shapes(*post_vec_tile); assemble(acc / r, [idx,0], out[t,24] fp32)
Weight cache: cache == "none_cacheable" -> w.set_cache_policy(NONE_CACHEABLE, True) before the loop.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_JSON = os.path.join(HERE, "pypto_results.json")

STD_PASS = {"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}}
DEFAULT_RUNTIME = {"stitch_function_max_num": 128, "device_sched_mode": 0}

# ----------------------------------------------------------------------------- configs
U = {
    "U1": [1],
    "U2": [16, 1],
    "U3": [32, 16, 1],
    "U4": [64, 1],
    "U5": [128, 64, 32, 16, 1],
    "U6": [128, 64, 32, 16, 8, 1],
}


def cfg(
    id_,
    group,
    form,
    t,
    K,
    N,
    unroll,
    cube,
    vec_tile,
    post_vec_tile,
    split_k=False,
    cache=None,
    pass_options=None,
    runtime_options=None,
    b_trans=True,
):
    if cache is None:
        cache = "default" if form == "mhc" else "none_cacheable"
    if pass_options is None:
        pass_options = {} if form == "mhc" else dict(STD_PASS)
    ro = dict(DEFAULT_RUNTIME)
    ro.update(runtime_options or {})
    ro = {k: v for k, v in ro.items() if v is not None}  # None = leave PyPTO's default
    return {
        "id": id_,
        "group": group,
        "form": form,
        "t": t,
        "K": K,
        "N": N,
        "unroll": list(unroll),
        "vec_tile": list(vec_tile),
        "post_vec_tile": list(post_vec_tile),
        "cube_tile": {"m": list(cube[0]), "k": list(cube[1]), "n": list(cube[2])},
        "split_k": bool(split_k),
        "cache": cache,
        "b_trans": b_trans,
        "pass_options": pass_options,
        "runtime_options": ro,
        "eps": 1e-6,
        "dtypes": {
            "std": {"x": "bf16", "gamma": "bf16", "w": "bf16", "acc": "fp32", "out": "bf16"},
            "quant": {"x": "bf16", "gamma": "bf16", "w": "int8", "w_scale": "fp32", "acc": "int32", "out": "bf16"},
            "mhc": {"x": "bf16", "w": "fp32", "acc": "fp32", "out": "fp32"},
        }[form],
    }


# cube tile sets: (m, k, n) per axis [L0, L1]
C_STD = {
    "C1": ([32, 32], [512, 512], [64, 64]),  # mla_prolog_v4 wqa-linear
    "C2": ([32, 32], [256, 256], [128, 128]),  # mla_prolog_v4 wkv-linear
    "C3": ([128, 128], [256, 1024], [256, 256]),  # lightning indexer Query-Linear
    "C3b": ([128, 128], [128, 512], [256, 256]),  # C3 made legal for bf16 (L0B: kL0*nL0*2 <= 64 KiB)
    "C4": ([16, 16], [256, 512], [64, 64]),  # small
    "C5": ([64, 128], [128, 512], [128, 256]),  # large L1 tiles
    "C6": ([128, 128], [128, 256], [128, 128]),  # mid, m = 128
}
C_MHC = {
    "M1": ([16, 16], [512, 1024], [128, 128]),  # hc_pre tile_t <= 32
    "M2": ([16, 16], [512, 2048], [128, 128]),  # hc_pre tile_t > 64
    "M3": ([32, 32], [256, 1024], [32, 32]),
    "M4": ([64, 64], [256, 512], [32, 32]),
}


def _std_configs(cs: list) -> None:
    """Std groups: unroll x cube tile."""
    for t, K, N in [(128, 4096, 1024), (300, 4096, 1024), (64, 1024, 8192)]:
        g = f"std_t{t}_K{K}_N{N}"
        vt, pvt = [4, K], [4, min(N, 1024)]
        for un in ["U1", "U3", "U5", "U6"]:
            cs.append(cfg(f"{g}_{un}_C1", g, "std", t, K, N, U[un], C_STD["C1"], vt, pvt))
        for cn in ["C2", "C3b", "C4", "C5", "C6"]:
            cs.append(cfg(f"{g}_U6_{cn}", g, "std", t, K, N, U["U6"], C_STD[cn], vt, pvt))
        cs.append(cfg(f"{g}_U4_C3b", g, "std", t, K, N, U["U4"], C_STD["C3b"], vt, pvt))
        cs.append(cfg(f"{g}_U2_C4", g, "std", t, K, N, U["U2"], C_STD["C4"], vt, pvt))


def _stdx_configs(cs: list) -> None:
    """Std t=128 split-K / vec tile / settings group."""
    t, K, N = 128, 4096, 1024
    g = f"stdx_t{t}_K{K}_N{N}"

    def std(name, un, cn, vt=(4, K), pvt=(4, 1024), **kw):
        cs.append(cfg(f"{g}_{name}", g, "std", t, K, N, U[un], C_STD[cn], list(vt), list(pvt), **kw))

    for un in ["U3", "U5"]:
        for sk in [False, True]:
            std(f"{un}_C1_sk{int(sk)}", un, "C1", split_k=sk)
    std("U5_C3b_sk1", "U5", "C3b", split_k=True)
    std("U5_C1_v1", "U5", "C1", (1, K), (1, 1024))
    std("U5_C1_v2", "U5", "C1", (2, K), (8, 1024))
    std("U5_C1_nopass", "U5", "C1", pass_options={})
    std("U5_C3b_nopass", "U5", "C3b", pass_options={})
    std("U5_C1_cache", "U5", "C1", cache="default")
    std("U3_C1_nostitch", "U3", "C1", runtime_options={"stitch_function_max_num": None})
    std("U5_C1_cnb2", "U5", "C1", pass_options=dict(STD_PASS, cube_nbuffer_setting={-1: 2}))
    std("U5_C1_l1r4", "U5", "C1", pass_options={"cube_l1_reuse_setting": {-1: 4}, "vec_nbuffer_setting": {0: 2}})
    std("U5_C1_vnb4", "U5", "C1", pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {-1: 4}})


def _quant_configs(cs: list) -> None:
    """Quant groups."""
    for t, K, N in [(128, 1024, 8192), (300, 1024, 4096)]:
        g = f"quant_t{t}_K{K}_N{N}"
        vt, pvt = [4, K], [4, 2048]
        for un in ["U1", "U3", "U5", "U6"]:
            cs.append(cfg(f"{g}_{un}_C3", g, "quant", t, K, N, U[un], C_STD["C3"], vt, pvt))
        for cn in ["C1", "C2", "C4", "C5", "C6"]:
            cs.append(cfg(f"{g}_U6_{cn}", g, "quant", t, K, N, U["U6"], C_STD[cn], vt, pvt))
        cs.append(cfg(f"{g}_U4_C3", g, "quant", t, K, N, U["U4"], C_STD["C3"], vt, pvt))


def _mhc_configs(cs: list) -> None:
    """Mhc groups: unroll x cube tile x split-K."""
    for t in [256, 64]:
        K, N = 16384, 24
        g = f"mhc_t{t}_K{K}_N{N}"
        vt, pvt = [8, 2048], [8, 24]
        # note: in this fp32 mhc form, split-K crashes PyPTO 0.2.0's simulator (ParseInput.cpp
        # BuildFunction) whenever a body holds more than one m tile (p > mL0, e.g. [32,16,1] with
        # m = 16, or [64,1] with kL1 = 2048), so split-K is only combined with p <= mL0 here
        for un, m, sk in [
            ("U2", "M1", False),
            ("U2", "M1", True),
            ("U2", "M2", True),
            ("U3", "M1", False),
            ("U3", "M3", True),
            ("U4", "M4", False),
            ("U4", "M2", False),
            ("U1", "M1", False),
            ("U2", "M3", True),
            ("U2", "M3", False),
            ("U4", "M4", True),
        ]:
            cs.append(cfg(f"{g}_{un}_{m}_sk{int(sk)}", g, "mhc", t, K, N, U[un], C_MHC[m], vt, pvt, split_k=sk))
        for vtn, vtx in [("v1", [1, 2048]), ("v4", [4, 4096])]:
            cs.append(cfg(f"{g}_U2_M1_sk0_{vtn}", g, "mhc", t, K, N, U["U2"], C_MHC["M1"], vtx, [vtx[0], 24]))


def _small_t_configs(cs: list) -> None:
    """Small-t std group: partial tiles (t = 40 = 32 + 8), unroll x m tile."""
    t, K, N = 40, 1024, 1024
    g = f"std_t{t}_K{K}_N{N}"
    vt, pvt = [4, K], [4, 1024]
    for un, cn in [
        ("U1", "C6"),
        ("U3", "C6"),
        ("U6", "C6"),
        ("U6", "C1"),
        ("U6", "C4"),
        ("U6", "C3b"),
        ("U4", "C3b"),
        ("U2", "C2"),
    ]:
        cs.append(cfg(f"{g}_{un}_{cn}", g, "std", t, K, N, U[un], C_STD[cn], vt, pvt))


def _wq_a_configs(cs: list) -> None:
    """DeepSeek-V4 wq_a-like shape: hidden 7168 -> q_lora 1536."""
    t, K, N = 256, 7168, 1536
    g = f"std_t{t}_K{K}_N{N}"
    vt, pvt = [2, K], [4, 1536]
    for un, cn in [
        ("U3", "C1"),
        ("U5", "C1"),
        ("U6", "C2"),
        ("U6", "C3b"),
        ("U6", "C5"),
        ("U6", "C6"),
        ("U4", "C3b"),
        ("U2", "C4"),
    ]:
        cs.append(cfg(f"{g}_{un}_{cn}", g, "std", t, K, N, U[un], C_STD[cn], vt, pvt))


def build_configs():
    cs: list = []
    _std_configs(cs)
    _stdx_configs(cs)
    _quant_configs(cs)
    _mhc_configs(cs)
    _small_t_configs(cs)
    _wq_a_configs(cs)
    return cs


# ----------------------------------------------------------------------------- worker
class _Figures:
    """One configuration's figures, and the RMSNorm pieces its kernels share."""

    def __init__(self, c, pypto):
        self.pypto = pypto
        self.t, self.K, self.N = c["t"], c["K"], c["N"]
        self.unroll, self.cube_tile, self.split_k = c["unroll"], c["cube_tile"], c["split_k"]
        self.vec_tile, self.post_vec_tile = c["vec_tile"], c["post_vec_tile"]
        self.eps = c["eps"]
        self.none_cacheable = c["cache"] == "none_cacheable"
        self.runtime_options = {"run_mode": pypto.RunMode.SIM, **c["runtime_options"]}
        # JSON turns the int group keys of the *_setting maps into strings; restore them
        self.pass_options = {
            k: ({int(kk): vv for kk, vv in v.items()} if isinstance(v, dict) else v)
            for k, v in c["pass_options"].items()
        }

    def rms(self, xf):
        pypto = self.pypto
        ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        return pypto.add(pypto.mul(ms, 1.0 / self.K), self.eps)

    def gamma_f32(self, gamma):
        pypto = self.pypto
        pypto.set_vec_tile_shapes(1, self.K)
        return pypto.cast(pypto.reshape(gamma, [1, self.K], inplace=True), pypto.DT_FP32)

    def rmsnorm(self, x, idx, p, g, label):
        """Rows idx..idx+p of x normalised and scaled by g, in f32, on the vector tile."""
        pypto = self.pypto
        xt = pypto.view(x, [p, self.K], [idx, 0])
        pypto.set_semantic_label(label)
        pypto.set_vec_tile_shapes(self.vec_tile[0], self.vec_tile[1])
        xf = pypto.cast(xt, pypto.DT_FP32)
        return pypto.mul(pypto.mul(xf, pypto.rsqrt(self.rms(xf))), g)


# The kernel factories are left unannotated: their kernels' parameter annotations are
# PyPTO's DSL (`pypto.Tensor([t, K], ...)`), calls that a type checker cannot read.
def _std_kernel(f, pypto, torch):
    t, K, N, un, ct, sk, pvt = f.t, f.K, f.N, f.unroll, f.cube_tile, f.split_k, f.post_vec_tile
    BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32

    @pypto.frontend.jit(runtime_options=f.runtime_options, pass_options=f.pass_options)
    def kern(
        x: pypto.Tensor([t, K], pypto.DT_BF16),
        gamma: pypto.Tensor([K], pypto.DT_BF16),
        w: pypto.Tensor([N, K], pypto.DT_BF16),
        out: pypto.Tensor([t, N], pypto.DT_BF16),
    ):
        g = f.gamma_f32(gamma)
        if f.none_cacheable:
            w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for idx, p in pypto.loop_unroll(0, t, 1, name="tok", idx_name="ti", unroll_list=un):
            y = pypto.cast(f.rmsnorm(x, idx, p, g, "rmsnorm"), BF16)
            pypto.set_semantic_label("linear")
            pypto.set_cube_tile_shapes(ct["m"], ct["k"], ct["n"], sk)
            acc = pypto.matmul(y, w, FP32, b_trans=True)
            pypto.set_semantic_label("out-cast")
            pypto.set_vec_tile_shapes(pvt[0], pvt[1])
            pypto.assemble(pypto.cast(acc, BF16), [idx, 0], out)

    args = [
        torch.randn(t, K, dtype=torch.bfloat16),
        torch.randn(K, dtype=torch.bfloat16),
        torch.randn(N, K, dtype=torch.bfloat16),
        torch.zeros(t, N, dtype=torch.bfloat16),
    ]
    return kern, args


def _quant_kernel(f, pypto, torch):
    t, K, N, un, ct, sk, pvt = f.t, f.K, f.N, f.unroll, f.cube_tile, f.split_k, f.post_vec_tile
    BF16, FP32, I8, I32 = pypto.DT_BF16, pypto.DT_FP32, pypto.DT_INT8, pypto.DT_INT32

    @pypto.frontend.jit(runtime_options=f.runtime_options, pass_options=f.pass_options)
    def kern(
        x: pypto.Tensor([t, K], pypto.DT_BF16),
        gamma: pypto.Tensor([K], pypto.DT_BF16),
        w: pypto.Tensor([N, K], pypto.DT_INT8),
        w_scale: pypto.Tensor([N, 1], pypto.DT_FP32),
        out: pypto.Tensor([t, N], pypto.DT_BF16),
    ):
        g = f.gamma_f32(gamma)
        ws = pypto.reshape(w_scale, [1, N], inplace=True)
        if f.none_cacheable:
            w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for idx, p in pypto.loop_unroll(0, t, 1, name="tok", idx_name="ti", unroll_list=un):
            y = f.rmsnorm(x, idx, p, g, "q-rmsnorm")
            pypto.set_semantic_label("Query-Quant")
            amax = pypto.amax(pypto.abs(y), -1, keepdim=True)
            s = pypto.mul(amax, 1.0 / 127.0)
            yq = pypto.mul(pypto.mul(y, pypto.reciprocal(amax)), 127.0)
            q32 = pypto.cast(yq, I32, pypto.CastMode.CAST_RINT)
            q16 = pypto.cast(q32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
            q = pypto.cast(q16, I8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)
            pypto.set_semantic_label("Query-Linear")
            pypto.set_cube_tile_shapes(ct["m"], ct["k"], ct["n"], sk)
            acc = pypto.matmul(q, w, I32, b_trans=True)
            pypto.set_semantic_label("Query-Dequant")
            pypto.set_vec_tile_shapes(pvt[0], pvt[1])
            d = pypto.mul(pypto.mul(pypto.cast(acc, FP32), s), ws)
            pypto.assemble(pypto.cast(d, BF16), [idx, 0], out)

    args = [
        torch.randn(t, K, dtype=torch.bfloat16),
        torch.randn(K, dtype=torch.bfloat16),
        torch.randint(-127, 127, (N, K), dtype=torch.int8),
        torch.rand(N, 1, dtype=torch.float32),
        torch.zeros(t, N, dtype=torch.bfloat16),
    ]
    return kern, args


def _mhc_kernel(f, pypto, torch):
    t, K, N, un, ct, sk = f.t, f.K, f.N, f.unroll, f.cube_tile, f.split_k
    vt, pvt, FP32 = f.vec_tile, f.post_vec_tile, pypto.DT_FP32

    @pypto.frontend.jit(runtime_options=f.runtime_options, pass_options=f.pass_options)
    def kern(
        x: pypto.Tensor([t, K], pypto.DT_BF16),
        w: pypto.Tensor([N, K], pypto.DT_FP32),
        out: pypto.Tensor([t, N], pypto.DT_FP32),
    ):
        if f.none_cacheable:
            w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for idx, p in pypto.loop_unroll(0, t, 1, name="tok", idx_name="ti", unroll_list=un):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.set_vec_tile_shapes(vt[0], vt[1])
            xf = pypto.cast(xt, FP32)
            pypto.set_semantic_label("hc-linear")
            pypto.set_cube_tile_shapes(ct["m"], ct["k"], ct["n"], sk)
            acc = pypto.matmul(xf, w, FP32, b_trans=True)
            pypto.set_semantic_label("hc-norm")
            pypto.set_vec_tile_shapes(vt[0], vt[1])
            r = pypto.sqrt(f.rms(xf))
            pypto.set_vec_tile_shapes(pvt[0], pvt[1])
            pypto.assemble(pypto.div(acc, r), [idx, 0], out)

    args = [
        torch.randn(t, K, dtype=torch.bfloat16),
        torch.randn(N, K, dtype=torch.float32),
        torch.zeros(t, N, dtype=torch.float32),
    ]
    return kern, args


_KERNELS = {"std": _std_kernel, "quant": _quant_kernel, "mhc": _mhc_kernel}


def run_one(c):
    """Build and simulate one config in the current process (cwd = fresh temp dir)."""
    import torch

    import pypto

    if c["form"] not in _KERNELS:
        raise ValueError(c["form"])
    kern, args = _KERNELS[c["form"]](_Figures(c, pypto), pypto, torch)
    kern(*args)


# ----------------------------------------------------------------------------- output parsing
def parse_output(cwd):
    outs = sorted(os.listdir(os.path.join(cwd, "output")))
    d = os.path.join(cwd, "output", outs[-1], "CostModelSimulationOutput")
    rep = open(os.path.join(d, "_simulate.stat.report.txt")).read()

    def num(label):
        m = re.search(re.escape(label) + r"\.*:\s+([0-9.]+)", rep)
        return float(m.group(1)) if m else None

    res = {
        "cycles": int(num("Total Cycles")),
        "tasks": {
            "total": int(num("Total Submit Tasks")),
            "cube": int(num("|--Cube Tasks")),
            "vector": int(num("|--Vector Tasks")),
        },
        "report_pipe_avg": {},
    }
    for p in ["Cube", "Vector", "MTE_IN", "MTE1", "MTE_OUT"]:
        used, avg = num(f"Used {p} Pipe Number"), num(f"Average {p} Usage")
        if used is not None and avg is not None:
            res["report_pipe_avg"][p] = {"used": int(used), "avg_busy": avg}
    # per-pipe busy cycles summed over all cores (report: used pipes x average busy)
    res["pipes"] = {p: round(v["used"] * v["avg_busy"]) for p, v in res["report_pipe_avg"].items()}
    # per-pipe busy cycles per core type from the per-op timeline (the simulator writes it
    # only for short runs); "-r" entries are replays of an identical task and are included
    pipes = {}
    nops = {}
    pf = os.path.join(d, "_simulate.pipe.swim.json")
    for core in json.load(open(pf)) if os.path.exists(pf) else []:
        for pname, evs in core.get("pipeLogs", {}).items():
            k = f"{core['coreType']}.{pname}"
            pipes[k] = pipes.get(k, 0) + sum(e["execEnd"] - e["execStart"] for e in evs)
            nops[k] = nops.get(k, 0) + len(evs)
    if pipes:
        res["pipes_by_core_type"] = pipes
        res["pipe_ops"] = nops
    # task timeline summary
    tl = {"AIC": [], "AIV": []}
    for core in json.load(open(os.path.join(d, "_simulate.swim.json"))):
        ct = core.get("coreType")
        if ct in tl:
            for tk in core.get("tasks", []):
                tl[ct].append((tk["execStart"], tk["execEnd"]))
    ts = {}
    for ct, v in tl.items():
        if v:
            durs = [e - s for s, e in v]
            ts[ct] = {
                "n": len(v),
                "first_start": min(s for s, _ in v),
                "last_end": max(e for _, e in v),
                "mean_dur": round(sum(durs) / len(durs), 1),
                "max_dur": max(durs),
                "min_dur": min(durs),
                "busy": sum(durs),
            }
    res["task_timeline"] = ts
    return res


def run_sub(c, timeout, keep_dir=None):
    cwd = tempfile.mkdtemp(prefix="pypto_sim_")
    spec = os.path.join(cwd, "cfg.json")
    json.dump(c, open(spec, "w"))
    t0 = time.time()
    rec = dict(c)
    try:
        p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", spec],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            outp, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        rec["wall_s"] = round(time.time() - t0, 2)
        if p.returncode != 0:
            tail = [
                line
                for line in outp.splitlines()
                if "rror" in line or "failed" in line or "[SIMULATION]" in line or "exceeds" in line
            ][-4:]
            plog = glob.glob(os.path.expanduser(f"~/ascend/log/debug/plog/pypto-log-{p.pid}_*.log"))
            for f in plog:
                tail += [line[:300] for line in open(f, errors="replace") if "[ERROR]" in line][:3]
            rec["error"] = "\n".join(tail)[-1500:] or f"rc={p.returncode}"
        else:
            rec.update(parse_output(cwd))
    except subprocess.TimeoutExpired:
        rec["wall_s"] = round(time.time() - t0, 2)
        rec["error"] = f"timeout>{timeout}s"
    except Exception as e:  # parse failure
        rec["wall_s"] = round(time.time() - t0, 2)
        rec["error"] = f"parse: {e!r}"
    if keep_dir:
        dst = os.path.join(keep_dir, c["id"])
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(cwd, dst)
    shutil.rmtree(cwd, ignore_errors=True)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--keep", help="copy each run's output dir here")
    ap.add_argument("--out", default=OUT_JSON)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.worker:
        run_one(json.load(open(a.worker)))
        return
    from importlib.metadata import version

    import pypto  # noqa: F401  (version only)

    ver = version("pypto")
    cs = build_configs()
    if a.list:
        for c in cs:
            print(c["id"])
        print(len(cs), "configs")
        return
    if a.only:
        want = set(a.only.split(","))
        cs = [c for c in cs if c["id"] in want or c["group"] in want]
    results = {}
    if os.path.exists(a.out) and a.only:
        for r in json.load(open(a.out)).get("configs", []):
            if r["id"] in {c["id"] for c in build_configs()}:  # drop configs no longer defined
                results[r["id"]] = r
    order = [c["id"] for c in build_configs()]

    def save():
        recs = sorted(results.values(), key=lambda r: order.index(r["id"]) if r["id"] in order else 1e9)
        ok = [r for r in recs if "cycles" in r]
        doc = {
            "generator": "bench/fidelity/regen_pypto.py",
            "pypto_version": ver,
            "simulator": "pypto.RunMode.SIM cost model (CostModelSimulationOutput/_simulate.stat.report.txt)",
            "n_ok": len(ok),
            "n_failed": len(recs) - len(ok),
            "configs": recs,
        }
        tmp = a.out + ".tmp"
        json.dump(doc, open(tmp, "w"), indent=1)
        os.replace(tmp, a.out)

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_sub, c, a.timeout, a.keep): c for c in cs}
        for f in futs:
            r = f.result()
            r["pypto_version"] = ver
            results[r["id"]] = r
            print(
                f"{r['id']:40s} {r.get('cycles', r.get('error', '?'))!s:>12} "
                f"tasks={r.get('tasks', {}).get('cube', '-')}/{r.get('tasks', {}).get('vector', '-')} "
                f"wall={r['wall_s']}s",
                flush=True,
            )
            save()
    save()


if __name__ == "__main__":
    main()
