"""The report's views from its one data model: the tasks as they ran add up to the
report's figures, the Chrome trace has no empty tracks and no empty task slices, and
the HTML page is built for every example, bounded for long runs, and drawn by headless
Chromium with its sections and no network (the browser test is skipped only when
Chromium cannot be installed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from kernels import ROOT

from pto.frontend.api import run
from pto.interp import page as page_mod
from pto.interp.report import stage_of
from pto.tools import pto_run

EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
STD = ROOT / "examples" / "sk03_standard.mlir"
SCREENSHOT = ROOT / "test" / "python" / "Output" / "report-page.png"


def _report(path: Path, tokens: int = 16, engine: str | None = None, trace: str | None = None):
    from kernels import parse

    return run(parse(path.read_text()), tokens=tokens, numerics=False, engine=engine, trace=trace).report


def _data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("engine", ["compiled", "interp"])
def test_tasks_add_up_to_the_report(engine: str) -> None:
    r = _report(STD, 40, engine)
    assert len(r.task_runs) == r.tasks["cube"] + r.tasks["vector"]
    for core, busy in r.cores.items():
        runs = [t for t in r.task_runs if t.core == core]
        for pipe, cycles in busy.items():
            assert sum(t.busy[pipe] for t in runs) == pytest.approx(cycles), (core, pipe)
    stages = {s.label: s for s in r.stages()}
    assert set(stages) == {"rmsnorm", "linear"}
    assert stages["linear"].macs == 40 * 4096 * 1024 * 48 // 40  # M padded to 48 rows (16-row fractals)
    assert 0 < sum(t.hbm_bytes for t in r.task_runs) <= r.hbm_bytes
    assert r.config["unroll"] == "128, 64, 32, 16, 8, 1" and r.config["cache w"] == "none_cacheable"


def test_trace_tracks_and_task_slices(tmp_path) -> None:
    r = _report(STD, 40, trace=str(tmp_path / "t.json"))
    t = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in t if e["name"] == "process_name"}
    tracks = {(procs[e["pid"]], e["args"]["name"]) for e in t if e["name"] == "thread_name"}
    assert not {(c, p) for c, p in tracks if c.startswith("aiv") and p in ("cube", "mte1", "fixpipe")}
    slices = [e for e in t if e["ph"] == "X"]
    tids = {(e["pid"], e["tid"]): name for (c, name), e in _thread_events(t, procs).items()}
    scalar = [e for e in slices if tids[(e["pid"], e["tid"])] == "scalar"]
    total = sum(busy["scalar"] for busy in r.cores.values())
    assert sum(e["dur"] for e in scalar) * r.clock_mhz == pytest.approx(total)
    tasks = [e for e in slices if tids[(e["pid"], e["tid"])] == "task"]
    assert len(tasks) == len(r.task_runs)
    assert all(e["args"]["cycles"] > 0 for e in tasks) and any(e["args"]["bytes"] > 0 for e in tasks)


def _thread_events(t: list[dict], procs: dict) -> dict:
    return {(procs[e["pid"]], e["args"]["name"]): e for e in t if e["name"] == "thread_name"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_page_for_each_example(path: Path) -> None:
    r = _report(path)
    text = r.html(path.name)
    d = _data(text)
    assert len(d["timeline"]["bars"]) == len(r.task_runs) and not d["timeline"]["aggregated"]
    assert {g["stage"] for g in d["groups"]} == {stage_of(t.group) for t in r.task_runs}
    assert d["config"]["unroll"] and d["totals"]["cycles"] == round(r.cycles)
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(", text), "nothing loads from anywhere"
    assert "<iframe srcdoc=" in r._repr_html_()


def test_a_long_run_is_drawn_in_slots(monkeypatch) -> None:
    monkeypatch.setattr(page_mod, "MAX_BARS", 144)  # two slots per core
    r = _report(STD, 300)
    bars = _data(r.html())["timeline"]["bars"]
    assert len(r.task_runs) > 144 >= len(bars)
    assert sum(b[2] for b in bars) == len(r.task_runs)  # every task in one slot


def test_pto_run_html(tmp_path, capsys) -> None:
    out = tmp_path / "r.html"
    assert pto_run.main([str(STD), "--random-inputs", "--tokens", "16", "--no-numerics", "--html", str(out)]) == 0
    assert _data(out.read_text())["totals"]["tasks"] == "16 cube, 4 vector"
    assert pto_run.main([str(STD), "--random-inputs", "--tokens", "16", "--html", str(STD)]) == 2
    assert "--html would overwrite the input" in capsys.readouterr().err


# -- the page in a browser ------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # a fetch from the network would fail, not hang
]


def _chromium() -> str:
    """Chromium, installed as .ci/run does if missing; the test is skipped only when it
    cannot be installed."""
    if found := shutil.which("chromium"):
        return found
    try:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True, env=env, timeout=300)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"], check=True, capture_output=True, env=env, timeout=600
        )
    except (OSError, subprocess.SubprocessError):
        pass
    return shutil.which("chromium") or pytest.skip("Chromium is not installed and cannot be installed here")


def _browse(chromium: str, page: Path, *args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--virtual-time-budget=3000",
                *args,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    return proc.stdout


def test_page_in_headless_chromium(tmp_path) -> None:
    chromium = _chromium()
    page = tmp_path / "r.html"
    assert pto_run.main([str(STD), "--random-inputs", "--tokens", "64", "--no-numerics", "--html", str(page)]) == 0
    dom = _browse(chromium, page, "--dump-dom")
    groups = {g["name"] for g in _data(page.read_text())["groups"]}
    drawn = re.findall(r'<rect class="bar" data-i="\d+" data-group="([^"]+)"', dom)
    assert groups == {"rmsnorm.64", "linear.64"} == set(drawn) and len(drawn) == 32  # one bar per task
    for section in ("timeline", "utilisation", "roofline", "l2", "buffers", "summary"):
        assert f'<section id="{section}">' in dom, section
    assert re.search(r'<section id="l2">.*<td class="l">w</td>', dom, re.S)
    assert not re.search(r"\s(src|href)=", dom), "no element loads anything"
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    _browse(chromium, page, "--hide-scrollbars", "--window-size=1400,1800", f"--screenshot={SCREENSHOT}")
    assert SCREENSHOT.stat().st_size > 10_000
    print(f"screenshot of the page: {SCREENSHOT}")
