"""ctest's entry to pytest: runs the given pytest arguments and exits 77 (ctest's skip) when
every collected test was skipped, printing why (no nanobind, no torch, ...), so a machine without
the Python packages reports the tests as skipped rather than passed or failed."""
import sys

import pytest


class _Count:
    def __init__(self):
        self.ran = 0
        self.skipped = []

    def pytest_collectreport(self, report):
        # a module-level importorskip skips the whole file at collection
        if report.skipped:
            self.skipped.append(str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr))

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and not report.skipped:
            self.ran += 1
        elif report.skipped and report.when in ("setup", "call"):
            self.skipped.append(str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr))


if __name__ == "__main__":
    c = _Count()
    rc = pytest.main(sys.argv[1:], plugins=[c])
    if rc in (0, 5) and c.ran == 0:
        why = sorted(set(c.skipped)) or ["no test collected"]
        print("steer: every Python test here was skipped: " + "; ".join(why))
        sys.exit(77)
    sys.exit(int(rc))
