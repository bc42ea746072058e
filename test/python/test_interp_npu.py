"""npu-level interpreter: every instruction's numerics, the timing model (overlap,
serialisation, flags, multi-core), and the run-time errors."""

from __future__ import annotations

import numpy as np
import pytest
from kernels import parse

from pto.interp.machine import MachineError
from pto.interp.run import ENGINES, run
from pto.interp.scheduler import DeadlockError


@pytest.fixture(autouse=True, params=["interp", "compiled"])
def engine(request, monkeypatch):
    """Every test here runs on both engines (the default engine is the one tested)."""
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", request.param)
    return request.param


def kernel(
    body: str,
    args: str = "%x: !npu.buf<8x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}",
    vector: int = 1,
    cube: str = "",
) -> str:
    launch = f"npu.launch {cube} vector {vector} (%v) {{\n{body}\n    }}" if vector else f"npu.launch {cube}"
    return f"func.func @k({args}) {{\n    {launch}\n    func.return\n}}"


def run_ir(text: str, *inputs, trace: bool = True, **kw):
    return run(parse(text), list(inputs), trace=trace, **kw)


UB = "!npu.buf<8x64xf32, ub>"
LOAD = f"""
      %a = npu.alloc ub [0] : {UB}
      %b = npu.alloc ub [2048] : {UB}
      %d = npu.alloc ub [4096] : {UB}
      npu.dma mte2 %x[0, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> {UB}
      npu.dma mte2 %x[0, 0] -> %b[0, 0] : !npu.buf<8x64xf32, gm> -> {UB}"""
STORE = f"npu.dma mte3 %d[0, 0] -> %out[0, 0] : {UB} -> !npu.buf<8x64xf32, gm>"


