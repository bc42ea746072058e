"""The sweep: measure configurations through an executor and the store, exhaustively
or by a guided search.

Guided search, robust to what the analytic estimate gets wrong: every legal
configuration is ranked by the estimate summed over the token counts; half the budget
goes to the best-ranked that differ from each other in two dimensions at least (so the
estimate's near-ties, say two vector tiles of one cube tile, do not use it up), the rest
to a local search: around each of the best three measured, best first, the most
promising unmeasured neighbour along every dimension, so a dimension the estimate
misjudges is still tried around a good point. "Promising" is the estimate corrected by
the measured/estimated ratio of the most similar measured configurations. The kernel's
own hints and SK03.md's settings are always measured, so the pick is never worse than
either."""

from __future__ import annotations

from collections.abc import Callable

from pto.tuner.estimate import estimate
from pto.tuner.kernel import KernelInfo
from pto.tuner.progress import Progress
from pto.tuner.space import Config, Space, key
from pto.tuner.store import Store, record_key

TOP_MEASURED = 3  # how many of the best measured configurations the search explores around
EXPLORE_SHARE = 0.5  # of the budget, spent on the estimate's best (the rest on the local search)
MIN_DISTANCE = 2  # dimensions in which the estimate's picks differ from each other at least


class Sweep:
    """Measured configurations of one kernel, target and set of token counts."""

    def __init__(
        self,
        text: str,
        name: str,
        info: KernelInfo,
        tokens: list[int],
        store: Store,
        executor,
        progress: bool = True,
        key_text: str | None = None,
    ):
        self.text, self.name, self.info, self.tokens = text, name, info, tokens
        # What the store's keys hash (default `text`): `tune` gives the kernel as printed,
        # so one kernel given as text or as a module finds the same records (the workers
        # get `text`, with the file's locations for their diagnostics).
        self.key_text = text if key_text is None else key_text
        self.store, self.executor = store, executor
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
        return record_key(self.key_text, c, self.info.target.name, t)

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


def _ranked(candidates: list[Config], info: KernelInfo, tokens: list[int]) -> list[tuple[Config, float]]:
    est = [(c, sum(estimate(c, info, t) for t in tokens)) for c in candidates]
    return sorted(est, key=lambda x: x[1])


def guided(sweep: Sweep, space: Space, candidates: list[Config], budget: int, batch: int) -> None:
    """Spend `budget` evaluations: the estimate's best share, then the corrected estimate's
    best around the best measured (see the module's doc)."""
    ranked = _ranked(candidates, sweep.info, sweep.tokens)
    est = {key(c): e for c, e in ranked}
    legal = {key(c): c for c, _ in ranked}
    first = max(1, round(budget * EXPLORE_SHARE))
    spread = _spread_out([c for c, _ in ranked], first)
    sweep.measure(spread)
    spent = len(spread)
    while spent < budget:
        n = min(batch, budget - spent)
        pick = _per_dimension(sweep, space, legal, est)[:n] or _unmeasured(sweep, legal, est)[:n]
        if not pick:
            return
        sweep.measure(pick)
        spent += len(pick)


def _spread_out(ranked: list[Config], n: int) -> list[Config]:
    """The first `n` of `ranked` that differ from each other in two dimensions at least: the
    neighbours of the good ones are for the local search, these are to find the region."""
    out: list[Config] = []
    for c in ranked:
        if not any(sum(c.get(d) != o.get(d) for d in c.keys() | o.keys()) < MIN_DISTANCE for o in out):
            out.append(c)
            if len(out) == n:
                break
    return out


def _corrected(sweep: Sweep, est: dict[str, float], c: Config) -> float:
    """The estimate of `c` times measured / estimated of the measured configurations most
    like it (fewest dimensions differing): what the estimate gets wrong about a region of
    the space, it gets wrong about its neighbours too."""
    near, best = [], None
    for k, (m, _) in sweep.results.items():
        cost = sweep.cost(k)
        if k not in est or cost is None:
            continue
        d = sum(m.get(n) != v for n, v in c.items())
        if best is None or d < best:
            near, best = [cost / est[k]], d
        elif d == best:
            near.append(cost / est[k])
    return est[key(c)] * (min(near) if near else 1.0)


def _per_dimension(sweep: Sweep, space: Space, legal: dict[str, Config], est: dict[str, float]) -> list[Config]:
    """Around the best measured configurations (best first), the most promising unmeasured
    neighbour along each dimension: every dimension is tried around a good point before
    the estimate's favourite dimension is tried twice (the estimate misjudges some)."""
    out: dict[str, Config] = {}
    for k in best_keys(sweep, TOP_MEASURED):
        centre = sweep.results[k][0]
        firsts = []
        for d in space.dims:
            near = [n for n in space.along(centre, d) if (nk := key(n)) in legal and nk not in sweep.results]
            if near:
                firsts.append(min(near, key=lambda c: _corrected(sweep, est, c)))
        for c in sorted(firsts, key=lambda c: _corrected(sweep, est, c)):
            out.setdefault(key(c), c)
    return list(out.values())


def _unmeasured(sweep: Sweep, legal: dict[str, Config], est: dict[str, float]) -> list[Config]:
    """Every legal configuration not measured yet, best corrected estimate first."""
    return sorted((c for k, c in legal.items() if k not in sweep.results), key=lambda c: _corrected(sweep, est, c))


def best_keys(sweep: Sweep, n: int, of: Callable[[str], float | None] | None = None) -> list[str]:
    cost = of or sweep.cost
    ok = [k for k in sweep.results if cost(k) is not None]
    return sorted(ok, key=lambda k: cost(k))[:n]  # type: ignore[arg-type,return-value]
