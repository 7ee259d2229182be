#!/usr/bin/env python3
"""tools/mjcf_adversarial.py without MuJoCo or a steer build: how it reads steer's exit status,
message and artifact, how it judges an outcome against a case's expectation (words read without
the file's path, xfail and XPASS), that the corpus is large, deterministic and well formed, that
the mutants are deterministic; end to end against a stand-in steer (a Python script that loads,
refuses, crashes, hangs or exits 1 per file, as told)."""
import importlib.util
import json
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "mjcf_adversarial.py"
sys.dont_write_bytecode = True  # no __pycache__ in tools/
spec = importlib.util.spec_from_file_location("mjcf_adversarial", TOOL)
ma = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ma)

SHOWN = "../../corpus/mass_zero.xml"
COMPILER = (f"WARNING: a MuJoCo warning\nsteer: config: model.mjcf: MuJoCo's compiler refused '{SHOWN}':\n"
            "  Error: mass and inertia of moving bodies must be larger than mjMINVAL\n  Element name 'link1', id 1, line 4\n")

# the stand-in steer: --version prints the line in import_line beside it; `run ... --out DIR CONFIG`
# acts as the line of `plan` beside it says for the config's file (by its name); a file not in the
# plan is refused naming body 'link1'
FAKE_STEER = r'''#!PYTHON
import json, os, signal, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
if sys.argv[1] == "--version":
    print("steer 0.1.0\ncommit: 0\n" + (here / "import_line").read_text().strip())
    sys.exit(0)
out = Path(sys.argv[sys.argv.index("--out") + 1])
config = json.loads(Path(sys.argv[-1]).read_text())
key = "mjcf" if "mjcf" in config["model"] else "urdf"
shown = config["model"][key]
plan = dict(line.split(" ", 1) for line in (here / "plan").read_text().splitlines() if line)
act = plan.get(Path(shown).name, "refuse").strip()

def artifact(state_value, mass):
    run = out / "adversarial-1"
    run.mkdir(parents=True)
    art = {"effective_config": {"simulation": {"dt": {"unit": "s", "value": 0.002}},
                                "model": {"imported_from": {"compiler": "MuJoCo 4.0.1"},
                                          "parameters": {"link1.mass": {"unit": "kg", "value": mass},
                                                         "link1.joint_frame.j.mass": {"unit": "kg", "value": 0.0}}}},
           "result": {"final_state": [{"rollout": 0, "state": {"hinge1.q": {"unit": "rad", "value": state_value}}}],
                      "loss_initial_mean": 0.0, "loss_final_mean": 0.0, "loss_final_nonfinite_rollouts": 0}}
    (run / "artifact.json").write_text(json.dumps(art))

if act == "load":
    artifact(0.0, 1.0); print("steer run: adversarial"); sys.exit(0)
if act == "load_nan":
    artifact(None, 1.0); sys.exit(0)
if act == "load_massless":
    artifact(0.0, 0.0); sys.exit(0)
if act == "crash":
    signal.signal(signal.SIGSEGV, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGSEGV)
if act == "hang":
    time.sleep(60)
if act == "exit1":
    print("steer: error: std::bad_alloc", file=sys.stderr); sys.exit(1)
if act == "mapped":
    print("steer: config: model.bodies[0].mass: value inf is out of range", file=sys.stderr); sys.exit(2)
if act == "refuse_path_only":
    print(f"steer: config: model.{key}: '{shown}': unsupported", file=sys.stderr); sys.exit(2)
print("WARNING: something", file=sys.stderr)
print(f"steer: config: model.{key}: '{shown}': body 'link1' of joint 'hinge1' (motor1, timestep): refused", file=sys.stderr)
sys.exit(2)
'''


def run_of(rc, output, artifacts=(), shown=SHOWN):
    return ma.Run(rc, output, list(artifacts), 0.01, shown)


def case(**kw):
    base = dict(name="mass_zero.xml", what="w", expect="refused", content="<mujoco/>", words=("link1",))
    base.update(kw)
    return ma.Case(**base)


def facts(problems=(), params=None):
    return lambda path: {"params": params or {"link1.mass": 1.0}, "problems": list(problems)}


