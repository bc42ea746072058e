"""docs/python-api.md runs as written: its python code blocks, in order, in one namespace."""

from __future__ import annotations

import re

from kernels import ROOT


def test_python_api_tour_runs(tmp_path, monkeypatch, capsys) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block.replace("/tmp/", f"{tmp_path}/"), f"python-api.md block {i + 1}", "exec"), ns)  # noqa: S102
    out = capsys.readouterr().out
    assert "error: 'pto.cast' no hardware conversion from f32 to i8" in out
    assert "['pto', 'tile', 'npu']" in out
    assert "True (40, 1024)" in out
    assert "total:" in out and "out: ok" in out
    assert (tmp_path / "linear_projection.json").exists()


def test_readme_python_snippet_runs(capsys) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102
    assert "total:" in capsys.readouterr().out


def test_driver_doc_snippet_runs(monkeypatch, capsys) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "driver.md").read_text(), re.S)
    monkeypatch.chdir(ROOT)
    exec(compile(block, "driver.md", "exec"), {})  # noqa: S102
    assert "['pto', 'tile']" in capsys.readouterr().out
