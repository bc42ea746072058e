"""Named event ids of the intra-core flags that `tile-to-npu` emits.

A flag is (source pipe, destination pipe, event id); an id needs to be unique only
among flags of the same pipe pair, so the ids below overlap where their pipes differ.
"""

from pto.planning.vector import VEC_EVENTS_PER_COPY, max_copies

__all__ = ["VEC_EVENTS_PER_COPY", "max_copies"]

# Vector tasks: copy q of a task (one merged vector tile) uses 2q and 2q + 1.
VEC_LOADED = 0  # + 2q, MTE2 -> VECTOR: the tile's inputs are in UB
VEC_COMPUTED = 0  # + 2q, VECTOR -> MTE3: the results are ready to store
VEC_STORED = 1  # + 2q, MTE3 (or VECTOR) -> MTE2: the copy's UB may be refilled

# Cube tasks.
L1A_FREE = 0  # + copy, MTE1 -> MTE2: an L1 copy of the activation slices may be refilled
L1_LOADED = 0  # + slice of the K loop's body, MTE2 -> MTE1: an L1 slice is in
L0_FREE = 0  # + copy, CUBE -> MTE1: an L0A/L0B copy may be refilled
L0_LOADED = 0  # + copy, MTE1 -> CUBE: an L0A/L0B copy is in
ACC_READY = 3  # CUBE -> FIXPIPE: the accumulators hold the whole K
ACC_FREE = 4  # FIXPIPE -> CUBE: the accumulators are out; the next tile may overwrite them


def l1b_free(event_ids: int) -> int:
    """The first id (+ copy, MTE1 -> MTE2) saying an L1 copy of the weight slice may be
    refilled: half-way, after L1A_FREE's, so that each has half the pipe pair's ids."""
    return event_ids // 2
