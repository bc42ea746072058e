"""Build every op of the three dialects from Python, verify it, print and re-parse it."""

import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
    bf16,
    f32,
    i1,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from pto.dialects import npu, pto, tile
from pto.dialects.common import (
    CachePolicy,
    CubeTileAttr,
    ReduceKind,
    ReduceKindAttr,
    RoundMode,
)
from pto.dialects.npu import BufferType, Pipe, Space
from pto.driver.registry import load_dialects

D = DYNAMIC_INDEX
i8, i32 = IntegerType(8), IntegerType(32)


def T(*shape, el=f32):
    return TensorType(el, list(shape))


def roundtrip(module: ModuleOp) -> None:
    module.verify()
    ctx = Context()
    load_dialects(ctx)
    for generic in (False, True):
        from io import StringIO

        from xdsl.printer import Printer

        s = StringIO()
        Printer(stream=s, print_generic_format=generic).print_op(module)
        again = Parser(ctx, s.getvalue()).parse_module()
        again.verify()
        assert str(again) == str(module)


def kernel(arg_types, build):
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        build(*block.args)
        func.ReturnOp()
    return ModuleOp([func.FuncOp("k", (arg_types, []), Region(block))])


def test_pto_ops_build_and_roundtrip():
    def build(x, g, w, row, wq, ws):
        n = pto.RmsNormOp(x, g, 1e-6, T(D, 64)).result
        nb = pto.CastOp(n, T(D, 64, el=bf16), RoundMode.RINT).result
        pto.MatmulOp(nb, w, T(D, 16), b_trans=True)
        for cls in (pto.AddOp, pto.SubOp, pto.MulOp, pto.DivOp):
            cls(n, row, T(D, 64))
        for cls in (pto.SqrtOp, pto.RsqrtOp, pto.AbsOp):
            cls(n)
        pto.MulsOp(n, 0.5)
        pto.AddsOp(n, 1e-6)
        for kind in ReduceKind:
            pto.ReduceOp(n, kind)
        q = pto.QuantOp(n)
        acc = pto.MatmulOp(q.quantized, wq, T(D, 16, el=i32), b_trans=True).result
        pto.DequantOp(acc, q.scale, ws)
        pto.ReshapeOp(n, T(D, 4, 16), inplace=True)
        pto.CastOp(n, T(D, 64, el=bf16), RoundMode.RINT)

    m = kernel([T(D, 64), T(64), T(16, 64, el=bf16), T(D, 1), T(16, 64, el=i8), T(16, 1)], build)
    roundtrip(m)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda x: pto.RmsNormOp(x, None, 1e-6, T(D, 32)), "differs from"),
        (lambda x: pto.CastOp(x, T(D, 64, el=i8), RoundMode.RINT), "no hardware conversion from f32 to i8"),
        (lambda x: pto.CastOp(x, T(D, 64, el=bf16), RoundMode.NONE), "rounds: give a round mode"),
        (lambda x: pto.MatmulOp(x, x, T(D, 64)), "reduction dims differ"),
        (lambda x: pto.ReshapeOp(x, T(D, 3, 7)), "element count differs"),
        (
            lambda x: pto.ReduceOp.create(
                operands=[x], properties={"kind": ReduceKindAttr(ReduceKind.SUM)}, result_types=[T(D, 64)]
            ),
            "result must be ?x1",
        ),
    ],
)
def test_pto_illegal_builds_fail_verification(make, message):
    def build(x):
        make(x)

    m = kernel([T(D, 64)], build)
    with pytest.raises(VerifyException) as e:
        m.verify()
    assert message in str(e.value)


def test_cube_tile_attr_checks():
    CubeTileAttr([128, 128], [256, 1024], [256, 256], split_k=True)
    with pytest.raises(VerifyException, match="L1 size 96 is not a multiple of L0 size 64"):
        CubeTileAttr([16, 16], [64, 96], [16, 16])
    with pytest.raises(VerifyException, match="exceeds L1 size"):
        CubeTileAttr([32, 16], [64, 64], [16, 16])


