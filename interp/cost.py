"""The cost model of the `npu` interpreter: how long each op occupies its pipe and how
long after that its result is ready. Op semantics and numerics live in
`pto.interp.npu`; this module only prices them, and reads every figure from the
target file (`targets/*.toml`), one named entry each, so that calibration against
PyPTO's simulator changes data, not code. docs/model.md says where each figure comes
from.

Shared state (the L2's contents, the HBM windows) stays in `pto.interp.machine`: the
functions here get what it observed (hit and miss lines) or a callable that books HBM.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pto.dialects.common import ELEM_BYTES
from pto.targets import Target

# book(start, nbytes, rate) -> cycles: moves bytes to or from HBM through the shared windows.
HbmBooking = Callable[[float, float, float], float]


class CostModel:
    """The figures of one target, read once by name, and the formula of every op."""

    def __init__(self, target: Target):
        lat, model = target.latency, target.model
        self.issue = lat.issue
        self.task_dispatch = lat.task_dispatch
        # PyPTO's simulator charges each GM copy a fixed start cost.
        self.dma_fixed_costs = model.dma_fixed_costs
        self.copy_in = lat.copy_in
        self.copy_out = lat.copy_out
        self.line = target.l2.line_bytes
        self.task_ready = lat.task_ready
        self.task_turnaround = lat.task_turnaround
        self.stitch = lat.stitch
        # One core's GM transfer rate, L2 hit or miss alike (PyPTO's copy rates; the
        # rates of the gm paths in [paths] only say that a path exists).
        self.gm_read = model.gm_read_rate
        self.gm_write = model.gm_write_rate
        self.l2_hit_latency = target.l2.hit_latency
        self.l2_miss_penalty = target.l2.miss_penalty
        self.hbm_window = model.hbm_window
        # All cores together stream at most this.
        self.hbm_total = model.hbm_total
        self.transpose_factor = target.dma.transpose_rate_factor
        self.l1_rows_unit = target.dma.l1_rows_unit
        self.atomic_add_factor = model.atomic_add_factor
        cube = target.cube
        self.fractal = cube.fractal
        self.mad_head = cube.mad_head_cycles
        self.passes = cube.passes
        self.opsim = cube.opsim if cube.form == "opsim" else None
        self.k_fractal = {e: target.k_fractal(e) for e in cube.passes}
        self.macs = {e: target.macs_per_cycle(e) for e in cube.passes}  # the peaks
        fx = target.fixpipe
        self.drain_form = fx.form == "drain"  # else priced as a copy of its output bytes
        self.drain_fixed = fx.drain_fixed_cycles
        self.drain_row = fx.drain_row_cycles
        self.drain_rate = fx.drain_rate
        self.drain_odd = fx.drain_odd_cycles
        self.c0_bytes = fx.c0_bytes
        self.repeat_bytes = target.vector.bytes_per_repeat
        self.cycles_per_repeat = target.vector.cycles_per_repeat
        self.vector_fixed = target.vector.fixed_cycles
        self._paths = target.paths
        self._rates: dict[tuple, float] = {}
        self._mmads: dict[tuple, float] = {}
        self._priced: dict[tuple, tuple[float, int]] = {}

    # -- data movement ---------------------------------------------------------------

    def dma_fixed(self, to_gm: bool) -> float:
        """Fixed start cost of a copy with a GM end (copy-out if it writes GM)."""
        if not self.dma_fixed_costs:
            return 0.0
        return float(self.copy_out if to_gm else self.copy_in)

    def gm_transfer(
        self, start: float, hits: int, misses: int, write: bool, cacheable: bool, book: HbmBooking, evicted: int = 0
    ) -> float:
        """Pipe cycles of a GM transfer that starts moving data at `start`: hit lines at
        the core's GM rate, missed lines at that rate within the shared HBM bandwidth (a
        cacheable write miss allocates in L2 and pays HBM only on eviction). A miss that
        evicts a dirty line waits for it to be written back: `evicted` lines also go
        through HBM. This is what a cacheable stream costs the data it pushes out."""
        rate = self.gm_write if write else self.gm_read
        cycles = hits * self.line / rate
        if write and cacheable:
            cycles += misses * self.line / rate
            misses = 0
        if misses + evicted:
            cycles += book(start, (misses + evicted) * self.line, rate)
        return cycles

    def gm_latency(self, misses: int) -> float:
        return self.l2_hit_latency + (self.l2_miss_penalty if misses else 0)

    def onchip_dma(self, nbytes: int, src: str, dst: str) -> float:
        return nbytes / self._paths[f"{src}->{dst}"]

    def path_rate(self, src, dst) -> float:
        """`onchip_dma`'s rate between two `Space`s, its key formatted once per pair."""
        rate = self._rates.get((src, dst))
        if rate is None:
            rate = self._rates[(src, dst)] = self._paths[f"{src.value}->{dst.value}"]
        return rate

    def transposed(self, cycles: float) -> float:
        return cycles / self.transpose_factor

    def atomic_add(self, cycles: float) -> float:
        """An atomic-add write is a read-modify-write of each line in L2."""
        return cycles * self.atomic_add_factor

    # -- compute ---------------------------------------------------------------------

    def mmad(self, m: int, k: int, n: int, elem: str, rows: int | None = None, acc: bool = False) -> float:
        """Cube cycles of an (m x k) @ (k x n) product (`Cube`): its issue head, then each
        pass over whole fractals on every axis; or, in the opsim form, PyPTO 0.2.0's price
        of its padded output tile, an accumulating one (`acc`) by its own coefficients.
        `rows` (valid rows of a partial M tile) prices only the fractals they touch. (Kept
        per shape: a kernel has a few, priced once per mmad of a run.)"""
        key = (m, k, n, elem, rows, acc)
        cycles = self._mmads.get(key)
        if cycles is None:
            f = self.fractal
            mm = m if rows is None else max(0, min(rows, m))
            if self.opsim is not None:
                r0, r1 = (
                    (self.opsim["mulacc_r0"], self.opsim["mulacc_r1"])
                    if acc
                    else (self.opsim["mul_r0"], self.opsim["mul_r1"])
                )
                tile = -(-mm // f) * f * -(-n // f) * f * ELEM_BYTES[elem]
                cycles = self._mmads[key] = math.floor((r0 * tile * 2e-6 + r1) * 2000) + 1
            else:
                steps = -(-mm // f) * -(-k // self.k_fractal[elem]) * -(-n // f)
                cycles = self._mmads[key] = self.mad_head + self.passes[elem] * steps
        return cycles

    def mmad_macs(self, m: int, k: int, n: int, elem: str, rows: int | None = None) -> int:
        """The multiply-accumulates `mmad` prices: whole fractals on every axis."""
        f, kf = self.fractal, self.k_fractal[elem]
        mm = m if rows is None else max(0, min(rows, m))
        return -(-mm // f) * f * -(-k // kf) * kf * -(-n // f) * f

    def mmad_priced(
        self, m: int, k: int, n: int, elem: str, rows: int | None = None, acc: bool = False
    ) -> tuple[float, int]:
        """(`mmad`, `mmad_macs`) of one product, kept per shape and valid rows: an mmad
        of an op-heavy run is priced once per shape, not twice per mmad (4% of
        sk03_standard's timing-only run at unroll [1])."""
        key = (m, k, n, elem, rows, acc)
        priced = self._priced.get(key)
        if priced is None:
            priced = self._priced[key] = (self.mmad(m, k, n, elem, rows, acc), self.mmad_macs(m, k, n, elem, rows))
        return priced

    # -- fixpipe -----------------------------------------------------------------------

    def drain(self, rows: int, n: int, acc_bytes: int) -> float:
        """The device's FIXPIPE drain of a tile of `rows` x `n` L0C elements (`Fixpipe`):
        it moves one row at a time, each at least the row floor, and a count of C0-wide
        column fractals that is not a power of 2 costs extra serial passes per row."""
        n1 = -(-n // max(1, self.c0_bytes // acc_bytes))
        odd = n1 // (n1 & -n1) if n1 else 1
        row = max(self.drain_row, acc_bytes * n / self.drain_rate) + self.drain_odd * (odd - 1)
        return self.drain_fixed + rows * row

    def fixpipe_onchip(self, nbytes: int, dst: str, rows: int, n: int, acc_bytes: int) -> float:
        """Pipe cycles of a fixpipe into L1 (`nbytes`: its output's)."""
        if self.drain_form:
            return self.drain(rows, n, acc_bytes)
        return self.onchip_dma(nbytes, "l0c", dst)

    def fixpipe_gm(
        self, start: float, drain: tuple[int, int, int], hits: int, misses: int, evicted: int, book: HbmBooking
    ) -> float:
        """Pipe cycles of a fixpipe to GM (not an atomic add) that starts at `start`;
        `drain` = (rows, n, L0C element bytes). Drained, its lines allocate in L2 as
        any GM write does, and the dirty lines it evicts go through HBM after it."""
        if not self.drain_form:
            fixed = self.dma_fixed(True)
            return fixed + self.gm_transfer(start + fixed, hits, misses, True, True, book, evicted)
        cycles = self.drain(*drain)
        if evicted:
            cycles += book(start + cycles, evicted * self.line, self.gm_write)
        return cycles

    def fixpipe_copy(self, start: float, drain, adjust, hits: int, misses: int, evicted: int, book) -> float:
        """Pipe cycles of a fixpipe to GM starting at `start`: its drain (`adjust`: an
        atomic add's, applied to it), or, where the target prices a fixpipe as a copy, an
        atomic add's transfer adjusted (its fixed cost not read twice)."""
        if adjust is None or self.drain_form:
            total = self.fixpipe_gm(start, drain, hits, misses, evicted, book)
            return adjust(total) if adjust is not None else total
        fixed = self.dma_fixed(True)
        return fixed + adjust(self.gm_transfer(start + fixed, hits, misses, True, True, book, evicted))

    def vector(self, name: str, nbytes: int) -> float:
        """`name` without the dialect prefix (`vexp`); nbytes of its largest operand."""
        cpr = self.cycles_per_repeat
        return self.vector_fixed + math.ceil(nbytes / self.repeat_bytes) * cpr.get(name, cpr["default"])
