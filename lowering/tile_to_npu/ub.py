"""UB buffers of the vector tasks of `tile-to-npu`, placed by `planning.ub.Arena` (the
rule the phase plan was measured with)."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Attribute, SSAValue

from pto.dialects import npu
from pto.dialects.common import elem_name
from pto.dialects.npu import BufferType, Space
from pto.planning.ub import Arena
from pto.targets import Target


@dataclass
class UbAllocator:
    """The `npu.alloc`s of one vector task. Freed space is reused only by later vector
    ops of the same copy: they run in order on the VECTOR pipe after every load of the copy."""

    target: Target
    arena: Arena = field(init=False)
    bufs: dict[SSAValue, SSAValue] = field(default_factory=dict)
    sizes: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)
    kinds: dict[SSAValue, tuple] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.arena = Arena(self.target.block_bytes)

    @property
    def offset(self) -> int:
        return self.arena.offset

    def alloc(self, shape: list[int], elem: Attribute, loc) -> SSAValue:
        t = BufferType(shape, elem, Space.UB)
        kind = (elem_name(elem), tuple(shape))  # (as planning.ub_ops.Copy names it)
        off, size = self.arena.alloc(t.nbytes(), kind)
        op = npu.AllocOp(t, off)
        op.location = loc
        self.sizes[op.result] = (off, size)
        self.kinds[op.result] = kind
        return op.result

    def free(self, buf: SSAValue) -> None:
        self.kinds.pop(buf, None)
        self.arena.free(*self.sizes.pop(buf))

    def free_slot(self, buf: SSAValue) -> None:
        """Free `buf` for a later buffer of its element type and shape only."""
        off, _ = self.sizes.pop(buf)
        self.arena.free_slot(off, self.kinds.pop(buf))

    def new_copy(self) -> None:
        """A task copy of its own: no value, no reuse of another copy's space."""
        self.bufs, self.sizes, self.kinds = {}, {}, {}
        self.arena.new_copy()
