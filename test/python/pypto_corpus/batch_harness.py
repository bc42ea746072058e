"""The harness the outside batches corpus10-corpus19 wrote (their `_common.py`), shared by
c79-c122: `run(name, kernel, make_case)` runs a kernel at its token counts and checks its
outputs against the case's golden by SK03.md's acceptance rule, printing `ALL PASS` or
`FAIL` with PTO=1; without it, PyPTO 0.2.0's simulator (torch tensors, RunMode.SIM) only
says whether PyPTO accepts it.
"""

import os

import numpy as np

PTO = os.environ.get("PTO") == "1"
if PTO:
    import pto.pypto as pypto  # noqa: F401
else:
    import pypto  # noqa: F401

TOKENS = (1, 37, 200)
ACCEPT_FRACTION = 0.005


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
                # SK03.md's acceptance rule: no NaN or Inf, at most 0.5% of the elements
                # beyond the tolerance (a bf16 rounding of an intermediate that the golden
                # rounds the other way moves a few outputs by one bf16 step)
                ok = bool(np.isfinite(got).all()) and int(bad.sum()) <= ACCEPT_FRACTION * bad.size
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
