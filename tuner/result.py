"""What a tuning run found: the best configurations with their deciding figures, the
comparison with the kernel's own hints and SK03.md's settings, the per-token-count
winners; the winner written back as a kernel with its hints pinned."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr

from pto.interp.run import signature
from pto.tuner.baselines import baselines
from pto.tuner.kernel import KernelInfo, TuneError
from pto.tuner.pin import pin
from pto.tuner.search import Sweep, best_keys
from pto.tuner.space import Config, describe, key

TABLE_ROWS = 5  # best configurations shown


@dataclass
class TuneResult:
    module: ModuleOp
    info: KernelInfo
    tokens: list[int]
    plan: object
    sweep: Sweep

    @property
    def evaluated(self) -> int:
        return len(self.sweep.results)

    @property
    def failed(self) -> list[tuple[Config, str]]:
        return [
            (c, next(r["error"] for r in rs.values() if "error" in r))
            for c, rs in self.sweep.results.values()
            if any("error" in r for r in rs.values())
        ]

    @property
    def best(self) -> Config:
        return self.sweep.results[best_keys(self.sweep, 1)[0]][0]

    def cycles(self, c: Config) -> float | None:
        """The objective of a measured configuration (None if it failed)."""
        if key(c) not in self.sweep.results:
            raise TuneError(f"{describe(c)} was not measured in this run")
        return self.sweep.cost(key(c))

    def baseline_cycles(self) -> dict[str, float | None]:
        return {name: self.sweep.cost(key(c)) for name, c in baselines(self.info).items()}

    def best_at(self, t: int) -> tuple[Config, float]:
        """The winner at one token count."""
        if t not in self.tokens:
            raise TuneError(f"t={t} was not tuned (tokens: {', '.join(map(str, self.tokens))})")
        ok = [(c, rs[t]["cycles"]) for c, rs in self.sweep.results.values() if "error" not in rs[t]]
        if not ok:
            raise TuneError(f"every configuration failed at t={t}")
        return min(ok, key=lambda x: x[1])

    def curve(self) -> list[float]:
        """Best objective so far, in the order configurations were measured."""
        out, best = [], float("inf")
        for k in self.sweep.order:
            if (c := self.sweep.cost(k)) is not None:
                best = min(best, c)
            out.append(best)
        return out

    def pinned(self) -> str:
        """The winner as a kernel: the input with the winning hints pinned."""
        head = (
            f"// pto-tune: best of {self.evaluated} configurations at tokens "
            f"{','.join(map(str, self.tokens))} on {self.info.target.name}: {describe(self.best)}\n"
        )
        m = pin(self.module, self.best)
        # tuned for this target: the kernel says so (pto-run and pto-opt read it)
        signature(m).func.attributes["pto.target"] = StringAttr(self.info.target.name)
        return head + str(m) + "\n"

    def write_best(self, path: str) -> None:
        text = self.pinned()
        try:
            with open(path, "w") as f:
                f.write(text)
        except OSError as e:
            raise TuneError(f"cannot write '{path}': {e.strerror or e}") from None

    def table(self) -> str:
        from pto.tuner.table import render

        return render(self)

    def html(self) -> str:
        """The run as a self-contained page: every configuration (sortable), the curve and
        the winner's report (`pto.tuner.page`)."""
        from pto.tuner.page import tune_page

        return tune_page(self)

    def save_html(self, path: str) -> None:
        text = self.html()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise TuneError(f"cannot write '{path}': {e.strerror or e}") from None
