"""Folders for the test scripts that drive the CLI (hardening_run.py, mpi_artifacts.py)."""
import os
import shutil


def fresh_folder(work, name):
    """An empty folder work/name: whatever an earlier run of the same part left there is removed."""
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
