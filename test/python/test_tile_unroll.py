"""The remainder cascade of tile-unroll covers every token exactly once, for any factor
list, with bounds evaluated from the emitted IR (dynamic token count) and from the
compile-time schedule (constant token count)."""

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.parser import Parser

from pto.dialects import tile
from pto.driver.registry import load_dialects
from pto.passes.tile_unroll import TileUnrollPass, normalise, schedule

KERNEL = """
func.func @k(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
"""

TOKENS = [0, 1, 2, 15, 16, 17, 127, 128, 129, 300]
LISTS = [[4, 3, 1], [5, 2], [128, 64, 32, 16, 8, 1], [128, 64, 32, 16, 1], [256, 64, 16, 4, 1], [16], [7, 5, 3]]


def unrolled(factors):
    ctx = Context()
    load_dialects(ctx)
    module = Parser(ctx, KERNEL).parse_module()
    TileUnrollPass(factors=tuple(factors)).apply(ctx, module)
    module.verify()
    return module


def tiles_from_ir(module, tokens):
    """Evaluate the bound arithmetic the pass emitted, for a run with `tokens` tokens."""
    env = {}
    ops = {
        arith.SubiOp: lambda a, b: a - b,
        arith.DivUIOp: lambda a, b: a // b,
        arith.MuliOp: lambda a, b: a * b,
        arith.AddiOp: lambda a, b: a + b,
    }
    tiles = []
    for op in module.walk():
        if isinstance(op, arith.ConstantOp):
            env[op.result] = op.value.value.data
        elif isinstance(op, tensor.DimOp):
            env[op.result] = tokens
        elif type(op) in ops:
            env[op.results[0]] = ops[type(op)](env[op.lhs], env[op.rhs])
        elif isinstance(op, tile.TokenLoopOp):
            rows = {r.type.get_shape()[0] for r in op.body.walk() if isinstance(r, tile.LoadOp) for r in r.results}
            assert rows == {op.rows}, "the body is specialised to the loop's tile height"
            tiles += [(i, op.rows) for i in range(env[op.lower], env[op.upper], op.rows)]
    return tiles


def assert_exact_cover(tiles, tokens):
    covered = []
    for start, rows in tiles:
        assert start + rows <= tokens, f"tile at {start} of {rows} rows overruns {tokens}"
        covered += range(start, start + rows)
    assert sorted(covered) == list(range(tokens)), "every token exactly once"


@pytest.mark.parametrize("factors", LISTS, ids=str)
def test_dynamic_cascade_covers_every_token_once(factors):
    module = unrolled(factors)
    for t in TOKENS:
        assert_exact_cover(tiles_from_ir(module, t), t)


@pytest.mark.parametrize("factors", LISTS, ids=str)
def test_static_schedule_covers_every_token_once(factors):
    for t in TOKENS:
        sched = schedule(0, t, normalise(factors))
        assert_exact_cover([(i, f) for b, e, f in sched for i in range(b, e, f)], t)
        assert all(e > b for b, e, _ in sched), "no empty loops"


def test_seed_example_and_normalisation():
    # SK03.md: T=11, [4,2,1] -> (0,4) (4,4) (8,2) (10,1)
    sched = schedule(0, 11, normalise([4, 2, 1]))
    assert [(i, f) for b, e, f in sched for i in range(b, e, f)] == [(0, 4), (4, 4), (8, 2), (10, 1)]
    assert normalise([2, 64, 2]) == [64, 2, 1]
    assert normalise([1]) == [1]


def test_pypto_overrun_case_is_correct_here():
    # [4,3,1] with T=10: PyPTO 0.2.0 schedules a 3-token tile at 8; here 3 does not fit.
    sched = schedule(0, 10, normalise([4, 3, 1]))
    assert sched == [(0, 8, 4), (8, 10, 1)]
