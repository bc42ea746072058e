"""Npy cases: a small kernel with one bad `.npy` input."""

from __future__ import annotations

import io
import random
import struct

import ml_dtypes
import numpy as np

from pto.bench.fuzzing.semantic import gen_semantic_kernel, make_inputs, semantic_payload


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def npy_header(header: str, data: bytes = b"", version: bytes = b"\x01\x00") -> bytes:
    h = header.encode("latin1")
    return b"\x93NUMPY" + version + struct.pack("<H", len(h)) + h + data


def bad_npy(rng: random.Random, good: np.ndarray) -> tuple[str, bytes]:
    """One hostile variant of a good input array, as (what, file bytes)."""
    shp = good.shape
    variants = {
        "f32 for bf16": lambda: npy_bytes(good.astype(np.float32)),
        "f64": lambda: npy_bytes(good.astype(np.float64)),
        "i8": lambda: npy_bytes(good.astype(np.float32).astype(np.int8)),
        "u8": lambda: npy_bytes(np.abs(good.astype(np.float32)).astype(np.uint8)),
        "bool": lambda: npy_bytes(good.astype(np.float32) > 0),
        "complex": lambda: npy_bytes(good.astype(np.complex64)),
        "i16": lambda: npy_bytes(good.astype(np.float32).astype(np.int16)),
        "f16": lambda: npy_bytes(good.astype(np.float16)),
        "structured": lambda: npy_bytes(np.zeros(shp, dtype=[("a", "<f4"), ("b", "<i2")])),
        "V2 raw": lambda: npy_bytes(np.zeros(shp, dtype="V2")),
        "extra dim": lambda: npy_bytes(good.reshape((1,) + shp)),
        "scalar": lambda: npy_bytes(np.array(good.flat[0] if good.size else 0, dtype=good.dtype)),
        "0 tokens": lambda: npy_bytes(good[:0]),
        "transposed": lambda: npy_bytes(np.ascontiguousarray(good.T)),
        "fortran": lambda: npy_bytes(np.asfortranarray(good)),
        "flattened": lambda: npy_bytes(good.reshape(-1)),
        "one more row": lambda: npy_bytes(np.concatenate([good, good[:1]]) if good.ndim and len(good) else good),
        "NaN": lambda: npy_bytes(
            np.full(shp, np.nan, dtype=good.dtype)
            if good.dtype.kind == "f" or good.dtype == ml_dtypes.bfloat16
            else good
        ),
        "Inf": lambda: npy_bytes(
            np.full(shp, np.inf, dtype=np.float32).astype(good.dtype) if good.dtype.kind != "i" else good
        ),
        "max value": lambda: npy_bytes(
            np.full(shp, 3.0e38, dtype=np.float32).astype(good.dtype)
            if good.dtype.kind != "i"
            else np.full(shp, 127, good.dtype)
        ),
        "zeros": lambda: npy_bytes(np.zeros_like(good)),
        "empty file": lambda: b"",
        "magic only": lambda: b"\x93NUMPY",
        "truncated data": lambda: npy_bytes(good)[: -max(1, good.nbytes // 2)],
        "truncated header": lambda: npy_bytes(good)[: rng.randrange(8, 60)],
        "random bytes": lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))),
        "text": lambda: b"1 2 3\n4 5 6\n",
        "npz": lambda: _npz(good),
        "pickle": lambda: npy_header(
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }".ljust(118) + "\n", b"\x80\x04N."
        ),
        "bad header dict": lambda: npy_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3 }".ljust(118) + "\n"
        ),
        "unterminated header": lambda: npy_header("{'descr': '<f4\n"),
        "header not a dict": lambda: npy_header("[1, 2, 3]".ljust(118) + "\n"),
        "huge declared shape": lambda: npy_header(
            f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({1 << 40}, {shp[-1] if shp else 1}), }}".ljust(118)
            + "\n",
            b"\0" * 64,
        ),
        "negative shape": lambda: npy_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }".ljust(118) + "\n"
        ),
        "version 9": lambda: npy_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }".ljust(118) + "\n", b"\0" * 4, b"\x09\x00"
        ),
        "header length huge": lambda: b"\x93NUMPY\x01\x00\xff\xff{'descr'",
        "unknown descr": lambda: npy_header(
            "{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }".ljust(118) + "\n", b"\0" * 8
        ),
        "deep header": lambda: npy_header("{'descr': " + "[" * 500 + "]" * 500 + "}\n"),
        "big-endian": lambda: (
            npy_bytes(good.astype(np.float32).astype(">f4")) if good.dtype != np.int8 else npy_bytes(good.astype(">i2"))
        ),
    }
    what = rng.choice(sorted(variants))
    return what, variants[what]()


def _npz(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, a=arr)
    return buf.getvalue()


def gen_npy(rng: random.Random, corpus) -> tuple[str, dict]:
    """A small semantic kernel whose inputs are fine but one (or its place) is hostile."""
    _, kern = gen_semantic_kernel(rng)
    kern["hints"] = {}
    if kern["args"][0][1][-1] > 256:  # keep the arrays small: this kind is about the files
        return gen_npy(rng, corpus)
    tokens = rng.choice([1, 3, 17])
    p = semantic_payload(kern, tokens, rng.randrange(1 << 16), "default")
    names = [a[0] for a in kern["args"]]
    r = rng.random()
    if r < 0.75:
        victim = rng.randrange(len(names))
        good = make_inputs(kern, tokens, p["seed"])[victim]
        what, data = bad_npy(rng, good)
        p["files"][f"{names[victim]}.npy"] = {"bytes": data}
        label = f"{kern['form']} {names[victim]}: {what}"
    else:  # the file itself is not a plain file
        what = rng.choice(
            [
                "missing",
                "directory",
                "the kernel",
                "duplicate",
                "one too few",
                "one too many",
                "/dev/null",
                "symlink to kernel",
                "dangling symlink",
                "unreadable",
            ]
        )
        label = f"{kern['form']} input: {what}"
        inputs = [i for i, a in enumerate(p["argv"]) if a == "--input"]
        i = rng.choice(inputs) + 1
        if what == "missing":
            p["argv"][i] = "{d}/nope.npy"
        elif what == "directory":
            p["argv"][i] = "{d}"
        elif what == "the kernel":
            p["argv"][i] = "{d}/kernel.mlir"
        elif what == "duplicate":
            p["argv"][i] = p["argv"][inputs[0] + 1]
        elif what == "one too few":
            del p["argv"][i - 1 : i + 1]
        elif what == "one too many":
            p["argv"][i:i] = [p["argv"][i], "--input"]
        elif what == "/dev/null":
            p["argv"][i] = "/dev/null"
        elif what == "symlink to kernel":
            p["files"]["link.npy"] = {"symlink": "kernel.mlir"}
            p["argv"][i] = "{d}/link.npy"
        elif what == "dangling symlink":
            p["files"]["link.npy"] = {"symlink": "nowhere.npy"}
            p["argv"][i] = "{d}/link.npy"
        else:
            p["files"]["locked.npy"] = {"bytes": b"", "mode": 0}
            p["argv"][i] = "{d}/locked.npy"
    if rng.random() < 0.2:
        p["argv"] += ["--tokens", str(rng.choice([0, 1, tokens, tokens + 1, -1]))]
    return label, p
