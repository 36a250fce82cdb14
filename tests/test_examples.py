"""The commands of examples/README.md run as written (in this process, from a scratch directory
so that their outputs land there) and print results."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cepagg.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[list[str]]:
    text = (ROOT / "examples" / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith(".venv/bin/cepagg ")]


def test_the_readme_lists_commands():
    assert len(_commands()) >= 4


@pytest.mark.parametrize("args", _commands(), ids=lambda a: " ".join(a[:2]))
def test_an_example_command_runs(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in args]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() or list(tmp_path.iterdir()), captured.err
