#!/usr/bin/env python3
"""tools/standard_robots.py without the network, MuJoCo or a steer build: how it reads steer's exit
status and message, the table it writes, the docs section it replaces, its verdicts and exit
codes; end to end against a stand-in steer (a script that loads, refuses or crashes per file, as
told) over a cache folder laid out as the tool lays it out (files named as in the pinned wheels,
the stamp holding the pinned SHA-256, so nothing is downloaded)."""
import importlib.util
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "standard_robots.py"
sys.dont_write_bytecode = True  # no __pycache__ in tools/
spec = importlib.util.spec_from_file_location("standard_robots", TOOL)
sr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sr)

REFUSAL = ("steer: config: model.mjcf: '/some/where/gymnasium/envs/mujoco/assets/half_cheetah.xm…': body 'torso' has "
           "3 joints; steer's articulated model takes one joint per body")
WARNING = "WARNING: compiler attribute 'settotalmass' is deprecated"

# the stand-in steer (sh, to start fast): --version, and `run ... CONFIG` acting as the line of `plan`
# beside it says for the config's file, keyed "<folder>/<file>" (assets/reacher.xml,
# suite/reacher.xml); a file not in the plan is refused naming a body
FAKE_STEER = r'''#!/bin/sh
here=$(dirname "$0")
if [ "$1" = "--version" ]; then printf 'steer 0.1.0\ncommit: 0\n'; cat "$here/import_line"; exit 0; fi
for config; do :; done
path=$(sed -n 's/^ *"mjcf": "\(.*\)"$/\1/p' "$config")
name=$(basename "$path")
act=$(grep "^$(basename "$(dirname "$path")")/$name " "$here/plan" | cut -d' ' -f2)
case "$act" in
  load) echo "steer run: standard_robot (articulated, B = 1, T = 1)"; exit 0 ;;
  crash) ulimit -c 0; kill -SEGV $$ ;;
  exit1) echo "steer: something else went wrong" >&2; exit 1 ;;
  no_element) echo "steer: config: model.mjcf: '$path': unsupported" >&2; exit 2 ;;
esac
echo "WARNING: a MuJoCo warning" >&2
echo "steer: config: model.mjcf: '$path': body 'b_${name%.xml}' has 2 joints; steer takes one" >&2
exit 2
'''

DOC = "# Importing\n\nintro\n\n" + sr.BEGIN_MARKER + "\nold table\n" + sr.END_MARKER + "\n\n## After\n\nkept\n"


class Classify(unittest.TestCase):
    def test_exit_0_loads(self):
        r = sr.classify("dm_control", "pendulum.xml", 0, "steer run: ...\n")
        self.assertEqual((r.status, r.reason), ("loads", ""))

    def test_refusal_names_the_element_without_the_path(self):
        r = sr.classify("gymnasium", "half_cheetah.xml", 2, WARNING + "\n\n" + REFUSAL + "\n")
        self.assertEqual(r.status, "refused")
        self.assertEqual(r.reason, "body 'torso' has 3 joints; steer's articulated model takes one joint per body")
        self.assertEqual(r.message, REFUSAL)
        self.assertEqual(r.warnings, [WARNING])

    def test_other_outcomes_are_errors(self):
        cases = {
            "signal": (-11, "", "signal 11"),
            "exit 1": (1, "steer: boom\n", "exited with 1"),
            "exit 3": (3, "", "exited with 3"),
            "silent 2": (2, "WARNING: x\n", "without a 'steer: ' message"),
            "another key": (2, "steer: config: initial_state.q[3]: 0 is outside the range\n", "not by the import"),
            "no element": (2, "steer: config: model.mjcf: '/a/b.xml': unsupported\n", "without naming an element"),
            "compiler": (2, "steer: config: model.mjcf: MuJoCo's compiler refused '/a/b.xml':\n  XML Error: bad\n"
                            "  Element 'joint', line 4\n", "MuJoCo's compiler refused"),
        }
        for what, (rc, out, expect) in cases.items():
            with self.subTest(what):
                r = sr.classify("gymnasium", "x.xml", rc, out)
                self.assertEqual(r.status, "error")
                self.assertIn(expect, r.reason)
        compiler = sr.classify("gymnasium", "x.xml", 2, cases["compiler"][1])
        self.assertIn("XML Error: bad Element 'joint', line 4", compiler.reason)

    def test_refusal_reason_needs_the_import_prefix(self):
        self.assertIsNone(sr.refusal_reason("steer: config: model.urdf: 'a': body 'x'"))
        self.assertIsNone(sr.refusal_reason("steer: config: model.mjcf: 'unterminated"))
        self.assertEqual(sr.refusal_reason("steer: config: model.mjcf: 'a b': tendon 't': no"), "tendon 't': no")


