"""The UB arena of one vector task: the one allocation rule the planner measures with
and tile-to-npu allocates with, so that a plan that fits is a task that fits."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Arena:
    """Bump allocation plus first-fit reuse of freed holes (a copy reuses its own space
    once a value is dead). `offset` is the high-water mark; `new_copy` starts a task copy
    of its own above it (copies never share bytes: they are in flight together)."""

    block: int  # the allocation granule (the target's block_bytes)
    offset: int = 0
    holes: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes), sorted
    placed: list[int] = field(default_factory=list)  # every buffer's offset, in allocation order
    # Slots freed for a buffer of one type only: a column-chunk loop's dead chunks, reused
    # by a chunk of the same element type and shape (the stacked engine holds one type
    # per slot: interp/codegen_stacked.py, `check_allocs`).
    slots: dict[tuple, list[int]] = field(default_factory=dict)

    def size(self, nbytes: int) -> int:
        return -(-nbytes // self.block) * self.block

    def alloc(self, nbytes: int, kind: tuple | None = None) -> tuple[int, int]:
        """(offset, rounded size) of a new buffer of `nbytes`, in a slot freed for its
        `kind` (element type and shape) if there is one."""
        if kind is not None and self.slots.get(kind):
            off, size = self.slots[kind].pop(), self.size(nbytes)
        else:
            off, size = self._place(self.size(nbytes))
        self.placed.append(off)
        return off, size

    def _place(self, size: int) -> tuple[int, int]:
        at = next((i for i, (_, n) in enumerate(self.holes) if n >= size), None)
        if at is None:
            off = self.offset
            self.offset += size
            return off, size
        off, n = self.holes.pop(at)
        if n > size:
            self.holes.insert(at, (off + size, n - size))
        return off, size

    def free(self, off: int, size: int) -> None:
        merged: list[tuple[int, int]] = []
        for o, n in sorted([*self.holes, (off, size)]):
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((o, n))
        self.holes = merged

    def free_slot(self, off: int, kind: tuple) -> None:
        """Free a buffer for reuse by buffers of its `kind` only."""
        self.slots.setdefault(kind, []).append(off)

    def new_copy(self) -> None:
        self.holes = []
        self.slots = {}
