"""A progress line with rate and ETA on stderr: tqdm's bar when tqdm is installed, else a
line of its own, redrawn in place."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, what: str, enabled: bool = True):
        self.total, self.what, self.done, self.t0 = total, what, 0, time.monotonic()
        self.enabled = enabled
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]  # an optional extra, without stubs

                self.bar = tqdm(total=total, desc=what, unit="eval", file=sys.stderr)
            except ImportError:
                pass

    def step(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.enabled:
            self._line()

    def _line(self) -> None:
        dt = time.monotonic() - self.t0
        rate = self.done / dt if dt else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        print(
            f"\r{self.what}: {self.done}/{self.total}, {rate:.2f} eval/s, ETA {eta:.0f} s ",
            end="",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and self.done:
            print(file=sys.stderr)