def results(loaded_dm=("pendulum.xml",), error=None):
    out = []
    for s in sr.SUITES:
        for name in s.files:
            if s.key == "dm_control" and name in loaded_dm:
                out.append(sr.Result(s.key, name, "loads"))
            elif error == (s.key, name):
                out.append(sr.Result(s.key, name, "error", reason="steer was killed by signal 11", exit_code=-11))
            else:
                out.append(sr.Result(s.key, name, "refused", reason=f"body 'b' | {name} has 2 joints", exit_code=2))
    return out


class TableAndVerdict(unittest.TestCase):
    def test_the_suites_pin_what_the_issue_counts(self):
        self.assertEqual([len(s.files) for s in sr.SUITES], [14, 18])
        self.assertNotIn("dog.xml", sr.SUITES[1].files)
        self.assertEqual([s.wheel for s in sr.SUITES], ["gymnasium-1.4.0-py3-none-any.whl",
                                                         "dm_control-1.0.52-py3-none-any.whl"])

    def test_markdown_counts_rows_and_escapes(self):
        text = sr.markdown(results(("pendulum.xml", "cartpole.xml")), sr.SUITES, "4.0.1")
        self.assertTrue(text.startswith("2 of 32 files load (Gymnasium 0 of 14, dm_control 2 of 18); "), text)
        self.assertIn("**Gymnasium 1.4.0** (`gymnasium/envs/mujoco/assets/`): 0 of 14 load.", text)
        self.assertIn("**dm_control 1.0.52** (`dm_control/suite/`): 2 of 18 load.", text)
        self.assertIn("| `pendulum.xml` | yes | — |", text)
        self.assertIn("| `ant.xml` | no | body 'b' \\| ant.xml has 2 joints |", text)
        rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
        self.assertEqual(len(rows), 32)
        self.assertEqual(sum(" | yes | " in ln for ln in rows), 2)

    def test_cells_keep_tags_visible(self):
        self.assertEqual(sr.cell("geom 'rail': only a plane in <worldbody> is\nmodelled"),
                         "geom 'rail': only a plane in `<worldbody>` is modelled")
        self.assertEqual(sr.cell("a `<b>` | c < d > e"), "a `<b>` \\| c < d > e")

    def test_json_has_the_same_facts(self):
        facts = sr.summary_json(results(), sr.SUITES, "steer 0.1.0")
        self.assertEqual([(s["suite"], s["loaded"], s["total"]) for s in facts["suites"]],
                         [("gymnasium", 0, 14), ("dm_control", 1, 18)])
        self.assertEqual(facts["suites"][1]["files"][11]["file"], "pendulum.xml")

    def test_verdict(self):
        self.assertEqual(sr.verdict(results(), {"gymnasium": 0, "dm_control": 1}), [])
        low = sr.verdict(results(), {"gymnasium": 0, "dm_control": 2})
        self.assertEqual(low, ["dm_control: 1 of 18 files load, fewer than --min-dm-control 2"])
        broken = sr.verdict(results(error=("gymnasium", "ant.xml")), {})
        self.assertEqual(broken, ["gymnasium/ant.xml: steer was killed by signal 11"])


