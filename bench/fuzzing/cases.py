"""The fuzz campaign's vocabulary: kinds and outcomes, a case and its result."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pto

PKG = Path(pto.__file__).resolve().parent  # the pto package (the repo root)
NOT_PROJECT = (PKG / "bench", PKG / "test")  # inside the package dir, but not pto code
# A campaign runs DEFAULT_KINDS unless --kinds names others: an engines case makes five
# runs, one on xDSL's interpreter, so it is ten times a semantic case's time.
DEFAULT_KINDS = ("text", "semantic", "npy", "flags", "api")
KINDS = (*DEFAULT_KINDS, "engines")
OUTCOMES = ("clean", "accepted", "traceback", "internal", "hang", "wrong")
BAD = ("traceback", "internal", "hang", "wrong")

# Findings the brief says are being fixed elsewhere: (regex on the signature or the
# stderr, label). Still reported, only labelled.
KNOWN = [
    (r"^api:", "known: Python API misuse raises a raw exception (being fixed)"),
    (
        r"Forward declared|use before|dominance|KeyError.*pto_to_tile|pto_to_tile.*KeyError",
        "known: use-before-def passes verify (dominance check being fixed)",
    ),
    (r"returns? (its|one of its) (own )?argument|is the argument", "known: kernel returning its own argument"),
]


# ---------------------------------------------------------------------------- cases


@dataclass
class Case:
    id: int
    kind: str
    label: str  # the mutators or recipe that made it
    payload: dict  # what the worker needs (see run_cli_case / run_api_case)
    timeout: float = 10.0


@dataclass
class Result:
    id: int
    kind: str
    label: str
    outcome: str
    code: int | None = None
    secs: float = 0.0
    sig: str = ""  # the dedup key of a bad outcome
    frame: str = ""  # innermost pto frame of a crash or hang
    detail: str = ""  # first lines of stderr, or what was wrong
    notes: list[str] = field(default_factory=list)


def case_rng(seed: int, index: int, kind: str) -> random.Random:
    """One generator per case, so that a case depends only on (seed, index)."""
    return random.Random(f"pto-fuzz:{seed}:{index}:{kind}")