def test_tile_ops_build_and_roundtrip():
    idx = IndexType()

    def build(x, w, out):
        c0 = arith.ConstantOp.from_int_and_width(0, idx).result
        t = arith.ConstantOp.from_int_and_width(64, idx).result
        body = Block(arg_types=[idx])
        with ImplicitBuilder(body):
            (i,) = body.args
            xt = tile.LoadOp(x, T(8, 64, el=bf16), i, t).result
            wt = tile.LoadOp(w, T(16, 64, el=bf16), cache=CachePolicy.NONE_CACHEABLE).result
            vb = Block()
            with ImplicitBuilder(vb):
                n = tile.RmsNormOp(xt, None, 1e-6, T(8, 64)).result
                nb = tile.CastOp(n, T(8, 64, el=bf16), RoundMode.RINT).result
                for cls in (tile.AbsOp, tile.SqrtOp, tile.RsqrtOp):
                    cls(n)
                for cls in (tile.AddOp, tile.SubOp, tile.MulOp, tile.DivOp):
                    cls(n, n, T(8, 64))
                tile.MulsOp(n, 2.0)
                tile.AddsOp(n, 2.0)
                tile.ReduceOp(n, ReduceKind.MEAN)
                q = tile.QuantOp(n)
                tile.ReshapeOp(n, T(8, 4, 16), inplace=True)
                tile.YieldOp(nb, q.scale)
            vs = tile.VecStageOp("rmsnorm", Region(vb), [T(8, 64, el=bf16), T(8, 1)], [4, 64], 2)
            cb = Block()
            with ImplicitBuilder(cb):
                y = tile.MatmulOp(vs.outs[0], wt, T(8, 16), b_trans=True).result
                yi = tile.CastOp(y, T(8, 16, el=bf16), RoundMode.RINT).result
                tile.YieldOp(yi)
            cs = tile.CubeStageOp(
                "linear", Region(cb), [T(8, 16, el=bf16)], CubeTileAttr([8, 8], [64, 64], [16, 16]), 2, 1
            )
            d = tile.VecStageOp("dequant", Region(Block()), [])
            with ImplicitBuilder(d.body.block):
                tile.DequantOp(tile.CastOp(cs.outs[0], T(8, 16), RoundMode.NONE).result, vs.outs[1])
                tile.YieldOp()
            tile.StoreOp(cs.outs[0], out, i, t)
        tile.TokenLoopOp(c0, t, 8, Region(body), tail=True)

    roundtrip(kernel([T(D, 64, el=bf16), T(16, 64, el=bf16), T(D, 16, el=bf16)], build))


def test_tile_skeleton_rule_needs_one_cube_stage():
    idx = IndexType()

    def build():
        c0 = arith.ConstantOp.from_int_and_width(0, idx).result
        body = Block(arg_types=[idx])
        tile.TokenLoopOp(c0, c0, 4, Region(body))

    with pytest.raises(VerifyException, match="exactly one cube stage, found 0"):
        kernel([], build).verify()


