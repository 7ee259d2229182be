#!/usr/bin/env python3
"""The run's guarantees under concurrency, bad output folders, signals and kills (docs/robustness.md).

    hardening_run.py STEER DATA_DIR WORK_DIR PART [options]

PART is one of
  concurrent [N]   N runs at once into one --out all land (exit 0, N artifact folders, no temp left)
  output           --out / output.dir naming a file or an unwritable folder: exit 2 naming the option
                   or key, before any work, nothing written
  stale            a temporary folder of a dead process is removed by the next run; a live one is kept
  signals          SIGINT and SIGTERM (also with SIGINT ignored at start) stop the run with 130 / 143,
                   leave no temporary folder, and the checkpoint resumes to the uninterrupted artifact
  kill [N]         SIGKILL at random moments, N times over Adam, L-BFGS-B and CMA-ES, then --resume
                   (sometimes killed again): every artifact equals the uninterrupted run's, except the
                   wall-clock fields
  changed          --resume with a changed config: exit 2 naming the key that differs
Exit 0 on success; 1 with a message otherwise.
"""
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from script_folders import fresh_folder  # noqa: E402 (tests/support)
import time

STEER, DATA, WORK, PART = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
ARGS = sys.argv[5:]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def fresh(name):
    return fresh_folder(WORK, name)


def config(name):
    return os.path.join(DATA, name + ".json")


def run(args, **kw):
    return subprocess.run([STEER] + args, capture_output=True, text=True, **kw)


def folders(out):
    return sorted(e for e in os.listdir(out)) if os.path.isdir(out) else []


def published(out):
    return [e for e in folders(out) if not e.startswith(".") and not e.endswith(".checkpoint")]


# the artifact without what a clock decides: the start time and every "seconds", rate and
# latency figure
def comparable(x):
    if isinstance(x, dict):
        return {k: comparable(v) for k, v in x.items()
                if k != "created_utc" and not any(t in k for t in ("seconds", "per_second", "latency"))}
    if isinstance(x, list):
        return [comparable(v) for v in x]
    return x


# report.html (docs/report.md) embeds the artifact, clock figures included: its page compared
# as it is, its embedded data as the artifact is
REPORT_DATA = re.compile(rb'(<script type="application/json" id="steer-data">)(.*?)(</script>)', re.S)


def comparable_report(data):
    m = REPORT_DATA.search(data)
    if not m:
        return data
    return (data[:m.start(2)] + data[m.end(2):], comparable(json.loads(m.group(2))))