@pytest.mark.parametrize(
    ("ins", "fn"),
    [
        # %b holds -0.5 * x, so that an op with its operands swapped or one ignored is wrong
        (f"npu.vadd %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: x + -0.5 * x),
        (f"npu.vsub %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: x - -0.5 * x),
        (f"npu.vmul %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: x * (-0.5 * x)),
        (f"npu.vdiv %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: x / (-0.5 * x)),
        (f"npu.vmax %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: np.maximum(x, -0.5 * x)),
        (f"npu.vmin %a, %b -> %d : {UB}, {UB} -> {UB}", lambda x: np.minimum(x, -0.5 * x)),
        (f"npu.vabs %a -> %d : {UB} -> {UB}", np.abs),
        (f"npu.vexp %a -> %d : {UB} -> {UB}", np.exp),
        (f"npu.vln %a -> %d : {UB} -> {UB}", lambda x: np.log(np.abs(x))),
        (f"npu.vsqrt %a -> %d : {UB} -> {UB}", lambda x: np.sqrt(np.abs(x))),
        (f"npu.vrsqrt %a -> %d : {UB} -> {UB}", lambda x: 1 / np.sqrt(np.abs(x))),
        (f"npu.vmuls %a, 3.0 -> %d : {UB} -> {UB}", lambda x: x * 3),
        (f"npu.vadds %a, -1.5 -> %d : {UB} -> {UB}", lambda x: x - 1.5),
        (f"npu.vmaxs %a, 0.0 -> %d : {UB} -> {UB}", lambda x: np.maximum(x, 0)),
        (f"npu.vmins %a, 0.0 -> %d : {UB} -> {UB}", lambda x: np.minimum(x, 0)),
        (f"npu.vdup 7.0 -> %d : {UB}", lambda x: np.full_like(x, 7)),
    ],
)
def test_vector_instruction(ins: str, fn) -> None:
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    if "sqrt" in ins or "vln" in ins:
        x = np.abs(x) + 0.1
    sync = (
        f"npu.set_flag mte2 -> vector, 0\n      npu.wait_flag mte2 -> vector, 0\n"
        f"      npu.vmuls %b, -0.5 -> %b : {UB} -> {UB}"
    )
    out = run_ir(
        kernel(
            f"{LOAD}\n      {sync}\n      {ins}\n      npu.set_flag vector -> mte3, 0\n"
            f"      npu.wait_flag vector -> mte3, 0\n      {STORE}"
        ),
        x,
    ).outputs[0]
    np.testing.assert_allclose(out, fn(x), rtol=1e-6)


def test_vreduce_and_broadcast_and_vcast() -> None:
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    body = f"""{LOAD}
      %s = npu.alloc ub [6144] : !npu.buf<8x1xf32, ub>
      %m = npu.alloc ub [6176] : !npu.buf<8x1xf32, ub>
      npu.vreduce sum %a -> %s : {UB} -> !npu.buf<8x1xf32, ub>
      npu.vreduce absmax %a -> %m : {UB} -> !npu.buf<8x1xf32, ub>
      npu.vadd %s, %m -> %s : !npu.buf<8x1xf32, ub>, !npu.buf<8x1xf32, ub> -> !npu.buf<8x1xf32, ub>
      npu.vmul %a, %s -> %d : {UB}, !npu.buf<8x1xf32, ub> -> {UB}
      %h = npu.alloc ub [8192] : !npu.buf<8x64xbf16, ub>
      npu.vcast %d -> %h trunc : {UB} -> !npu.buf<8x64xbf16, ub>
      npu.vcast %h -> %d none : !npu.buf<8x64xbf16, ub> -> {UB}
      {STORE}"""
    out = run_ir(kernel(body), x).outputs[0]
    s = x.sum(-1, keepdims=True) + np.abs(x).max(-1, keepdims=True)
    want = (x * s).view(np.uint32) & np.uint32(0xFFFF0000)
    np.testing.assert_allclose(out, want.view(np.float32), rtol=1e-5)


CUBE_ARGS = (
    "%a: !npu.buf<32x64xi8, gm>, %b: !npu.buf<64x16xi8, gm>, %out: !npu.buf<32x16xf32, gm> {pto.output}, "
    "%o1: !npu.buf<32x16xi32, gm> {pto.output}"
)
CUBE = """cube 1 (%c) {
      %a1 = npu.alloc l1 [0] : !npu.buf<32x64xi8, l1>
      %b1 = npu.alloc l1 [2048] : !npu.buf<16x64xi8, l1>
      %a0 = npu.alloc l0a [0] : !npu.buf<32x64xi8, l0a>
      %b0 = npu.alloc l0b [0] : !npu.buf<64x16xi8, l0b>
      %acc = npu.alloc l0c [0] : !npu.buf<32x16xi32, l0c>
      %l1o = npu.alloc l1 [4096] : !npu.buf<32x16xi32, l1>
      %t = arith.constant true
      npu.dma mte2 %a[0, 0] -> %a1[0, 0] : !npu.buf<32x64xi8, gm> -> !npu.buf<32x64xi8, l1>
      npu.dma mte2 %bt[0, 0] -> %b1[0, 0] transpose : !npu.buf<64x16xi8, gm> -> !npu.buf<16x64xi8, l1>
      npu.dma mte1 %a1[0, 0] -> %a0[0, 0] : !npu.buf<32x64xi8, l1> -> !npu.buf<32x64xi8, l0a>
      npu.dma mte1 %b1[0, 0] -> %b0[0, 0] transpose : !npu.buf<16x64xi8, l1> -> !npu.buf<64x16xi8, l0b>
      npu.mmad %a0, %b0 -> %acc : !npu.buf<32x64xi8, l0a>, !npu.buf<64x16xi8, l0b> -> !npu.buf<32x16xi32, l0c>
      npu.mmad %a0, %b0 -> %acc acc %t : !npu.buf<32x64xi8, l0a>, !npu.buf<64x16xi8, l0b> -> !npu.buf<32x16xi32, l0c>
      npu.fixpipe %acc[0, 0] -> %out[0, 0] round rint deq 0.5 : !npu.buf<32x16xi32, l0c> -> !npu.buf<32x16xf32, gm>
      npu.fixpipe %acc[0, 0] -> %l1o[0, 0] : !npu.buf<32x16xi32, l0c> -> !npu.buf<32x16xi32, l1>
      npu.barrier all
      npu.fixpipe %acc[0, 0] -> %o1[0, 0] : !npu.buf<32x16xi32, l0c> -> !npu.buf<32x16xi32, gm>
    }"""


def test_cube_int8_with_transposes_accumulate_and_deq() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    # b reaches L0B through two transposes (GM -> L1 and L1 -> L0B).
    text = kernel("", CUBE_ARGS.replace("%b:", "%bt:"), vector=0, cube=CUBE)
    r = run_ir(text, a, b)
    acc = 2 * (a.astype(np.int64) @ b.astype(np.int64))
    np.testing.assert_array_equal(r.outputs[1], acc.astype(np.int32))
    np.testing.assert_allclose(r.outputs[0], acc * 0.5)


def test_reshape_dim_and_tail_rows() -> None:
    text = kernel(
        """
      %t = npu.dim %x, 0 : !npu.buf<?x2x32xf32, gm>
      %flat = npu.reshape %x : !npu.buf<?x2x32xf32, gm> -> !npu.buf<?x64xf32, gm>
      %a = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
      npu.vdup 9.0 -> %a : !npu.buf<8x64xf32, ub>
      npu.dma mte2 %flat[0, 0] -> %a[0, 0] rows %t : !npu.buf<?x64xf32, gm> -> !npu.buf<8x64xf32, ub>
      npu.vadds %a, 1.0 -> %a : !npu.buf<8x64xf32, ub> -> !npu.buf<8x64xf32, ub>
      npu.dma mte3 %a[0, 0] -> %out[0, 0] : !npu.buf<8x64xf32, ub> -> !npu.buf<8x64xf32, gm>""",
        "%x: !npu.buf<?x2x32xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}",
    )
    x = np.arange(3 * 64, dtype=np.float32).reshape(3, 2, 32)
    out = run_ir(text, x).outputs[0]
    np.testing.assert_array_equal(out[:3], x.reshape(3, 64) + 1)
    np.testing.assert_array_equal(out[3:], 1.0)  # a tail load zero-fills the rest of the tile


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("numerics", [True, False])
def test_tail_columns(engine: str, numerics: bool) -> None:
    """`cols`: a load of a ragged tail's valid columns zero-fills the rest of the tile
    (and `rows` its rows), a store writes only them, and the L2 and HBM figures count
    only their lines."""
    text = kernel(
        """
      %c3 = arith.constant 3 : index
      %c40 = arith.constant 40 : index
      %a = npu.alloc ub [0] : !npu.buf<4x512xf32, ub>
      npu.vdup 9.0 -> %a : !npu.buf<4x512xf32, ub>
      npu.dma mte2 %x[0, 0] -> %a[0, 0] rows %c3 cols %c40 : !npu.buf<8x512xf32, gm> -> !npu.buf<4x512xf32, ub>
      npu.vadds %a, 1.0 -> %a : !npu.buf<4x512xf32, ub> -> !npu.buf<4x512xf32, ub>
      npu.dma mte3 %a[0, 0] -> %out[2, 0] : !npu.buf<4x512xf32, ub> -> !npu.buf<8x512xf32, gm>
      %c2 = arith.constant 2 : index
      %c6 = arith.constant 6 : index
      npu.dma mte3 %a[0, 0] -> %out[%c6, 0] rows %c2 cols %c40 : !npu.buf<4x512xf32, ub> -> !npu.buf<8x512xf32, gm>""",
        "%x: !npu.buf<8x512xf32, gm>, %out: !npu.buf<8x512xf32, gm> {pto.output}",
    )
    x = np.arange(8 * 512, dtype=np.float32).reshape(8, 512)
    r = run_ir(text, x, engine=engine, numerics=numerics)
    want = np.zeros((8, 512), np.int32)
    want[2:6], want[6:, :40] = 1, 1
    np.testing.assert_array_equal(r.write_counts[0], want)
    t = r.report.tensors
    # three runs of 160 bytes, one 512-byte L2 line each (of the rows' four)
    assert (t["x"]["hits"] + t["x"]["misses"], t["x"]["bursts"]) == (3, 3)
    if numerics:
        got = r.outputs[0]
        np.testing.assert_array_equal(got[2:5, :40], x[:3, :40] + 1)
        np.testing.assert_array_equal(got[2:6, 40:], 1.0)  # zero-filled columns, plus one
        np.testing.assert_array_equal(got[5], 1.0)  # and a zero-filled row
        np.testing.assert_array_equal(got[6:, :40], x[:2, :40] + 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_tail_copy_touches_no_line(engine: str) -> None:
    """A copy of 0 valid columns (the second half of a ragged K's last weight slice, past
    K) moves nothing: no L2 line, no HBM byte, no burst, though its rows start mid-line."""
    text = kernel(
        """
      %c0 = arith.constant 0 : index
      %a = npu.alloc ub [0] : !npu.buf<8x16xf32, ub>
      npu.dma mte2 %x[0, 50] -> %a[0, 0] cols %c0 : !npu.buf<8x100xf32, gm> -> !npu.buf<8x16xf32, ub>""",
        "%x: !npu.buf<8x100xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}",
    )
    got = run_ir(text, np.ones((8, 100), np.float32), engine=engine).report.tensors["x"]
    assert (got["hits"], got["misses"], got["hbm_read"], got["bursts"]) == (0, 0, 0, 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_writes_through_a_reshape_of_an_output_are_counted_where_they_land(engine: str) -> None:
    """A tile written through a reshaped view counts on the output's own elements."""
    text = kernel(
        """
      %wide = npu.reshape %out : !npu.buf<8x64xf32, gm> -> !npu.buf<16x32xf32, gm>
      %a = npu.alloc ub [0] : !npu.buf<2x32xf32, ub>
      npu.vdup 5.0 -> %a : !npu.buf<2x32xf32, ub>
      npu.dma mte3 %a[0, 0] -> %wide[3, 0] : !npu.buf<2x32xf32, ub> -> !npu.buf<16x32xf32, gm>"""
    )
    r = run_ir(text, np.zeros((8, 64), np.float32), engine=engine)
    want = np.zeros(8 * 64, np.int32)
    want[3 * 32 : 5 * 32] = 1  # rows 3-4 of the 16x32 view: the second half of row 1, the first of row 2
    np.testing.assert_array_equal(r.write_counts[0], want.reshape(8, 64))
    np.testing.assert_array_equal(r.outputs[0].reshape(-1)[want == 1], 5.0)


@pytest.mark.parametrize(
    ("view", "tile", "at", "where"),
    [
        ("4x4x32", "2x2x32", "[1, 2, 0]", (slice(1, 3), slice(2, 4), slice(None))),
        ("512", "48", "[100]", (slice(100, 148),)),
    ],
)
def test_writes_through_a_rank_1_or_3_reshape_of_an_output_are_counted(view, tile, at, where) -> None:
    """A tile of another rank than 2 counts where it lands too: a rank-3 tile on its
    rows of each plane it spans, a rank-1 tile on its run of elements."""
    gm, ub = f"!npu.buf<{view}xf32, gm>", f"!npu.buf<{tile}xf32, ub>"
    zero = "[" + ", ".join("0" for _ in view.split("x")) + "]"
    text = kernel(
        f"""
      %r = npu.reshape %out : !npu.buf<8x64xf32, gm> -> {gm}
      %a = npu.alloc ub [0] : {ub}
      npu.vdup 5.0 -> %a : {ub}
      npu.dma mte3 %a{zero} -> %r{at} : {ub} -> {gm}"""
    )
    r = run_ir(text, np.zeros((8, 64), np.float32))
    want = np.zeros([int(d) for d in view.split("x")], np.int32)
    want[where] = 1
    np.testing.assert_array_equal(r.write_counts[0], want.reshape(8, 64))
    np.testing.assert_array_equal(r.outputs[0][want.reshape(8, 64) == 1], 5.0)


# ------------------------------------------------------------------------- timing


def events(r, pipe: str | None = None):
    return [e for e in r.report.events if pipe is None or e.pipe == pipe]


def test_different_pipes_overlap_unless_ordered() -> None:
    x = np.ones((8, 64), np.float32)
    indep = f"""{LOAD}
      npu.vdup 1.0 -> %d : {UB}
      npu.vmuls %d, 2.0 -> %d : {UB} -> {UB}"""
    flagged = f"""{LOAD}
      npu.set_flag mte2 -> vector, 0
      npu.wait_flag mte2 -> vector, 0
      npu.vdup 1.0 -> %d : {UB}
      npu.vmuls %d, 2.0 -> %d : {UB} -> {UB}"""
    dep = f"""{LOAD}
      npu.vmuls %a, 2.0 -> %d : {UB} -> {UB}"""
    ri, rf, rd = (run_ir(kernel(b + "\n      " + STORE), x) for b in (indep, flagged, dep))
    dma_end = max(e.start + e.dur for e in events(ri, "mte2"))
    assert min(e.start for e in events(ri, "vector")) < dma_end  # ran during the loads
    assert min(e.start for e in events(rf, "vector")) >= max(e.start + e.dur for e in events(rf, "mte2"))
    assert min(e.start for e in events(rd, "vector")) >= events(rd, "mte2")[0].start + events(rd, "mte2")[0].dur
    assert ri.report.cycles < rf.report.cycles


def test_one_pipe_serialises() -> None:
    r = run_ir(kernel(LOAD + "\n      " + STORE), np.ones((8, 64), np.float32))
    first, second = events(r, "mte2")
    assert second.start >= first.start + first.cycles  # after the first one's occupancy
    assert second.start < first.start + first.dur  # but DMAs pipeline: not after its latency


def test_cores_run_in_parallel() -> None:
    x = np.ones((8, 64), np.float32)
    work = f"""
      %a = npu.alloc ub [0] : {UB}
      npu.vdup 1.0 -> %a : {UB}
      npu.vexp %a -> %a : {UB} -> {UB}
      npu.vexp %a -> %a : {UB} -> {UB}"""
    one = run_ir(kernel(work, vector=1), x).report
    two = run_ir(kernel(work, vector=2), x).report
    twice = run_ir(
        kernel(
            work
            + work.replace("%a = npu.alloc ub [0]", "%a2 = npu.alloc ub [0]")
            .replace("%a ", "%a2 ")
            .replace("%a\n", "%a2\n")
            .replace("%a,", "%a2,"),
            vector=1,
        ),
        x,
    ).report
    assert two.cycles == one.cycles
    assert twice.cycles > one.cycles


def test_cross_core_wait_waits_for_the_other_core() -> None:
    text = kernel(
        f"""
      %a = npu.alloc ub [0] : {UB}
      %one = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %v, %c0 : index
      scf.if %first {{
        npu.vdup 2.0 -> %a : {UB}
        npu.vexp %a -> %a : {UB} -> {UB}
        npu.set_flag vector -> mte3, 0
        npu.wait_flag vector -> mte3, 0
        npu.dma mte3 %a[0, 0] -> %out[0, 0] : {UB} -> !npu.buf<8x64xf32, gm>
        npu.cross_core_set 5
      }} else {{
        npu.cross_core_wait 5, %one
        npu.dma mte2 %out[0, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> {UB}
      }}""",
        vector=2,
    )
    r = run_ir(text, np.ones((8, 64), np.float32))
    w = [e for e in events(r) if e.core == "aiv0" and e.name == "npu.dma"][0]
    rd = [e for e in events(r) if e.core == "aiv1" and e.name == "npu.dma"][0]
    assert rd.start >= w.start + w.dur
    np.testing.assert_allclose(r.outputs[0], np.exp(2.0), rtol=1e-6)


@pytest.mark.parametrize("count", [0, -1])
def test_a_cross_core_wait_for_no_sets_does_not_wait(count: int) -> None:
    """A wait for count <= 0 sets is done at once and costs nothing: the flag is never
    set here."""
    body = f"""
      %a = npu.alloc ub [0] : {UB}
      %n = arith.constant {count} : index
      npu.vdup 2.0 -> %a : {UB}
      WAIT
      npu.set_flag vector -> mte3, 0
      npu.wait_flag vector -> mte3, 0
      npu.dma mte3 %a[0, 0] -> %out[0, 0] : {UB} -> !npu.buf<8x64xf32, gm>"""
    x = np.ones((8, 64), np.float32)
    plain = run_ir(kernel(body.replace("WAIT", "")), x)
    r = run_ir(kernel(body.replace("WAIT", "npu.cross_core_wait 9, %n")), x)
    np.testing.assert_array_equal(r.outputs[0], 2.0)
    assert r.report.to_json() == plain.report.to_json()


# ------------------------------------------------------------------------- errors


def test_wait_without_set_is_an_error() -> None:
    with pytest.raises(MachineError, match="was never set"):
        run_ir(kernel("npu.wait_flag mte2 -> vector, 3"), np.ones((8, 64), np.float32))


def test_deadlock_is_reported() -> None:
    text = kernel(
        """
      %n = arith.constant 3 : index
      npu.cross_core_wait 9, %n""",
        vector=2,
    )
    with pytest.raises(DeadlockError, match="aiv0 waits for cross-core flag 9"):
        run_ir(text, np.ones((8, 64), np.float32))


def test_out_of_bounds_dma_names_the_buffer() -> None:
    text = kernel(
        f"""
      %a = npu.alloc ub [0] : {UB}
      %i = arith.constant 4 : index
      npu.dma mte2 %x[%i, 0] -> %a[0, 0] : !npu.buf<?x64xf32, gm> -> {UB}""",
        "%x: !npu.buf<?x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}",
    )
    with pytest.raises(MachineError, match=r"source \[4, \+8\) of axis 0 is outside x \(6x64, 1536 bytes\)"):
        run_ir(text, np.ones((6, 64), np.float32))


def test_cube_op_outside_launch_is_an_error() -> None:
    text = f"""func.func @k(%x: !npu.buf<8x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {{pto.output}}) {{
      %a = npu.alloc ub [0] : {UB}
      func.return
    }}"""
    with pytest.raises(MachineError, match="runs on a core"):
        run_ir(text, np.ones((8, 64), np.float32))


def test_barrier_and_scalar_wait_order_later_ops() -> None:
    x = np.ones((8, 64), np.float32)
    for sync in ("npu.set_flag mte2 -> scalar, 0\n      npu.wait_flag mte2 -> scalar, 0", "npu.barrier all"):
        r = run_ir(
            kernel(f"""{LOAD}
      {sync}
      npu.vdup 1.0 -> %d : {UB}
      npu.barrier vector
      npu.vmuls %d, 2.0 -> %d : {UB} -> {UB}
      {STORE}"""),
            x,
        )
        dma_done = max(e.start + e.dur for e in events(r, "mte2"))
        assert min(e.start for e in events(r, "vector")) >= dma_done, sync


@pytest.mark.parametrize("engine", ENGINES)
def test_vln_takes_what_vexp_takes(engine: str) -> None:
    """PyPTO 0.2.0's simulator prices its LN as its EXP (measured): the same vector busy
    cycles here, more than an instruction priced at the default."""
    x = np.abs(np.random.default_rng(1).standard_normal((8, 64))).astype(np.float32) + 0.1

    def busy(ins: str) -> int:
        body = f"{LOAD}\n      npu.set_flag mte2 -> vector, 0\n      npu.wait_flag mte2 -> vector, 0\n      {ins}"
        return sum(e.cycles for e in events(run_ir(kernel(body), x, engine=engine), "vector"))

    ln, exp = busy(f"npu.vln %a -> %d : {UB} -> {UB}"), busy(f"npu.vexp %a -> %d : {UB} -> {UB}")
    assert ln == exp > busy(f"npu.vabs %a -> %d : {UB} -> {UB}")


def test_write_counts_are_counted_when_first_read_and_kept() -> None:
    """A run's write counts are counted on their first read, not in the run (a timing
    run never reads them), from the writes the run noted; the same arrays after that."""
    text = kernel(
        """
      %a = npu.alloc ub [0] : !npu.buf<2x64xf32, ub>
      npu.vdup 5.0 -> %a : !npu.buf<2x64xf32, ub>
      npu.dma mte3 %a[0, 0] -> %out[1, 0] : !npu.buf<2x64xf32, ub> -> !npu.buf<8x64xf32, gm>
      npu.dma mte3 %a[0, 0] -> %out[2, 0] : !npu.buf<2x64xf32, ub> -> !npu.buf<8x64xf32, gm>"""
    )
    r = run_ir(text, np.zeros((8, 64), np.float32))
    assert "write_counts" not in vars(r)  # not counted yet
    want = np.zeros((8, 64), np.int32)
    want[1] = want[3] = 1
    want[2] = 2
    np.testing.assert_array_equal(r.write_counts[0], want)
    r.write_counts[0][0, 0] = 7  # (kept: a second read is the same list of arrays)
    assert r.write_counts[0][0, 0] == 7
