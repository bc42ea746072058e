"""tile-to-npu's UB allocator: dead buffers are reused within a task copy, never across."""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects.builtin import f32
from xdsl.ir import Block

from pto.lowering.tile_to_npu.ub import UB
from pto.targets import load_target


def test_first_fit_reuse_merge_and_copies() -> None:
    with ImplicitBuilder(Block()):
        ub = UB(load_target())
        a = ub.alloc([8, 64], f32, None)      # 2048 bytes at 0
        b = ub.alloc([8, 64], f32, None)      # at 2048
        c = ub.alloc([1, 8], f32, None)       # 32 bytes at 4096
        assert ub.offset == 4128
        ub.free(a)
        ub.free(b)                             # merged into one 4096-byte hole at 0
        d = ub.alloc([16, 64], f32, None)      # fits the merged hole
        assert d.owner.offset.value.data == 0 and ub.offset == 4128
        ub.free(c)
        e = ub.alloc([1, 4], f32, None)        # 16 bytes round up to one 32-byte block
        assert e.owner.offset.value.data == 4096
        ub.new_copy()                          # the next copy does not reuse this one's holes
        f = ub.alloc([1, 8], f32, None)
        assert f.owner.offset.value.data == 4128 and ub.offset == 4160


def test_int8_phase_reuses_dead_buffers() -> None:
    from kernels import example, lowered

    text = str(lowered(example("indexer_query_linear_int8.mlir")))
    body = text[text.index('npu.tasks "q-rmsnorm.128" vector'):]
    body = body[:body.index("npu.tasks", 10)]  # the first vector group's task
    offsets = [line.split("[")[1].split("]")[0] for line in body.splitlines() if "npu.alloc ub [" in line]
    assert len(offsets) > len(set(offsets)), "no UB offset is reused within the task"