class Classify(unittest.TestCase):
    def test_refusal_at_the_import(self):
        o = ma.classify("mjcf", run_of(2, COMPILER))
        self.assertEqual(o.status, "refused", o.reason)
        self.assertTrue(o.message.startswith("steer: config: model.mjcf: MuJoCo's compiler refused"))
        self.assertEqual(len(o.message.splitlines()), 3)  # the indented lines belong to it, the warning not
        self.assertIn("must be larger than mjMINVAL", o.first_line())

    def test_loads_needs_one_clean_artifact(self):
        self.assertEqual(ma.classify("mjcf", run_of(0, "", ["a"]), facts()).status, "loads")
        none = ma.classify("mjcf", run_of(0, "", []), facts())
        self.assertEqual((none.status, none.reason), ("error", "exit 0 but 0 artifacts written"))
        bad = ma.classify("mjcf", run_of(0, "", ["a"]), facts(["non-finite final_state"]))
        self.assertEqual(bad.status, "error")
        self.assertIn("non-finite final_state", bad.reason)

    def test_other_outcomes_are_errors(self):
        cases = {
            "signal": (-11, "", "crashes: killed by signal 11"),
            "hang": (None, "", "hangs"),
            "exit 1": (1, "steer: error: std::bad_alloc\n", "exit 1: steer: error: std::bad_alloc"),
            "silent 2": (2, "WARNING: x\n", "without a 'steer: ' message"),
            "mapped key": (2, "steer: config: model.bodies[0].mass: value inf\n", "another key than model.mjcf"),
            "urdf key": (2, "steer: config: model.urdf: 'x': joint\n", "another key than model.mjcf"),
        }
        for what, (rc, out, expect) in cases.items():
            with self.subTest(what):
                o = ma.classify("mjcf", run_of(rc, out), facts())
                self.assertEqual(o.status, "error")
                self.assertIn(expect, o.reason)

    def test_a_refusal_writes_nothing_and_stays_short(self):
        o = ma.classify("mjcf", run_of(2, COMPILER, ["written/artifact.json"]))
        self.assertEqual((o.status, o.reason), ("error", "refused, but an artifact was written"))
        long = f"steer: config: model.mjcf: '{SHOWN}': joint '" + "j" * ma.OUTPUT_CAP + "'\n"
        self.assertIn("bytes (more than", ma.classify("mjcf", run_of(2, long)).reason)

    def test_artifact_facts_read_nulls_as_non_finite(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "artifact.json"
            art = {"effective_config": {"simulation": {"dt": {"value": None}}, "model": {
                "imported_from": {}, "parameters": {"a.mass": {"value": 0.0}, "a.joint_frame.j.mass": {"value": 0.0},
                                                    "g": {"value": 9.81}}}},
                "result": {"final_state": [{"state": {"q": {"value": None}}}], "loss_final_mean": 0.0}}
            path.write_text(json.dumps(art))
            problems = ma.artifact_facts(path)["problems"]
            self.assertIn("non-finite simulation.dt", problems)
            self.assertIn("non-finite final_state[0].state.q.value", problems)
            self.assertIn("a.mass = 0.0 is not positive", problems)
            self.assertFalse(any("joint_frame" in p for p in problems), problems)  # massless frames by design
            art["effective_config"]["simulation"]["dt"]["value"] = 0.002
            art["result"]["final_state"][0]["state"]["q"]["value"] = 0.1
            art["effective_config"]["model"]["parameters"]["a.mass"]["value"] = 2.0
            path.write_text(json.dumps(art))
            self.assertEqual(ma.artifact_facts(path)["problems"], [])


class Judge(unittest.TestCase):
    def refused(self, text=COMPILER):
        return ma.classify("mjcf", run_of(2, text))

    def test_words_must_be_in_the_message(self):
        self.assertEqual(ma.judge(case(), self.refused()), ("PASS", ""))
        verdict, note = ma.judge(case(words=("link1", "hinge9")), self.refused())
        self.assertEqual(verdict, "FAIL")
        self.assertIn("'hinge9'", note)

    def test_words_in_the_path_do_not_count(self):
        # the file's name holds "mass_zero": a message that only quotes the path names no element
        self.assertEqual(ma.judge(case(words=("mass_zero",)), self.refused())[0], "FAIL")
        self.assertEqual(ma.judge(case(words=("MASS AND INERTIA",)), self.refused())[0], "PASS")

    def test_expectations(self):
        loads = ma.classify("mjcf", run_of(0, "", ["a"]), facts())
        self.assertEqual(ma.judge(case(), loads)[0], "FAIL")
        self.assertEqual(ma.judge(case(expect="loads"), self.refused())[0], "FAIL")
        self.assertEqual(ma.judge(case(expect="loads"), loads), ("PASS", ""))
        self.assertEqual(ma.judge(case(expect="either", why="w"), loads), ("PASS", ""))
        self.assertEqual(ma.judge(case(expect="either", why="w"), self.refused()), ("PASS", ""))
        self.assertEqual(ma.judge(case(expect="either", why="w", words=("nowhere",)), self.refused())[0], "FAIL")
        crash = ma.classify("mjcf", run_of(-6, ""))
        self.assertEqual(ma.judge(case(expect="either", why="w"), crash)[0], "FAIL")

    def test_params_of_a_loaded_file(self):
        loads = ma.classify("mjcf", run_of(0, "", ["a"]), facts(params={"link1.mass": 1.0 + 1e-12}))
        self.assertEqual(ma.judge(case(expect="loads", params=(("link1.mass", 1.0),)), loads)[0], "PASS")
        verdict, note = ma.judge(case(expect="loads", params=(("link1.mass", 2.0),)), loads)
        self.assertEqual(verdict, "FAIL")
        self.assertIn("link1.mass = ", note)
        self.assertEqual(ma.judge(case(expect="loads", params=(("link9.mass", 1.0),)), loads)[0], "FAIL")

    def test_xfail_and_xpass(self):
        mapped = ma.classify("mjcf", run_of(2, "steer: config: model.bodies[0].mass: value inf\n"))
        verdict, note = ma.judge(case(xfail="known"), mapped)
        self.assertEqual(verdict, "XFAIL")
        self.assertIn("another key", note)
        self.assertEqual(ma.judge(case(xfail="known"), self.refused())[0], "XPASS")


class Corpus(unittest.TestCase):
    def test_size_classes_and_marks(self):
        cases = ma.corpus()
        self.assertGreaterEqual(len(cases), 100)
        self.assertEqual(len({c.name for c in cases}), len(cases))
        kinds = {c.expect for c in cases}
        self.assertEqual(kinds, {"loads", "refused", "either"})
        self.assertGreaterEqual(sum(c.key == "urdf" for c in cases), 5)
        for c in cases:
            with self.subTest(c.name):
                self.assertTrue(c.what and "\n" not in c.what)
                if c.expect == "either":
                    self.assertTrue(c.why)
                if c.expect == "refused" and not c.special:
                    self.assertTrue(c.words, "a refusal must name something")
                self.assertTrue(c.content is not None or c.special)
        names = {c.name for c in cases}
        for needed in ("bodies_10000.xml", "nested_1000.xml", "tendon_missing_site.xml", "billion_laughs.xml",
                       "include_self.xml", "empty.xml", "garbage.xml", "axis_zero.xml", "mass_negative.xml",
                       "nonfinite_mass_nan.xml", "nonfinite_timestep_huge.xml", "huge_comment.xml"):
            self.assertIn(needed, names)

    def test_deterministic_and_written_whole(self):
        a, b = ma.corpus(), ma.corpus()
        self.assertEqual([(c.name, c.content) for c in a], [(c.name, c.content) for c in b])
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "corpus"
            small = [c for c in a if c.name in ("mass_zero.xml", "include_cycle.xml", "fifo.xml", "directory.xml",
                                               "dev_zero.xml", "utf16.xml")]
            ma.write_corpus(folder, small)
            manifest = json.loads((folder / ma.MANIFEST).read_text())
            self.assertEqual([f["file"] for f in manifest["files"]], [c.name for c in small])
            self.assertTrue((folder / "include_cycle.b.part").is_file())
            self.assertTrue(stat.S_ISFIFO((folder / "fifo.xml").lstat().st_mode))
            self.assertTrue((folder / "directory.xml").is_dir())
            self.assertFalse((folder / "dev_zero.xml").exists())  # the config names /dev/zero itself
            first = (folder / "utf16.xml").read_bytes()
            ma.write_corpus(folder, small)  # replaces its own corpus
            self.assertEqual((folder / "utf16.xml").read_bytes(), first)
            foreign = Path(tmp) / "mine"
            foreign.mkdir()
            (foreign / "keep.txt").write_text("x")
            with self.assertRaises(ma.Failure):
                ma.write_corpus(foreign, small)
            self.assertEqual(sorted(p.name for p in foreign.iterdir()), ["keep.txt"])
            self.assertEqual([p.name for p in Path(tmp).iterdir() if p.name.startswith(".")], [])  # no leftovers


class Mutants(unittest.TestCase):
    SEEDS = [(Path("a.xml"), b'<mujoco><option timestep="0.002"/><worldbody><body name="b" pos="0 0 1">'
                             b'<joint axis="0 1 0"/></body></worldbody></mujoco>'),
             (Path("b.urdf"), b'<robot name="r"><link name="l"/></robot>')]

    def test_deterministic_in_the_seed(self):
        a = ma.mutants(self.SEEDS, 40, 5)
        self.assertEqual(a, ma.mutants(self.SEEDS, 40, 5))
        self.assertNotEqual(a, ma.mutants(self.SEEDS, 40, 6))
        self.assertEqual(len(a), 40)
        self.assertEqual({key for _, key, _, _ in a}, {"mjcf", "urdf"})
        self.assertGreater(sum(1 for _, _, data, _ in a if data not in (s[1] for s in self.SEEDS)), 30)

    def test_fuzz_verdict(self):
        self.assertEqual(ma.fuzz_verdict(ma.classify("mjcf", run_of(2, COMPILER))), "ok")
        mapped = ma.classify("mjcf", run_of(2, "steer: config: model.contacts[6].pos[1]: value nan\n"))
        self.assertEqual(ma.fuzz_verdict(mapped), "known")
        self.assertEqual(ma.fuzz_verdict(ma.classify("mjcf", run_of(2, "steer: config: simulation.dt: missing\n"))),
                         "known")
        self.assertEqual(ma.fuzz_verdict(ma.classify("mjcf", run_of(2, "steer: config: output.dir: no\n"))), "error")
        self.assertEqual(ma.fuzz_verdict(ma.classify("mjcf", run_of(-11, ""))), "error")


class EndToEnd(unittest.TestCase):
    """The tool as a program, against the stand-in steer."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.work = Path(self.tmp.name)
        self.steer = self.work / "bin" / "steer"
        self.steer.parent.mkdir()
        self.steer.write_text(FAKE_STEER.replace("PYTHON", sys.executable, 1))
        self.steer.chmod(self.steer.stat().st_mode | stat.S_IXUSR)
        self.set_import("MuJoCo import: on (MuJoCo 4.0.1)")
        self.plan({})

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, plan):
        (self.steer.parent / "plan").write_text("".join(f"{name} {act}\n" for name, act in plan.items()))

    def set_import(self, line):
        (self.steer.parent / "import_line").write_text(line + "\n")

    def run_tool(self, *args):
        proc = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, cwd=self.work)
        return proc.returncode, proc.stdout + proc.stderr

    def check(self, *names, extra=()):
        return self.run_tool("--check", "--steer", str(self.steer), "--out", str(self.work / "out"), "--only", *names,
                             *extra)

    def test_passes_when_each_file_meets_its_expectation(self):
        self.plan({"site_on_world.xml": "load"})
        rc, out = self.check("mass_zero.xml", "site_on_world.xml", "actuator_missing_joint.xml",
                             extra=("--json", str(self.work / "r.json")))
        self.assertEqual(rc, 1, out)  # actuator_missing_joint.xml must name 'phantom'
        self.assertIn("actuator_missing_joint.xml: FAIL: refused without naming 'phantom'", out)
        rc, out = self.check("mass_zero.xml", "site_on_world.xml", extra=("--json", str(self.work / "r.json")))
        self.assertEqual(rc, 0, out)
        self.assertIn("2 files in", out)
        self.assertIn("1 load, 1 refused, 0 errors; 2 as expected", out)
        facts = json.loads((self.work / "r.json").read_text())
        self.assertEqual([(f["file"], f["status"], f["verdict"]) for f in facts["files"]],
                         [("mass_zero.xml", "refused", "PASS"), ("site_on_world.xml", "loads", "PASS")])
        self.assertTrue((self.work / "out" / "corpus" / "mass_zero.xml").is_file())

    def test_crash_hang_exit1_and_bad_state_fail(self):
        for act, expect in (("crash", "crashes: killed by signal 11"), ("hang", "hangs: no exit within"),
                            ("exit1", "exit 1: steer: error: std::bad_alloc"), ("load_nan", "non-finite"),
                            ("load_massless", "link1.mass = 0.0 is not positive"),
                            ("refuse_path_only", "without naming 'link1'")):
            with self.subTest(act):
                self.plan({"mass_zero.xml": act, "site_on_world.xml": act})
                name = "site_on_world.xml" if act.startswith("load") else "mass_zero.xml"
                rc, out = self.check(name, extra=("--timeout", "2"))
                self.assertEqual(rc, 1, out)
                self.assertIn(f"{name}: FAIL: ", out)
                self.assertIn(expect, out)

    def test_xfail_is_printed_not_failed(self):
        # long_name.xml is a known defect (the message is cut before what is refused)
        self.plan({"long_name.xml": "mapped"})
        rc, out = self.check("long_name.xml")
        self.assertEqual(rc, 0, out)
        self.assertIn("1 known defects (xfail)", out)
        self.assertIn("known: the refusal is cut", out)
        # (an xfail case that passes is an XPASS and fails the check: test_xfail_and_xpass above)

    def test_fuzz_mode(self):
        seeds = self.work / "seed.xml"
        seeds.write_text('<mujoco><worldbody><body name="link1"><joint name="hinge1"/></body></worldbody></mujoco>\n')
        args = ("--fuzz", "6", "--seed", "3", "--seeds", str(seeds), "--steer", str(self.steer), "--out",
                str(self.work / "out"))
        rc, out = self.run_tool(*args)
        self.assertEqual(rc, 0, out)
        self.assertIn("6 mutants of 1 seed files (seed 3)", out)
        listing = (self.work / "out" / "fuzz" / "listing.tsv").read_text()
        self.assertEqual(len(listing.splitlines()), 6)
        self.plan({f"{i:04d}_seed.xml": "crash" for i in range(6)})
        rc, out = self.run_tool(*args)
        self.assertEqual(rc, 1, out)
        self.assertIn("crashes: killed by signal 11", out)
        again = (self.work / "out" / "fuzz" / "listing.tsv").read_text()
        self.assertEqual([ln.split("\t")[2] for ln in again.splitlines()],
                         [ln.split("\t")[2] for ln in listing.splitlines()])  # the same mutations

    def test_leaves_folders_it_did_not_make(self):
        mine = self.work / "out" / "work"
        mine.mkdir(parents=True)
        (mine / "notes.txt").write_text("keep")
        rc, out = self.check("mass_zero.xml")
        self.assertEqual(rc, 1, out)
        self.assertIn("was not made by this tool", out)
        self.assertEqual((mine / "notes.txt").read_text(), "keep")

    def test_skip_without_the_import(self):
        self.set_import("MuJoCo import: off (MuJoCo 2.2.2 at /usr/include is older than 3.3)")
        rc, out = self.check("mass_zero.xml")
        self.assertEqual(rc, 77, out)
        self.assertIn("SKIP", out)
        self.assertIn("MuJoCo import: off", out)

    def test_usage_errors(self):
        steer, out = str(self.steer), str(self.work / "out")
        for args, expect in ((["--check", "--out", out], "--steer PATH is needed"),
                             (["--check", "--steer", steer], "--out DIR is needed"),
                             (["--check", "--steer", str(self.work / "nope"), "--out", out], "--steer: no executable"),
                             (["--fuzz", "3", "--steer", steer, "--out", out], "--fuzz needs --seed"),
                             (["--fuzz", "0", "--seed", "1", "--steer", steer, "--out", out], "--fuzz: N must be"),
                             (["--check", "--steer", steer, "--out", out, "--only", "nope.xml"], "--only: no file nope.xml"),
                             (["--check", "--steer", steer, "--out", out, "--timeout", "0"], "--timeout: must be > 0"),
                             (["--check", "--steer", steer, "--out", out, "--seed", "1"], "--seed and --seeds are for --fuzz"),
                             (["--list", "--steer", steer], "--steer: only with --check or --fuzz"),
                             ([], "one of the arguments")):
            with self.subTest(args=args):
                rc, text = self.run_tool(*args)
                self.assertEqual(rc, 2, text)
                self.assertIn(expect, text)

    def test_write_and_list(self):
        rc, out = self.run_tool("--write", str(self.work / "c"))
        self.assertEqual(rc, 0, out)
        manifest = json.loads((self.work / "c" / ma.MANIFEST).read_text())
        self.assertEqual(len(manifest["files"]), len(ma.corpus()))
        rc, out = self.run_tool("--list")
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(out.splitlines()), len(ma.corpus()))


if __name__ == "__main__":
    unittest.main()
