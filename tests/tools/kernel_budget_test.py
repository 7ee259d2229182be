#!/usr/bin/env python3
"""tools/kernel_budget.py on recorded ptxas reports (no nvcc needed): the parse, the verdicts
(within budget, over it, an exception's ceiling) and the exit codes 0, 1 and 2.

tests/data/kernel_budget/projectile_float.ptxas is nvcc 13.0's report (sm_90) for kernels/rollout_projectile_float.cu;
the other reports are written here from it with one figure changed."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "kernel_budget.py"
REPORT = (ROOT / "tests" / "data" / "kernel_budget" / "projectile_float.ptxas").read_text()
LIMITS = {"any": {"spill_store_bytes": 0, "spill_load_bytes": 0}, "forward": {"registers": 128},
          "backward": {"stack_bytes": 32768}}


def run(reports, budget):
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for name, text in reports.items():
            (work / (name + ".ptxas")).write_text(text)
        (work / "budget.json").write_text(budget if isinstance(budget, str) else json.dumps(budget))
        proc = subprocess.run([sys.executable, str(TOOL), "--logs", str(work), "--budget", str(work / "budget.json"),
                               "--json", str(work / "out.json")], capture_output=True, text=True)
        figures = json.loads((work / "out.json").read_text()) if (work / "out.json").exists() else None
        return proc.returncode, proc.stdout + proc.stderr, figures


def kernel(figures, prefix):
    return next(k for k in figures["kernels"] if k["kernel"].startswith(prefix))


class KernelBudget(unittest.TestCase):
    def test_recorded_report_is_parsed_and_within_budget(self):
        rc, out, figures = run({"projectile": REPORT}, {"limits": LIMITS, "exceptions": []})
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(figures["kernels"]), 4)  # forward, backward, the dual backward, transpose
        fwd = kernel(figures, "forward_kernel<Projectile, float>")
        self.assertEqual((fwd["registers"], fwd["stack_bytes"], fwd["arch"]), (93, 0, "sm_90"))
        dual = kernel(figures, "backward_kernel<Projectile, float, true>")
        self.assertEqual((dual["registers"], dual["stack_bytes"]), (216, 1096))
        self.assertEqual(kernel(figures, "transpose_kernel<float>")["shared_bytes"], 4224)
        self.assertEqual(figures["units"][0]["wall_seconds"], 19.4)

    def test_a_spill_fails(self):
        spilled = REPORT.replace("24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                                 "24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads")
        self.assertNotEqual(spilled, REPORT)
        rc, out, _ = run({"projectile": spilled}, {"limits": LIMITS, "exceptions": []})
        self.assertEqual(rc, 1, out)
        self.assertIn("OVER BUDGET", out)
        self.assertIn("spill_store_bytes 8 > limit 0", out)

    def test_forward_registers_over_the_limit_fail(self):
        rc, out, _ = run({"projectile": REPORT}, {"limits": {"forward": {"registers": 64}}, "exceptions": []})
        self.assertEqual(rc, 1, out)
        self.assertIn("forward_kernel<Projectile, float>: registers 93 > limit 64", out)

    def test_an_exception_is_a_ceiling(self):
        limits = {"forward": {"registers": 64}}
        within = {"kernel": "forward_kernel<Projectile, float>", "registers": 93, "why": "test"}
        rc, out, figures = run({"projectile": REPORT}, {"limits": limits, "exceptions": [within]})
        self.assertEqual(rc, 0, out)
        self.assertTrue(kernel(figures, "forward_kernel")["exception"])
        below = dict(within, registers=90)
        rc, out, _ = run({"projectile": REPORT}, {"limits": limits, "exceptions": [below]})
        self.assertEqual(rc, 1, out)
        self.assertIn("and exception 90", out)

    def test_an_exception_no_longer_needed_is_named(self):
        stale = {"kernel": "backward_kernel<Projectile, double, false>", "stack_bytes": 99999, "why": "test"}
        rc, out, _ = run({"projectile": REPORT}, {"limits": LIMITS, "exceptions": [stale]})
        self.assertEqual(rc, 0, out)
        self.assertIn("no longer needed", out)

    def test_usage_errors_exit_2(self):
        rc, out, _ = run({"projectile": REPORT}, "{not json")
        self.assertEqual(rc, 2, out)
        rc, out, _ = run({"projectile": REPORT}, {"limits": LIMITS})
        self.assertEqual(rc, 2, out)
        self.assertIn("'exceptions'", out)
        rc, out, _ = run({}, {"limits": LIMITS, "exceptions": []})
        self.assertEqual(rc, 2, out)
        self.assertIn("no .ptxas reports", out)


if __name__ == "__main__":
    unittest.main()