class DocsSection(unittest.TestCase):
    def test_replaces_only_between_the_markers(self):
        new = sr.replace_section(DOC, "the table")
        self.assertEqual(new, DOC.replace("\nold table\n", "\n\nthe table\n\n"))
        self.assertEqual(sr.replace_section(new, "the table"), new)  # regenerating changes nothing

    def test_refuses_broken_markers(self):
        for doc in (DOC.replace(sr.BEGIN_MARKER, ""), DOC.replace(sr.END_MARKER, ""),
                    DOC + sr.BEGIN_MARKER + "\n",
                    "a\n" + sr.END_MARKER + "\nb\n" + sr.BEGIN_MARKER + "\n"):
            with self.subTest(doc=doc):
                with self.assertRaises(ValueError):
                    sr.replace_section(doc, "x")

    def test_the_project_docs_have_the_section_with_every_file(self):
        text = (ROOT / "docs" / "import.md").read_text(encoding="utf-8")
        begin, end = text.index(sr.BEGIN_MARKER), text.index(sr.END_MARKER)
        section = text[begin:end]
        sr.replace_section(text, "x")  # the markers are usable
        for s in sr.SUITES:
            self.assertIn(f"**{s.title} {s.version}** (`{s.folder}/`): ", section)
            for name in s.files:
                self.assertEqual(section.count(f"| `{name}` |"), 1 + (name in ("hopper.xml", "humanoid.xml",
                                                                                   "reacher.xml", "swimmer.xml")), name)


