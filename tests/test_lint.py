"""House style: ruff's lint rules and formatter (settings in pyproject.toml) hold everywhere."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True
    )


def test_ruff_check():
    out = _ruff("check", ".", "--output-format", "concise")
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format():
    out = _ruff("format", "--check", ".")
    assert out.returncode == 0, out.stdout + out.stderr
