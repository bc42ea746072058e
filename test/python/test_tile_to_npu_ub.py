"""tile-to-npu's UB allocator: dead buffers are reused within a task copy, never across."""

from __future__ import annotations

import itertools
import math
import re

from xdsl.builder import ImplicitBuilder
from xdsl.dialects.builtin import f32
from xdsl.ir import Block

from pto.lowering.tile_to_npu.ub import UbAllocator
from pto.targets import load_target


def test_first_fit_reuse_merge_and_copies() -> None:
    with ImplicitBuilder(Block()):
        ub = UbAllocator(load_target())
        a = ub.alloc([8, 64], f32, None)  # 2048 bytes at 0
        b = ub.alloc([8, 64], f32, None)  # at 2048
        c = ub.alloc([1, 8], f32, None)  # 32 bytes at 4096
        assert ub.offset == 4128
        ub.free(a)
        ub.free(b)  # merged into one 4096-byte hole at 0
        d = ub.alloc([16, 64], f32, None)  # fits the merged hole
        assert d.owner.offset.value.data == 0 and ub.offset == 4128
        ub.free(c)
        e = ub.alloc([1, 4], f32, None)  # 16 bytes round up to one 32-byte block
        assert e.owner.offset.value.data == 4096
        ub.new_copy()  # the next copy does not reuse this one's holes
        f = ub.alloc([1, 8], f32, None)
        assert f.owner.offset.value.data == 4128 and ub.offset == 4160


ELEM = {"f32": 4, "i32": 4, "bf16": 2, "f16": 2, "i8": 1}


def test_int8_phase_reuses_dead_buffers() -> None:
    from kernels import example, lowered

    text = str(lowered(example("indexer_query_linear_int8.mlir")))
    body = text[text.index('npu.tasks "q-rmsnorm.128" vector') :]
    body = body[: body.index("npu.tasks", 10)]  # the first vector group's task
    lines = body.splitlines()
    bufs = []  # (name, first line, last line that names it, [start, end) bytes)
    for i, line in enumerate(lines):
        m = re.match(r"\s*(%[\w.]+) = npu.alloc ub \[(\d+)\] : !npu.buf<([\dx]+)x(\w+), ub>", line)
        if m:
            name, off = m.group(1), int(m.group(2))
            n = math.prod(int(d) for d in m.group(3).split("x")) * ELEM[m.group(4)]
            last = max(j for j, ln in enumerate(lines) if re.search(re.escape(name) + r"\b", ln))
            bufs.append((name, i, last, off, off + n))
    reused = 0
    for a, b in itertools.combinations(bufs, 2):
        if a[3] < b[4] and b[3] < a[4]:  # they share bytes: then one is dead before the other lives
            assert a[2] <= b[1] or b[2] <= a[1], f"{a[0]} and {b[0]} overlap in UB while both are live"
            reused += 1
    assert reused > 0, "no UB space is reused within the task"
