# Shared fixtures of the Python tests (tests/python/CMakeLists.txt runs them with PYTHONPATH at the build
# tree's python/ folder, STEER_SOURCE_DIR at the repository and STEER_BINARY at the CLI).
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("STEER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("STEER_BINARY", "")
    if not path or not os.path.exists(path):
        pytest.skip("STEER_BINARY does not name the steer CLI (set by tests/python/CMakeLists.txt)")
    return path


def projectile_config(**over):
    """The worked example's config (configs/projectile.json) as a dict, with overrides."""
    import json
    c = json.loads((SOURCE_DIR / "configs" / "projectile.json").read_text())
    c.update(over)
    return c
