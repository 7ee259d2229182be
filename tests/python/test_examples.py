# The two examples (examples/python/) run, print their losses and write their plots; cut down
# (fewer iterations, a shorter horizon) to stay a test.
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("numpy")
pytest.importorskip("steer", reason="the module steer is not built (STEER_BUILD_PYTHON=OFF or nanobind missing)")

from conftest import SOURCE_DIR

EX = SOURCE_DIR / "examples" / "python"


def _run(args, tmp_path):
    p = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ), timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_robot_a_adam(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")
    out = _run([EX / "robot_a_adam.py", "--iterations", "20", "--batch", "2", "--steps", "200", "--out", "a.svg"], tmp_path)
    first, last = map(float, re.search(r"loss ([-+0-9.e]+) -> ([-+0-9.e]+)", out).groups())
    assert last < first, out  # Adam walked the robots further
    assert (tmp_path / "a.svg").read_text().startswith("<svg")


def test_panda_sysid(tmp_path):
    pytest.importorskip("scipy", reason="scipy is not installed (Debian: python3-scipy)")
    out = _run([EX / "panda_sysid.py", "--segments", "3", "--out", "p.svg"], tmp_path)
    first, last = map(float, re.search(r"loss ([0-9.e+-]+) -> ([0-9.e+-]+)", out).groups())
    assert last < 1e-3 * first, out
    assert (tmp_path / "p.svg").read_text().startswith("<svg")


def test_robot_a_policy(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")
    out = _run([EX / "robot_a_policy.py", "--iterations", "8", "--batch", "2", "--steps", "120", "--out", "p.svg"],
               tmp_path)
    first, last = map(float, re.search(r"loss ([-+0-9.e]+) -> ([-+0-9.e]+)", out).groups())
    assert last < first, out  # the controller learned to move the robot further
    # the engine's rollout of the recorded activations is the chained steps' loss
    engine = float(re.search(r"engine rollout of the final activations: mean loss ([-+0-9.e]+)", out).group(1))
    assert abs(engine - last) <= 1e-9 * abs(last), out
    assert (tmp_path / "p.svg").read_text().startswith("<svg")
