"""The tuning run as a PNG: each configuration's cycles in the order measured, and the
best so far. Needs matplotlib (`pip install 'pto-ir[plot]'`)."""

from __future__ import annotations

import importlib.util

from pto.tuner.kernel import TuneError


def require_matplotlib() -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise TuneError("--plot needs matplotlib, which is not installed (pip install 'pto-ir[plot]')")


def plot(result, path: str) -> None:
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    costs = [result.sweep.cost(k) for k in result.sweep.order]
    xs = [i for i, c in enumerate(costs) if c is not None]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.scatter(xs, [costs[i] for i in xs], s=10, label="configuration")
    ax.plot(range(len(costs)), result.curve(), color="C1", label="best so far")
    ax.set_xlabel("evaluation")
    ax.set_ylabel(f"cycles summed over tokens {','.join(map(str, result.tokens))}")
    ax.set_title(f"pto-tune @{result.info.name} on {result.info.target.name}")
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as e:
        raise TuneError(f"cannot write '{path}': {e.strerror or e}") from None
    finally:
        plt.close(fig)
