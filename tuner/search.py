"""The sweep: measure configurations through an executor and the store, exhaustively
or by a guided search.

Guided search: every legal configuration is ranked by the analytic estimate summed over
the token counts; the first half of the budget goes to the best-ranked, the rest to the
estimate-ranked neighbours (one dimension changed) of the best measured so far, which
corrects for what the estimate gets wrong. The kernel's own hints and SK03.md's
settings are always measured, so the pick is never worse than either."""

from __future__ import annotations

from collections.abc import Callable

from pto.tuner.estimate import estimate
from pto.tuner.kernel import KernelInfo
from pto.tuner.progress import Progress
from pto.tuner.space import Config, Space, key
from pto.tuner.store import Store, record_key

TOP_MEASURED = 3  # how many of the best measured configurations the search explores around


class Sweep:
    """Measured configurations of one kernel, target and set of token counts."""

    def __init__(self, text: str, name: str, info: KernelInfo, tokens: list[int], store: Store, executor,
                 progress: bool = True):
        self.text, self.name, self.info, self.tokens, self.store, self.executor = text, name, info, tokens, store, executor
        self.progress = progress
        self.results: dict[str, tuple[Config, dict[int, dict]]] = {}
        self.order: list[str] = []  # keys in the order measured (the best-so-far curve)
        self.bar: Progress | None = None

    def expect(self, total: int) -> None:
        """One progress line for the whole run, of `total` configurations at most."""
        self.bar = Progress(total, "pto-tune", self.progress)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _key(self, c: Config, t: int) -> str:
        return record_key(self.text, c, self.info.target.name, t)

    def measure(self, configs: list[Config]) -> None:
        """Measure what the store lacks, then record every configuration's figures."""
        todo = [c for c in configs if key(c) not in self.results]
        tasks = []
        for c in todo:
            missing = [t for t in self.tokens if self.store.get(self._key(c, t)) is None]
            if missing:
                tasks.append((self.text, self.name, c, missing, self.info.target.name))
        for (_, _, c, _, _), recs in self.executor.run(tasks):
            for r in recs:
                self.store.add({"key": self._key(c, r["tokens"]), "config": c, **r})
            if self.bar is not None:
                self.bar.step()
        for c in todo:
            self.results[key(c)] = (c, {t: self.store.get(self._key(c, t)) for t in self.tokens})  # type: ignore
            self.order.append(key(c))

    def cost(self, k: str) -> float | None:
        """The objective: cycles summed over the token counts (None if any failed)."""
        recs = self.results[k][1].values()
        return None if any("error" in r for r in recs) else sum(r["cycles"] for r in recs)


def _ranked(candidates: list[Config], info: KernelInfo, tokens: list[int]) -> list[Config]:
    return sorted(candidates, key=lambda c: sum(estimate(c, info, t) for t in tokens))


def guided(sweep: Sweep, space: Space, candidates: list[Config], budget: int, batch: int) -> None:
    """Spend `budget` evaluations: the estimate's best half, then around the best measured."""
    ranked = _ranked(candidates, sweep.info, sweep.tokens)
    legal = {key(c): c for c in candidates}
    rank = {key(c): i for i, c in enumerate(ranked)}
    sweep.measure(ranked[: budget // 2])
    spent = budget // 2
    while spent < budget:
        near = _neighbours(sweep, space, legal) or [c for c in ranked if key(c) not in sweep.results]
        if not near:
            return
        pick = sorted(near, key=lambda c: rank[key(c)])[: min(batch, budget - spent)]
        sweep.measure(pick)
        spent += len(pick)


def _neighbours(sweep: Sweep, space: Space, legal: dict[str, Config]) -> list[Config]:
    best = best_keys(sweep, TOP_MEASURED)
    out = {}
    for k in best:
        for n in space.neighbours(sweep.results[k][0]):
            if (nk := key(n)) in legal and nk not in sweep.results:
                out[nk] = legal[nk]
    return list(out.values())


def best_keys(sweep: Sweep, n: int, of: Callable[[str], float | None] | None = None) -> list[str]:
    cost = of or sweep.cost
    ok = [k for k in sweep.results if cost(k) is not None]
    return sorted(ok, key=lambda k: cost(k))[:n]  # type: ignore[arg-type,return-value]
