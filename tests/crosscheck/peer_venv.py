"""The cross-checks' peers (Pinocchio, Drake, NVIDIA Newton) in a virtual environment of their own.

The project never depends on its peers: a cross-check script calls `enter(...)` first. Where the
running Python already imports every module the check needs (a user's own environment, named by
STEER_PEER_PYTHON or by running the script with it), nothing happens. Otherwise a venv is made
under the build folder (`--work`), the packages are installed there with pip, and the script is
executed again with that venv's Python. Where the venv or pip fails (no python3-venv, PyPI
unreachable), the check exits 77, which ctest reports as skipped, saying why.

steer's Python module is found through `--steer-python DIR` (the build's python/ folder, on
sys.path): the venv is made from the same interpreter version the module was built for.
"""

import os
import subprocess
import sys
from pathlib import Path

SKIP = 77
_REEXEC_FLAG = "STEER_PEER_VENV_ACTIVE"


def _imports(python, modules):
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"
    return subprocess.run([str(python), "-c", code, *modules], capture_output=True).returncode == 0


def skip(tag, why):
    """Prints the reason and exits 77 (ctest's SKIP_RETURN_CODE for the cross-checks)."""
    print(f"{tag}: SKIP: {why}", flush=True)
    sys.exit(SKIP)


def enter(tag, venv_dir, requirements, modules):
    """Returns when this interpreter imports `modules`; otherwise re-executes the script in a venv
    at venv_dir with `requirements` installed (made once, reused by later runs), or exits 77."""
    if all(_imports(sys.executable, [m]) for m in modules):
        return
    if os.environ.get(_REEXEC_FLAG):
        skip(tag, f"the venv's Python ({sys.executable}) still cannot import {', '.join(modules)}")
    venv_dir = Path(venv_dir)
    py = venv_dir / "bin" / "python"
    if not py.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], capture_output=True, text=True)
        if made.returncode != 0:
            skip(tag, f"cannot make a venv at {venv_dir} (python3-venv): {made.stderr.strip()[-300:]}")
    if not _imports(py, modules):
        print(f"{tag}: installing {' '.join(requirements)} into {venv_dir} (once)", flush=True)
        pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              "--timeout", "30", "--retries", "1", *requirements],
                             capture_output=True, text=True)
        if pip.returncode != 0:
            skip(tag, f"pip could not install {' '.join(requirements)} (PyPI unreachable?): "
                      f"{pip.stderr.strip()[-300:]}")
    env = dict(os.environ, **{_REEXEC_FLAG: "1"})
    os.execve(str(py), [str(py), *sys.argv], env)


def import_steer(tag, steer_python):
    """Puts the build's python/ folder first on sys.path and imports steer, or exits 77."""
    if steer_python:
        sys.path.insert(0, str(Path(steer_python).resolve()))
    try:
        import steer  # noqa: F401
    except ImportError as e:
        skip(tag, f"steer's Python module is not importable from {steer_python} ({e}); "
                  "configure with -DSTEER_BUILD_PYTHON=ON")
    return sys.modules["steer"]
