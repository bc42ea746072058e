#!/usr/bin/env python3
"""c85 (outside batch corpus11, k103) (fresh, my own style): fp32 router with N = 24 and a grouped softmax into a rank-3 output.

SK-03 C -> V: x [T, 1024] fp32 @ w_router [1024, 24] fp32 ([K, N]) -> logits fp32 [T, 24] (output 1) ->
* (1 / temperature) -> reshape [t, 3, 8] -> softmax over the 8 experts of each group -> probs [T, 3, 8] (output 2, rank 3).
Style: pypto.loop over (T + 15) // 16 tiles (pypto.ceil_div(T, 16) is refused by SIM 0.2.0), tail rows via valid_shape=[(T - i*16).min(16), ...] on the view, the
matmul result and the reshape; pypto.softmax; python helper.
"""
import numpy as np

# --- the batch's harness (corpus11's _common.py), inlined
import os

import numpy as np

PTO = os.environ.get("PTO") == "1"
if PTO:
    import pto.pypto as pypto  # noqa: F401
else:
    import pypto  # noqa: F401

TOKENS = (1, 37, 200)


def bf16_round(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def fp16_round(a):
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float32)


def _np_dt(dt):
    import ml_dtypes
    return {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32,
            "int8": np.int8, "int32": np.int32}[dt]


def _torch_dt(dt):
    import torch
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
            "int8": torch.int8, "int32": torch.int32}[dt]


def run(name, kernel, make_case, tokens=TOKENS, call=None):
    """make_case(T) -> (ins, outs, refs, tols, extra)
    ins: [(array, dt)], outs: [(shape, dt)], refs: [array], tols: [(atol, rtol) or 'step1'], extra: scalars.
    call(kernel, ins, outs, extra) overrides the argument order (default kernel(*ins, *outs, *extra))."""
    call = call or (lambda k, i, o, e: k(*i, *o, *e))
    all_ok = True
    for T in tokens:
        ins, outs, refs, tols, extra = make_case(T)
        if PTO:
            a_in = [np.ascontiguousarray(np.asarray(a).astype(_np_dt(dt))) for a, dt in ins]
            a_out = [np.zeros(s, _np_dt(dt)) for s, dt in outs]
            call(kernel, a_in, a_out, list(extra))
            for j, (o, r, tol) in enumerate(zip(a_out, refs, tols)):
                got = o.astype(np.float32)
                r = np.asarray(r, np.float32)
                err = np.abs(got - r)
                if tol == "step1":
                    bad = err > 1.0
                else:
                    bad = err > tol[0] + tol[1] * np.abs(r)
                bad = bad | ~np.isfinite(got)
                ok = not bad.any()
                all_ok &= ok
                print(f"  T={T} out{j}: {'ok' if ok else 'BAD'} max_abs_err={err.max():.4g} bad={int(bad.sum())}/{bad.size}")
        else:
            import torch
            t_in = [torch.from_numpy(np.asarray(a, np.float32)).to(_torch_dt(dt)) for a, dt in ins]
            t_out = [torch.zeros(s, dtype=_torch_dt(dt)) for s, dt in outs]
            call(kernel, t_in, t_out, list(extra))
            print(f"  T={T}: SIM ran")
    if PTO:
        print("ALL PASS" if all_ok else "FAIL")
        return
    print(f"{name} SIM accepted")
# --- the kernel



H, E, G = 1024, 24, 3
TILE = 16
TEMP = 0.7


def group_softmax(logits, rows, valid_rows):
    scaled = logits * (1.0 / TEMP)
    g = pypto.reshape(scaled, [rows, G, E // G], valid_shape=[valid_rows, G, E // G])
    return pypto.softmax(g, dim=-1)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def router(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    w_router: pypto.Tensor([H, E], pypto.DT_FP32),
    logits_out: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    probs_out: pypto.Tensor([pypto.DYNAMIC, G, E // G], pypto.DT_FP32),
):
    T = x.shape[0]
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [32, 32])
    for i in pypto.loop((T + TILE - 1) // TILE, name="router_tiles", idx_name="i"):  # pypto.ceil_div(T, TILE): SIM 0.2.0 AttributeError SymbolicScalar .dtype
        valid = (T - i * TILE).min(TILE)
        pypto.set_vec_tile_shapes(TILE, 256)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[valid, H])
        logits = pypto.matmul(xt, w_router, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(TILE, E)
        pypto.assemble(logits, [i * TILE, 0], logits_out)
        pypto.set_vec_tile_shapes(TILE, G, E // G)
        probs = group_softmax(logits, TILE, valid)
        pypto.assemble(probs, [i * TILE, 0, 0], probs_out)


rng = np.random.default_rng(103)
W = rng.normal(0, 0.05, (H, E)).astype(np.float32)


def make_case(T):
    x = rng.normal(0, 1, (T, H)).astype(np.float32)
    lg = (x.astype(np.float64) @ W.astype(np.float64)).astype(np.float32)
    s = (lg / TEMP).reshape(T, G, E // G)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    return ([(x, "fp32"), (W, "fp32")], [((T, E), "fp32"), ((T, G, E // G), "fp32")], [lg, p],
            [(2e-2, 2e-2)] * 2, [])


if __name__ == "__main__":
    run("k103", router, make_case)