class EndToEnd(unittest.TestCase):
    """The tool as a program, against the stand-in steer, over a laid-out cache (--offline)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.work = Path(self.tmp.name)
        self.cache = self.work / "cache"
        for s in sr.SUITES:
            folder = self.cache / f"{s.package}-{s.version}"
            (folder / s.folder).mkdir(parents=True)
            for name in s.files:
                (folder / s.folder / name).write_text("<mujoco/>\n")
            (folder / sr.STAMP).write_text(s.sha256 + "\n")
        self.steer = self.work / "bin" / "steer"
        self.steer.parent.mkdir()
        self.steer.write_text(FAKE_STEER)
        self.steer.chmod(self.steer.stat().st_mode | stat.S_IXUSR)
        self.set_import("MuJoCo import: on (MuJoCo 4.0.1)")
        self.plan({"suite/pendulum.xml": "load", "suite/cartpole.xml": "load", "suite/reacher.xml": "load"})

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, plan):
        (self.steer.parent / "plan").write_text("".join(f"{key} {act}\n" for key, act in plan.items()))

    def set_import(self, line):
        (self.steer.parent / "import_line").write_text(line + "\n")

    def run_tool(self, *args, cache=None):
        cmd = [sys.executable, str(TOOL), "--offline", "--cache", str(cache or self.cache), "--steer", str(self.steer),
               *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=self.work)
        return proc.returncode, proc.stdout + proc.stderr

    def test_check_passes_at_the_floors_and_fails_above(self):
        rc, out = self.run_tool("--check", "--min-dm-control", "3", "--json", str(self.work / "r.json"))
        self.assertEqual(rc, 0, out)
        self.assertIn("**dm_control 1.0.52** (`dm_control/suite/`): 3 of 18 load.", out)
        self.assertIn("| `half_cheetah.xml` | no | body 'b_half_cheetah' has 2 joints; steer takes one |", out)
        facts = json.loads((self.work / "r.json").read_text())
        self.assertEqual([s["loaded"] for s in facts["suites"]], [0, 3])
        cheetah = facts["suites"][0]["files"][1]
        self.assertEqual((cheetah["status"], cheetah["exit_code"], cheetah["warnings"]),
                         ("refused", 2, ["WARNING: a MuJoCo warning"]))
        rc, out = self.run_tool("--check", "--min-dm-control", "4", "--min-gymnasium", "1")
        self.assertEqual(rc, 1, out)
        self.assertIn("gymnasium: 0 of 14 files load, fewer than --min-gymnasium 1", out)
        self.assertIn("dm_control: 3 of 18 files load, fewer than --min-dm-control 4", out)

    def test_a_crash_or_an_unclear_refusal_fails_and_leaves_the_docs_alone(self):
        doc = self.work / "import.md"
        doc.write_text(DOC)
        for act, expect in (("crash", "gymnasium/ant.xml: steer was killed by signal 11"),
                            ("exit1", "gymnasium/ant.xml: steer exited with 1"),
                            ("no_element", "gymnasium/ant.xml: refused without naming an element: unsupported")):
            with self.subTest(act):
                self.plan({"assets/ant.xml": act, "suite/pendulum.xml": "load"})
                rc, out = self.run_tool("--write-docs", str(doc))
                self.assertEqual(rc, 1, out)
                self.assertIn(expect, out)
                self.assertIn("| `ant.xml` | **error** |", out)
                self.assertEqual(doc.read_text(), DOC)
                self.assertEqual(sorted(p.name for p in self.work.iterdir()), ["bin", "cache", "import.md"])

    def test_write_docs_replaces_the_section(self):
        doc = self.work / "import.md"
        doc.write_text(DOC)
        rc, out = self.run_tool("--write-docs", str(doc), "--markdown", str(self.work / "t.md"))
        self.assertEqual(rc, 0, out)
        text = doc.read_text()
        self.assertTrue(text.startswith("# Importing\n\nintro\n\n" + sr.BEGIN_MARKER + "\n\n3 of 32 files load"))
        self.assertTrue(text.endswith(sr.END_MARKER + "\n\n## After\n\nkept\n"))
        self.assertNotIn("old table", text)
        self.assertIn((self.work / "t.md").read_text(), text)
        doc.write_text("no markers\n")
        rc, out = self.run_tool("--write-docs", str(doc))
        self.assertEqual(rc, 2, out)
        self.assertIn("--write-docs", out)
        self.assertEqual(doc.read_text(), "no markers\n")

    def test_skips(self):
        rc, out = self.run_tool("--check", cache=self.work / "empty")
        self.assertEqual(rc, sr.SKIP, out)
        self.assertIn("SKIP: --offline and ", out)
        stale = self.work / "stale"
        (stale / "gymnasium-1.4.0").mkdir(parents=True)
        (stale / "gymnasium-1.4.0" / sr.STAMP).write_text("0" * 64 + "\n")  # another wheel's stamp
        rc, out = self.run_tool("--check", cache=stale)
        self.assertEqual(rc, sr.SKIP, out)
        self.set_import("MuJoCo import: off (built without MuJoCo)")
        rc, out = self.run_tool("--check")
        self.assertEqual(rc, sr.SKIP, out)
        self.assertIn("cannot import MJCF: MuJoCo import: off (built without MuJoCo)", out)

    def test_usage_errors_exit_2_naming_the_argument(self):
        for args, expect in ((["--check", "--min-gymnasium", "15"], "--min-gymnasium: 15 is outside [0, 14]"),
                             (["--min-dm-control", "3"], "need --check or --crosscheck"),
                             (["--files", "a.xml"], "--files needs --crosscheck"),
                             (["--crosscheck", "--write-docs", "docs/import.md"], "--write-docs"),
                             (["--write-docs", "nowhere.md"], "--write-docs: no file nowhere.md"),
                             (["--check", "--crosscheck"], "not allowed with argument"),
                             (["--crosscheck", "--tolerance", "0"], "--tolerance: must be > 0")):
            with self.subTest(args=args):
                rc, out = self.run_tool(*args)
                self.assertEqual(rc, 2, out)
                self.assertIn(expect, out)
        rc, out = subprocess.run([sys.executable, str(TOOL), "--offline", "--cache", str(self.cache), "--steer",
                                  str(self.work / "none")], capture_output=True, text=True).returncode, ""
        self.assertEqual(rc, 2)


if __name__ == "__main__":
    unittest.main()
