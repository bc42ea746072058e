"""The device-anchored cube figures of the default target (issue 33): one cube task per
case, whose MTE1, cube and FIXPIPE busy cycles in the report equal the published
formulas, computed here from the published figures (PyPTO mainline,
include/pypto/backend/common/backend_handler.h, struct L0CostModel, a2a3; and
backend_950_handler.h for a5), not read from the target. The calibration
`ascend910b1-pypto020` prices the same task as PyPTO 0.2.0's simulator does."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernels import parse

from pto.interp.run import run

# L0CostModel's a2a3 defaults, and the a5 (ascend950) override where it differs.
A2A3 = {"l0a": 129.7, "l0b": 85.4, "drain": 118.0, "fixed": 164.0, "row": 4.45, "odd": 2.6, "head": 21, "f32": 2}
A5 = {"l0a": 206.3, "l0b": 223.8, "drain": 30.0, "fixed": 343.4, "row": 4.59, "odd": 0.26, "head": 25, "f32": 8}
C0_BYTES = K_FRACTAL_BYTES = 32  # L0CostModel.drain_c0_bytes, mad_k_fractal_bytes
BYTES = {"bf16": 2, "f32": 4, "i8": 1, "i32": 4}
ACC = {"bf16": "f32", "f32": "f32", "i8": "i32"}
OUT = {"bf16": "bf16", "f32": "f32", "i8": "i32"}


@pytest.fixture(autouse=True, params=["interp", "compiled"])
def engine(request, monkeypatch):
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", request.param)
    return request.param


def one_task(m: int, k: int, n: int, elem: str, rows: int | None = None) -> str:
    """A[m, k] @ B[k, n] on one cube core: GM -> L1, L1 -> L0A/L0B, one mmad, one fixpipe."""
    acc, out = ACC[elem], OUT[elem]
    a, b, c = f"{m}x{k}x{elem}", f"{k}x{n}x{elem}", f"{m}x{n}x{acc}"
    boff = -(-m * k * BYTES[elem] // 512) * 512
    rnd = " round rint" if out != acc else ""
    part = " rows %r" if rows is not None else ""
    return f"""func.func @k(%a: !npu.buf<{a}, gm>, %b: !npu.buf<{b}, gm>, %o: !npu.buf<{m}x{n}x{out}, gm> {{pto.output}}) {{
    npu.launch cube 1 (%c) {{
      %r = arith.constant {rows or 0} : index
      %a1 = npu.alloc l1 [0] : !npu.buf<{a}, l1>
      %b1 = npu.alloc l1 [{boff}] : !npu.buf<{b}, l1>
      %a0 = npu.alloc l0a [0] : !npu.buf<{a}, l0a>
      %b0 = npu.alloc l0b [0] : !npu.buf<{b}, l0b>
      %acc = npu.alloc l0c [0] : !npu.buf<{c}, l0c>
      npu.dma mte2 %a[0, 0] -> %a1[0, 0] : !npu.buf<{a}, gm> -> !npu.buf<{a}, l1>
      npu.dma mte2 %b[0, 0] -> %b1[0, 0] : !npu.buf<{b}, gm> -> !npu.buf<{b}, l1>
      npu.dma mte1 %a1[0, 0] -> %a0[0, 0] : !npu.buf<{a}, l1> -> !npu.buf<{a}, l0a>
      npu.dma mte1 %b1[0, 0] -> %b0[0, 0] : !npu.buf<{b}, l1> -> !npu.buf<{b}, l0b>
      npu.mmad %a0, %b0 -> %acc : !npu.buf<{a}, l0a>, !npu.buf<{b}, l0b> -> !npu.buf<{c}, l0c>
      npu.fixpipe %acc[0, 0] -> %o[0, 0]{part}{rnd} : !npu.buf<{c}, l0c> -> !npu.buf<{m}x{n}x{out}, gm>
    }}
    func.return
}}"""


def busy(m: int, k: int, n: int, elem: str, target: str, rows: int | None = None) -> dict[str, float]:
    rng = np.random.default_rng(0)
    kind = np.int8 if elem == "i8" else np.float32
    a, b = (rng.integers(-4, 4, s).astype(kind) for s in ((m, k), (k, n)))
    if elem == "bf16":
        from pto.interp import numerics as nx

        a, b = (nx.cast(x, "f32", "bf16", "rint") for x in (a, b))
    r = run(parse(one_task(m, k, n, elem, rows)), [a, b], target=target)
    assert r.report is not None
    (core,) = [c for name, c in r.report.cores.items() if c["cube"]]
    return core


def odd(x: int) -> int:
    while x % 2 == 0:
        x //= 2
    return x


def device(m: int, k: int, n: int, elem: str, fig: dict, rows: int | None = None) -> dict[str, float]:
    """The published formulas: L1 -> L0 bytes over the rates; the mmad's head and its
    passes over whole fractals (kt = 32 B / input bytes); the drain per output tile."""
    e, acc = BYTES[elem], BYTES[ACC[elem]]
    kt = K_FRACTAL_BYTES // e
    passes = fig["f32"] if elem == "f32" else 1
    fractals = math.ceil(m / 16) * math.ceil(k / kt) * math.ceil(n / 16)
    n1 = math.ceil(n / (C0_BYTES // acc))
    drained = m if rows is None else rows
    row = max(fig["row"], acc * n / fig["drain"]) + fig["odd"] * (odd(n1) - 1)
    return {
        "mte1": m * k * e / fig["l0a"] + k * n * e / fig["l0b"],
        "cube": fig["head"] + passes * fractals,
        "fixpipe": fig["fixed"] + drained * row,
    }


CASES = [
    (128, 128, 64, "bf16", None),  # the drain's per-row floor (n = 64: 2.2 bytes-cycles < 4.45)
    (32, 32, 256, "bf16", None),  # its throughput (4 x 256 / 118 = 8.7 per row)
    (64, 64, 80, "bf16", None),  # N1 = 10: odd part 5, four extra passes per row
    (16, 32, 96, "f32", None),  # f32: kt = 8, 2 passes; N1 = 12: odd part 3
    (32, 64, 48, "i8", None),  # i8: kt = 32; i32 accumulator, N1 = 6
    (32, 64, 64, "bf16", 20),  # a partial tile: 20 valid rows drained
]


@pytest.mark.parametrize(("m", "k", "n", "elem", "rows"), CASES)
def test_one_cube_task_costs_the_published_a2a3_figures(m, k, n, elem, rows):
    got, want = busy(m, k, n, elem, "ascend910b1", rows), device(m, k, n, elem, A2A3, rows)
    for pipe, cycles in want.items():
        assert got[pipe] == pytest.approx(cycles, rel=1e-12), pipe


@pytest.mark.parametrize(("m", "k", "n", "elem", "rows"), CASES[:4])
def test_ascend950_costs_the_published_a5_figures(m, k, n, elem, rows):
    got, want = busy(m, k, n, elem, "ascend950", rows), device(m, k, n, elem, A5, rows)
    for pipe, cycles in want.items():
        assert got[pipe] == pytest.approx(cycles, rel=1e-12), pipe


@pytest.mark.parametrize(
    ("m", "k", "n", "elem", "rows"), [(128, 128, 64, "bf16", None), (16, 32, 96, "f32", None), (32, 64, 24, "bf16", 20)]
)
def test_the_pypto020_calibration_prices_the_task_as_pypto_0_2_0(m, k, n, elem, rows):
    """No drain: MTE1 at the platform file's 512 / 256 B/cycle, the mmad by PyPTO 0.2.0's
    op-sim formula of its output tile, rows and columns padded to 16 (MACHINE.md: pr = 2,
    matmul r0 = 3.91153, r1 = 0.0107), whatever K; the fixpipe a GM copy of its output (the
    copy-out fixed cost, then whole 512-byte L2 lines at the model's 76 B/cycle)."""
    got = busy(m, k, n, elem, "ascend910b1-pypto020", rows)
    e, out = BYTES[elem], (rows or m) * n * BYTES[OUT[elem]]
    tile = math.ceil((rows or m) / 16) * 16 * math.ceil(n / 16) * 16 * e
    assert got["mte1"] == pytest.approx(m * k * e / 512 + k * n * e / 256, rel=1e-12)
    assert got["cube"] == math.floor((3.91153 * tile * 2 * 1e-6 + 0.0107) * 2000) + 1
    assert got["fixpipe"] == pytest.approx(300 + math.ceil(out / 512) * 512 / 76, rel=1e-12)


def test_the_pypto020_mmad_costs_pypto_s_traces():
    """The op-sim price against PyPTO 0.2.0's simulator's traces (bench/fidelity/
    PYPTO_NOTES.md (b)): K does not count; an accumulating mmad by its own coefficients."""
    from pto.interp.cost import CostModel
    from pto.targets import load_target

    c = CostModel(load_target("ascend910b1-pypto020"))
    assert [c.mmad(32, 512, 64, "bf16"), c.mmad(16, 128, 128, "bf16"), c.mmad(64, 128, 128, "bf16")] == [86, 86, 278]
    assert [c.mmad(16, 512, 32, "f32"), c.mmad(128, 256, 256, "i8"), c.mmad(16, 512, 24, "f32")] == [54, 535, 54]
    assert c.mmad(128, 128, 256, "bf16", acc=True) == math.floor((3.90376 * 128 * 256 * 4e-6 + 0.0103) * 2000) + 1


def test_a_bf16_128x256x64_step_is_mte1_bound_on_the_device_and_mad_bound_in_pypto020():
    """The issue's example: the same step changes its bound with the calibration."""
    dev, sim = busy(128, 256, 64, "bf16", "ascend910b1"), busy(128, 256, 64, "bf16", "ascend910b1-pypto020")
    assert dev["mte1"] > dev["cube"] and sim["mte1"] < sim["cube"]