def test_npu_ops_build_and_roundtrip():
    idx = IndexType()
    gm = BufferType([D, 64], bf16, Space.GM)

    def build(x, out):
        n = arith.ConstantOp.from_int_and_width(4, idx).result
        cube = Block(arg_types=[idx])
        with ImplicitBuilder(cube):
            (c,) = cube.args
            l1 = npu.AllocOp(BufferType([16, 64], bf16, Space.L1), 0).result
            a = npu.AllocOp(BufferType([16, 64], bf16, Space.L0A), 0).result
            b = npu.AllocOp(BufferType([64, 16], bf16, Space.L0B), 0).result
            acc = npu.AllocOp(BufferType([16, 16], f32, Space.L0C), 0).result
            first = arith.ConstantOp.from_int_and_width(0, i1).result
            npu.CrossCoreWaitOp(0, n)
            npu.DmaOp(Pipe.MTE2, x, [c, 0], l1, [0, 0], rows=n, cache=CachePolicy.NONE_CACHEABLE)
            npu.DmaOp(Pipe.MTE1, l1, [0, 0], a, [0, 0])
            npu.DmaOp(Pipe.MTE1, l1, [0, 0], b, [0, 0], transpose=True)
            npu.SetFlagOp(Pipe.MTE1, Pipe.CUBE, 0)
            npu.WaitFlagOp(Pipe.MTE1, Pipe.CUBE, 0)
            npu.MmadOp(a, b, acc, first)
            npu.FixpipeOp(acc, [0, 0], out, [c, 0], rows=n, round=RoundMode.RINT, atomic_add=True)
            npu.BarrierOp(Pipe.ALL)
        vec = Block(arg_types=[idx])
        with ImplicitBuilder(vec):
            (v,) = vec.args
            u = npu.AllocOp(BufferType([4, 64], bf16, Space.UB), 0).result
            f = npu.AllocOp(BufferType([4, 64], f32, Space.UB), 512).result
            s = npu.AllocOp(BufferType([4, 1], f32, Space.UB), 1536).result
            npu.DmaOp(Pipe.MTE2, x, [v, 0], u, [0, 0])
            npu.VCastOp(u, f, RoundMode.NONE)
            for cls in (npu.VAddOp, npu.VSubOp, npu.VMulOp, npu.VDivOp, npu.VMaxOp, npu.VMinOp):
                cls(f, s, f)
            for cls in (npu.VSqrtOp, npu.VRsqrtOp, npu.VAbsOp, npu.VExpOp):
                cls(s, s)
            for cls in (npu.VMulsOp, npu.VAddsOp, npu.VMaxsOp, npu.VMinsOp):
                cls(s, 0.5, s)
            npu.VDupOp(0.0, s)
            npu.VReduceOp(ReduceKind.ABSMAX, f, s)
            npu.VCastOp(f, u, RoundMode.RINT)
            npu.DmaOp(Pipe.MTE3, u, [0, 0], x, [v, 0])
            npu.CrossCoreSetOp(0)
        npu.AllocOp(gm, dyn_sizes=[n])
        npu.LaunchOp(24, Region(cube), 48, Region(vec))

    roundtrip(kernel([gm, BufferType([D, 16], bf16, Space.GM)], build))


def test_npu_capacity_error_names_buffer_space_and_bytes():
    def build():
        vec = Block(arg_types=[IndexType()])
        with ImplicitBuilder(vec):
            npu.AllocOp(BufferType([256, 256], f32, Space.UB), 0)
        npu.LaunchOp(0, Region(), 1, Region(vec))

    with pytest.raises(VerifyException) as e:
        kernel([], build).verify()
    assert "!npu.buf<256x256xf32, ub> at offset 0 needs 262144 bytes of ub, but ascend910b1 has 196608" in str(e.value)


def test_npu_illegal_data_path():
    def build(x):
        cube = Block(arg_types=[IndexType()])
        with ImplicitBuilder(cube):
            acc = npu.AllocOp(BufferType([16, 16], f32, Space.L0C), 0).result
            l1 = npu.AllocOp(BufferType([16, 16], f32, Space.L1), 0).result
            npu.DmaOp(Pipe.MTE1, acc, [0, 0], l1, [0, 0])
        npu.LaunchOp(1, Region(cube), 0, Region())

    with pytest.raises(VerifyException, match="no data path l0c -> l1|has no data path"):
        kernel([BufferType([D, 16], f32, Space.GM)], build).verify()


def test_every_pto_op_has_its_tile_twin():
    """pto-to-tile turns each pto op into `tile.TWIN[type(op)]`: the same op on one static tile."""
    from pto.dialects import pto as pto_d
    from pto.dialects import tile as tile_d

    assert set(tile_d.TWIN) == set(pto_d.PTO.operations)
    for p, t in tile_d.TWIN.items():
        assert t.name == p.name.replace("pto.", "tile.", 1) and t.STATIC_SHAPES and not p.STATIC_SHAPES
        assert set(t.__mro__) >= set(p.__mro__[1:])  # the checks of the pto op's base, not a copy
