"""ruff is clean over the whole repository (configuration in ruff.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ruff_command() -> list[str]:
    """ruff of this interpreter's environment (the venv's, pinned), else the one on PATH (e.g.
    under colcon test with ruff installed by pip; it has no rosdep key)."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    assert found, "ruff is not installed: pip install ruff==0.17.6 (requirements/test.txt)"
    return [found]


def test_ruff_is_clean():
    result = subprocess.run([*ruff_command(), "check", "--no-cache", str(REPO)], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