def artifact_files(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        if name == "artifact.json":
            out[name] = comparable(json.loads(data))
        elif name == "report.html":
            out[name] = comparable_report(data)
        else:
            out[name] = data
    return out


def same_artifact(a, b, what):
    fa, fb = artifact_files(a), artifact_files(b)
    if sorted(fa) != sorted(fb):
        fail(f"{what}: files differ: {sorted(fa)} vs {sorted(fb)}")
    for name in fa:
        if fa[name] != fb[name]:
            if name == "artifact.json":
                diffs = [k for k in fa[name] if fa[name].get(k) != fb[name].get(k)]
                fail(f"{what}: artifact.json differs in {diffs}")
            fail(f"{what}: {name} differs")


def new_folder(out, before):
    added = [e for e in published(out) if e not in before]
    if len(added) != 1:
        fail(f"expected one new artifact folder in {out}, found {added}")
    return os.path.join(out, added[0])


def temp_entries(out):
    return [e for e in folders(out) if e.startswith(".")]


def part_concurrent():
    n = int(ARGS[0]) if ARGS else 200
    out = fresh("concurrent")
    procs = [subprocess.Popen([STEER, "run", config("quick"), "--out", out, "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    bad = []
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            bad.append((p.returncode, err.strip()[-200:]))
    if bad:
        fail(f"{len(bad)} of {n} concurrent runs failed, e.g. {bad[0]}")
    runs = published(out)
    if len(runs) != n:
        fail(f"{n} runs exited 0 but {len(runs)} artifact folders exist")
    for r in runs:
        if not os.path.isfile(os.path.join(out, r, "artifact.json")):
            fail(f"{r} has no artifact.json")
    if temp_entries(out):
        fail(f"temporary entries left: {temp_entries(out)[:3]}")
    print(f"concurrent: {n} runs into one folder, {len(runs)} artifacts, none lost")


def expect_refused(args, key, what):
    t0 = time.time()
    r = run(args)
    dt = time.time() - t0
    if r.returncode != 2:
        fail(f"{what}: exit {r.returncode}, expected 2; stderr: {r.stderr[-300:]}")
    if key not in r.stderr:
        fail(f"{what}: the message does not name {key}: {r.stderr[-300:]}")
    if "iteration" in r.stderr or "validating" in r.stderr:
        fail(f"{what}: work started before the refusal: {r.stderr[-300:]}")
    print(f"output: {what}: exit 2 in {dt:.2f} s: {r.stderr.strip()[:160]}")


def part_output():
    d = fresh("output")
    a_file = os.path.join(d, "a_file")
    open(a_file, "w").write("x")
    # a config that would run for seconds: the refusal must come before any of it
    expect_refused(["run", config("resume_adam"), "--out", a_file], "--out", "--out naming a file")
    expect_refused(["run", config("resume_adam"), "--out", os.path.join(a_file, "sub")], "--out", "--out below a file")
    with open(config("resume_adam")) as f:
        cfg = json.load(f)
    cfg["output"]["dir"] = a_file
    bad_cfg = os.path.join(d, "bad_out.json")
    json.dump(cfg, open(bad_cfg, "w"))
    expect_refused(["run", bad_cfg], "output.dir", "output.dir naming a file")
    expect_refused(["compare", bad_cfg], "output.dir", "compare: output.dir naming a file")
    # a folder no one may create files in, root included (procfs)
    if os.path.isdir("/proc/self"):
        expect_refused(["run", config("resume_adam"), "--out", "/proc/self"], "--out", "--out a folder that takes no files")
    if os.geteuid() != 0:
        ro = os.path.join(d, "read_only")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        expect_refused(["run", config("resume_adam"), "--out", ro], "--out", "--out unwritable")
        if os.listdir(ro):
            fail("the unwritable folder got entries")
        os.chmod(ro, 0o755)
    else:
        print("output: running as root, the unwritable-folder case is not testable here")
    if open(a_file).read() != "x":
        fail("the file named by --out was changed")


def host_tag():
    return socket.gethostname().replace("/", "_").replace(".", "_") or "host"


def part_stale():
    out = fresh("stale")
    # a pid that is surely dead: a child that has exited and been reaped
    p = subprocess.Popen(["true"])
    p.wait()
    dead = os.path.join(out, f".old-run.tmp-{host_tag()}-{p.pid}")
    live = os.path.join(out, f".other-run.tmp-{host_tag()}-{os.getpid()}")
    foreign = os.path.join(out, f".far-run.tmp-another_host-{p.pid}")
    for d in (dead, live, foreign):
        os.makedirs(d)
        open(os.path.join(d, "partial.csv"), "w").write("1,2\n")
    # the writability probe of a run killed between creating and removing it
    dead_probe = os.path.join(out, f".steer-probe-Ab3dEf.tmp-{host_tag()}-{p.pid}")
    open(dead_probe, "w").close()
    r = run(["run", config("quick"), "--out", out, "--quiet"])
    if r.returncode != 0:
        fail(f"run failed: {r.stderr[-300:]}")
    if os.path.exists(dead):
        fail("the dead process's temporary folder was not removed")
    if os.path.exists(dead_probe):
        fail("the dead process's writability probe was not removed")
    if not os.path.exists(live):
        fail("a live process's temporary folder was removed")
    if not os.path.exists(foreign):
        fail("another host's temporary folder was removed")
    print("stale: dead folder and probe removed, live and other-host kept")


def reference(name, out):
    before = published(out)
    r = run(["run", config(name), "--out", out, "--quiet"])
    if r.returncode != 0:
        fail(f"reference run of {name} failed: {r.stderr[-300:]}")
    return new_folder(out, before)


def start(name, out, extra=(), ignore_sigint=False):
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen([STEER, "run", config(name), "--out", out] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pre)


def wait_for_iterations(p, timeout=60):
    # progress lines come about once a second; the first says the optimizer runs
    t0 = time.time()
    lines = []
    while time.time() - t0 < timeout:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "iteration" in line:
            return lines
    fail("the run never reached the optimizer: " + "".join(lines)[-300:])


def resume_dir_from(msg):
    key = "--resume "
    i = msg.rfind(key)
    if i < 0:
        fail(f"no resume hint in: {msg[-300:]}")
    return msg[i + len(key):].split()[0]


def replayed_count(err):
    # "steer: resuming NAME from DIR: N logged optimizer evaluations to replay"
    for line in err.splitlines():
        if "logged optimizer evaluations" in line:
            return int(line.split(": ")[-1].split()[0])
    fail(f"the resumed run did not say what it replays: {err[-300:]}")


def part_signals():
    out = fresh("signals")
    ref = reference("resume_adam", out)
    for sig, code, ignore in ((signal.SIGINT, 130, False), (signal.SIGTERM, 143, False), (signal.SIGINT, 130, True)):
        before = published(out)
        p = start("resume_adam", out, ["--checkpoint-evaluations", "5"], ignore_sigint=ignore)
        wait_for_iterations(p)
        p.send_signal(sig)
        _, err = p.communicate(timeout=120)
        what = f"{signal.Signals(sig).name}{' (ignored at start)' if ignore else ''}"
        if p.returncode != code:
            fail(f"{what}: exit {p.returncode}, expected {code}: {err[-300:]}")
        if temp_entries(out):
            fail(f"{what}: temporary entries left: {temp_entries(out)}")
        if published(out) != before:
            fail(f"{what}: an artifact was published by a stopped run")
        ck = resume_dir_from(err)
        r = run(["run", config("resume_adam"), "--out", out, "--resume", ck, "--quiet"])
        if r.returncode != 0:
            fail(f"{what}: resume failed: {r.stderr[-300:]}")
        replayed = replayed_count(r.stderr)
        if replayed < 1:
            fail(f"{what}: the resumed run replayed nothing: {r.stderr[-300:]}")
        if os.path.exists(ck):
            fail(f"{what}: the checkpoint folder was not removed after the resumed run")
        same_artifact(ref, new_folder(out, before), what + " + --resume")
        print(f"signals: {what}: exit {code}, no temporary folder, resumed to the same artifact")


def part_kill():
    trials = int(ARGS[0]) if ARGS else 21
    rng = random.Random(int(ARGS[1]) if len(ARGS) > 1 else 12345)
    names = ["resume_adam", "resume_lbfgsb", "resume_cmaes"]
    out = fresh("kill")
    refs, durations = {}, {}
    for n in names:
        t0 = time.time()
        refs[n] = reference(n, out)
        durations[n] = time.time() - t0
    resumed = restarted = double_kills = 0
    replayed_total = []
    attempts = 0
    while resumed < trials:
        attempts += 1
        if attempts > 4 * trials:
            fail(f"only {resumed} of {attempts} kills left a checkpoint to resume")
        n = names[attempts % len(names)]
        before = published(out)
        every = str(rng.randint(1, 6))
        p = start(n, out, ["--checkpoint-evaluations", every, "--quiet"])
        time.sleep(rng.uniform(0.05, 0.9) * durations[n])
        p.kill()
        p.wait()
        # a run killed after it published its artifact (before it removed its checkpoint, or
        # before it exited) finished: its artifact must be the reference's
        if published(out) != before:
            same_artifact(refs[n], new_folder(out, before), f"{n} finished before the kill")
            for e in folders(out):
                if e.endswith(".checkpoint"):
                    shutil.rmtree(os.path.join(out, e))
            restarted += 1
            continue
        cks = [e for e in folders(out) if e.endswith(".checkpoint")]
        if not cks:
            restarted += 1  # killed before its first checkpoint: nothing to resume
            continue
        ck = os.path.join(out, cks[0])
        # sometimes kill the resumed run too, and resume again
        if rng.random() < 0.3:
            p2 = subprocess.Popen([STEER, "run", config(n), "--out", out, "--resume", ck, "--quiet",
                                   "--checkpoint-evaluations", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, 0.5) * durations[n])
            p2.kill()
            p2.wait()
            if published(out) != before:
                same_artifact(refs[n], new_folder(out, before), f"{n} resumed once")
                if os.path.exists(ck):
                    shutil.rmtree(ck)
                resumed += 1
                continue
            if not os.path.exists(ck):
                fail(f"{n}: the checkpoint vanished without an artifact")
            double_kills += 1
        r = run(["run", config(n), "--out", out, "--resume", ck, "--quiet"])
        if r.returncode != 0:
            fail(f"{n}: resume of {ck} failed: {r.stderr[-400:]}")
        replayed_total.append(replayed_count(r.stderr))
        same_artifact(refs[n], new_folder(out, before), f"{n} killed and resumed (trial {attempts})")
        if os.path.exists(ck):
            fail(f"{n}: the checkpoint folder stayed after the resumed run")
        resumed += 1
    if temp_entries(out):
        fail(f"temporary entries left: {temp_entries(out)}")
    print(f"kill: {resumed} kills resumed to the uninterrupted artifact ({double_kills} killed twice), "
          f"{restarted} runs killed before their first checkpoint or finished; evaluations replayed per resume: "
          f"{sorted(replayed_total)}")


def part_changed():
    out = fresh("changed")
    p = start("resume_adam", out, ["--checkpoint-evaluations", "1"])
    wait_for_iterations(p)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    ck = resume_dir_from(err)
    with open(config("resume_adam")) as f:
        cfg = json.load(f)
    cfg["optimizer"]["learning_rate"] = 0.02
    changed = os.path.join(out, "changed.json")
    json.dump(cfg, open(changed, "w"))
    r = run(["run", changed, "--out", out, "--resume", ck])
    if r.returncode != 2 or "optimizer.learning_rate" not in r.stderr:
        fail(f"changed config: exit {r.returncode}, stderr {r.stderr[-300:]}")
    r = run(["run", config("resume_adam"), "--out", out, "--resume", os.path.join(out, "nowhere")])
    if r.returncode != 2 or "--resume" not in r.stderr:
        fail(f"missing folder: exit {r.returncode}, stderr {r.stderr[-300:]}")
    r = run(["run", config("resume_adam"), "--out", out, "--resume", ck, "--threads", "2"])
    if r.returncode != 2 or "threads" not in r.stderr:
        fail(f"changed threads: exit {r.returncode}, stderr {r.stderr[-300:]}")
    print("changed: refused with exit 2 naming optimizer.learning_rate; a missing folder and a changed --threads too")


{"concurrent": part_concurrent, "output": part_output, "stale": part_stale, "signals": part_signals,
 "kill": part_kill, "changed": part_changed}[PART]()
