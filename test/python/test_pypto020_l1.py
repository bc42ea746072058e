"""The calibration's L1 (`ascend910b1-pypto020`): PyPTO 0.2.0's simulator does not
back-pressure on buffer capacity, so its cube tasks stream whole weight slices where
512 KiB would halve them, while what they keep for `cube_l1_reuse_setting` stays within
its 512 KiB (`model.l1_reuse_bytes`; measured: a merged C1 task keeps 5 of 16 slices)."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

from xdsl.context import Context

from pto.dialects import npu
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fidelity", ROOT / "bench" / "fidelity.py")
fidelity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fidelity)
CONFIGS = {c["id"]: c for c in json.loads((ROOT / "bench" / "fidelity" / "pypto_results.json").read_text())["configs"]}


def l1_buffers(cid: str, target: str) -> Counter:
    c = CONFIGS[cid]
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, fidelity.kernel(c, target), "k").parse_module()
    lower(ctx, m, "pto-sk03-pipeline{factors=" + ",".join(map(str, c["unroll"])) + "}")
    cube = next(t for t in m.walk() if isinstance(t, npu.TasksOp) and t.kind.data == "cube")
    return Counter(
        str(a.result.type) for a in cube.walk() if isinstance(a, npu.AllocOp) and "l1>" in str(a.result.type)
    )


def test_whole_weight_slices_stream_in_the_calibration() -> None:
    """C3b: two 128x512 activation and two 256x512 weight slices (768 KiB) in PyPTO's
    simulator; the device's 512 KiB halves the weight slices."""
    cid = "std_t40_K1024_N1024_U6_C3b"
    assert l1_buffers(cid, "ascend910b1-pypto020")["!npu.buf<256x512xbf16, l1>"] == 2
    dev = l1_buffers(cid, "ascend910b1")
    assert dev["!npu.buf<256x512xbf16, l1>"] == 0 and dev["!npu.buf<256x256xbf16, l1>"] == 2


def test_kept_slices_stay_within_the_reuse_bytes() -> None:
    """C1 merged two row tiles: 2 streaming weight copies and 5 kept slices on both."""
    for target in ("ascend910b1-pypto020", "ascend910b1"):
        assert l1_buffers("stdx_t128_K4096_N1024_U5_C1_sk0", target)["!npu.buf<64x512xbf16, l1>"] == 7
