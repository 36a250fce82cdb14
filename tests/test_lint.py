"""The source and the tests pass ruff with the rules set in pyproject.toml ([tool.ruff])."""

import subprocess
from pathlib import Path

import pytest

ruff = pytest.importorskip("ruff", reason="ruff is not installed (pip install -e '.[test]' brings it)")

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check_is_clean():
    from ruff.__main__ import find_ruff_bin

    done = subprocess.run(
        [find_ruff_bin(), "check", "--no-cache", "--output-format", "concise", "src", "tests"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
