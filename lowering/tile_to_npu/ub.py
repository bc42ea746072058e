"""UB allocation for the vector tasks of `tile-to-npu`."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Attribute, SSAValue

from pto.dialects import npu
from pto.dialects.npu import BufferType, Space
from pto.targets import Target


@dataclass
class UbAllocator:
    """UB buffers of one vector task: bump allocation, plus holes that a task copy frees
    when a value is dead (first fit), so one copy reuses its own space. `offset` is the
    high-water mark. Freed space is reused only by later vector ops of the same copy:
    they run in order on the VECTOR pipe after every load of the copy."""

    target: Target
    offset: int = 0
    bufs: dict[SSAValue, SSAValue] = field(default_factory=dict)
    holes: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes), sorted
    sizes: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)

    def alloc(self, shape: list[int], elem: Attribute, loc) -> SSAValue:
        t = BufferType(shape, elem, Space.UB)
        block = self.target.block_bytes
        size = (t.nbytes() + block - 1) // block * block
        at = next((i for i, (_, n) in enumerate(self.holes) if n >= size), None)
        if at is None:
            off = self.offset
            self.offset += size
        else:
            off, n = self.holes.pop(at)
            if n > size:
                self.holes.insert(at, (off + size, n - size))
        op = npu.AllocOp(t, off)
        op.location = loc
        self.sizes[op.result] = (off, size)
        return op.result

    def free(self, buf: SSAValue) -> None:
        off, size = self.sizes.pop(buf)
        self.holes.append((off, size))
        self.holes.sort()
        merged: list[tuple[int, int]] = []
        for o, n in self.holes:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((o, n))
        self.holes = merged

    def new_copy(self) -> None:
        """A task copy of its own: no value, no reuse of another copy's space."""
        self.bufs, self.holes, self.sizes = {}, [], {}
