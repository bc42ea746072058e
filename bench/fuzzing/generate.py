"""A case from (seed, index, kind): the generator of each kind."""

from __future__ import annotations

from pto.bench.fuzzing.api_misuse import gen_api
from pto.bench.fuzzing.cases import Case, case_rng
from pto.bench.fuzzing.corpus import Seed
from pto.bench.fuzzing.engines import gen_engines
from pto.bench.fuzzing.flags import gen_flags
from pto.bench.fuzzing.npy import gen_npy
from pto.bench.fuzzing.semantic import gen_semantic
from pto.bench.fuzzing.text import gen_text

GENERATORS = {
    "text": gen_text,
    "semantic": gen_semantic,
    "npy": gen_npy,
    "flags": gen_flags,
    "api": gen_api,
    "engines": gen_engines,
}


# A semantic case is a valid kernel that runs: slower than a rejection, which is what
# the 10 s bar is about (a K = 16384 mhc kernel on small tiles runs for seconds); an
# engines case runs it five times.
SLOWER = {"semantic": 3, "engines": 6}


def make_case(seed: int, index: int, kind: str, corpus: list[Seed], timeout: float) -> Case:
    label, payload = GENERATORS[kind](case_rng(seed, index, kind), corpus)
    return Case(index, kind, label, payload, timeout * SLOWER.get(kind, 1))


# ======================================================================= worker side
