#!/usr/bin/env python3
"""Runs split across MPI ranks give the one-process artifact (docs/scaling.md).

    mpi_artifacts.py STEER MPIRUN SOURCE_DIR WORK_DIR PART

PART is one of
  morphology   a reduced configs/morphology_sweep.json (Adam in normalized variables, a final
               gradient check on a leading sample, ranking, trajectories)
  panda        a reduced configs/panda_reach.json (the arm; checks at the start and the end,
               success, the perturbation analysis), under steer run and steer check
  projectile   a float32 projectile batch under L-BFGS-B with the timestep check and the horizon
               sweep (the float64 twin and the h/2 problem split too)
  compare      a short steer compare on configs/soft_walker_knots.json (several gradient starts,
               CMA-ES generations split across ranks, two repeats)
  fault        a rank that throws, and one that runs out of memory (the STEER_FAIL_RANK hook):
               the job fails naming the rank and its rollouts, nothing is published; an output
               folder only rank 0 refuses aborts the job with exit 2
  shards       --shard-bytes 1: the gradient files as per-rank shards at 2 and 3 ranks, their union
               equal to one process's; a rank that fails writing its shard: nothing published
  resume       a job whose rank fails mid-optimization leaves rank 0's checkpoint; --resume on a
               different number of ranks ends with the uninterrupted one-process artifact
  devices      each rank's GPU by its node-local rank from a CUDA_VISIBLE_DEVICES list, as the
               artifact records it
  shared       batch-shared variables (variables.<name>.shared): Adam on two groups of 5 worlds
               with per-rollout controls beside the shared launch, and CMA-ES on one design for
               all worlds, each also at --threads 1 and 2 in one process
Each same-answer part runs the CLI alone, then under mpirun with 1, 2 and 3 ranks, and compares
the artifact folders file by file: artifact.json apart from the run-description fields (below),
every sidecar byte for byte. Exit 0 on success, 1 with a message, 77 when MPIRUN is NO_MPI (a
build without MPI: the test is skipped).
"""
import ast
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from script_folders import fresh_folder  # noqa: E402 (tests/support)

STEER, MPIRUN, SOURCE, WORK, PART = sys.argv[1:6]

# Fields that describe the run rather than its result: the start time and every clock figure
# (keys with "seconds", "per_second", "latency"), the ranks and their hosts ("parallel"), and in
# compare the cost model, which is measured with the clock (t_backward / t_forward) and scales
# the gradient side's rollout axis: every figure derived from it (COMPARE_COST_KEYS, the rollouts
# column of compare.csv's gradient rows, compare.svg) differs between two one-process runs too.
CLOCK_KEYS = ("seconds", "per_second", "latency")
RUN_FIELDS = {"created_utc", "parallel"}
# and each process's own: its host and its CPU threads (mpirun binds a rank to its cores, and a
# rank's default thread count is the cores it may use)
RUN_DEVICE_FIELDS = {"host", "threads"}
COMPARE_COST_KEYS = {"cost_model", "rollouts_total", "steer_rollouts", "steer_rollouts_total", "steer_rollouts_per_repeat",
                     "ratio_steer_over_cmaes", "ratio_per_repeat", "median_ratio", "reached"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def comparable(x, path=(), compare=False):
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k in RUN_FIELDS or any(t in k for t in CLOCK_KEYS):
                continue
            if compare and k in COMPARE_COST_KEYS:
                continue
            if path == ("device",) and k in RUN_DEVICE_FIELDS:
                continue
            if path == ("effective_config", "output") and k == "dir":
                continue  # --out: each run of the test publishes into its own folder
            if path == ("effective_config", "simulation") and k == "threads":
                continue  # --threads: the shared part runs one process at 1 and 2 threads
            out[k] = comparable(v, path + (k,), compare)
        return out
    if isinstance(x, list):
        return [comparable(v, path, compare) for v in x]
    return x


def compare_csv(data):
    """compare.csv without the gradient side's cost axis (its rollouts column is clock-scaled)"""
    rows = data.decode().splitlines()
    out = [rows[0]]
    for r in rows[1:]:
        f = r.split(",")
        out.append(r if "CMA-ES" in r else ",".join(f[:-2] + f[-1:]))
    return out


def differences(a, b, path=""):
    """paths at which two JSON values differ"""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k} (only in one)")
            else:
                out += differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path} (length {len(a)} vs {len(b)})"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {json.dumps(a)[:80]} vs {json.dumps(b)[:80]}"]


def compare_artifacts(ref, other, what, compare=False):
    # report.html embeds the artifact, run fields included; compare.svg draws the clock-scaled axis
    skip = {"report.html", "compare.svg"}
    names = sorted(n for n in os.listdir(ref) if n not in skip)
    names_o = sorted(n for n in os.listdir(other) if n not in skip)
    if names != names_o:
        fail(f"{what}: files differ: {names} vs {names_o}")
    for n in names:
        with open(os.path.join(ref, n), "rb") as f:
            a = f.read()
        with open(os.path.join(other, n), "rb") as f:
            b = f.read()
        if n == "compare.csv":
            a, b = compare_csv(a), compare_csv(b)
        if n != "artifact.json":
            if a != b:
                fail(f"{what}: {n} differs")
            continue
        d = differences(comparable(json.loads(a), compare=compare), comparable(json.loads(b), compare=compare))
        if d:
            fail(f"{what}: artifact.json differs at {len(d)} place(s), e.g. " + "; ".join(d[:5]))
    return names


def mpirun(n, extra_env=None):
    cmd = [MPIRUN, "-np", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for k, v in (extra_env or {}).items():
        cmd += ["-x", f"{k}={v}"]
    return cmd + [STEER]


def env():
    e = dict(os.environ)
    # containers often forbid the cross-memory attach of Open MPI's shared-memory transport
    e.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return e


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=1800, **kw)


def fresh(name):
    return fresh_folder(WORK, name)


def published(out):
    return sorted(e for e in os.listdir(out) if not e.startswith(".") and not e.endswith(".checkpoint"))


def one_folder(out, what):
    p = published(out)
    if len(p) != 1:
        fail(f"{what}: expected one artifact folder in {out}, found {p}")
    return os.path.join(out, p[0])


def write_config(name, cfg):
    path = os.path.join(WORK, name + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return path


def load(rel):
    with open(os.path.join(SOURCE, rel)) as f:
        return json.load(f)


def reduced(rel, batch, steps, iterations, checked, listed):
    """a shipped config at a test's size: batch, horizon, optimizer iterations, validator sample, listed rollouts"""
    c = load(rel)
    if "include" in c["model"]:
        c["model"]["include"] = os.path.join(SOURCE, "configs", c["model"]["include"])
    c["batch"]["size"] = batch
    c["simulation"]["steps"] = steps
    c["simulation"]["backend"] = "cpu"
    c["optimizer"]["iterations"] = iterations
    c["validation"]["max_rollouts"] = checked
    c["output"]["trajectory_rollouts"] = listed
    return c


def morphology_config():
    # blocks of 19 over 2 and 3 ranks are uneven, and the validator's sample (8) is cut from them
    return reduced("configs/morphology_sweep.json", 19, 120, 4, 8, 5)


def panda_config():
    return reduced("configs/panda_reach.json", 7, 40, 3, 5, 4)


def projectile_config():
    c = load("configs/projectile.json")
    c["simulation"].update({"steps": 60, "precision": "float32", "backend": "cpu"})
    c["batch"] = {"size": 10, "seed": 4, "randomize": {"x0.velocity.x": {"jitter": 0.5}, "x0.velocity.y": {"jitter": 0.3}}}
    c["optimizer"] = {"method": "lbfgsb", "iterations": 6}
    c["validation"] = {"enabled": True, "at": ["initial", "final"], "tolerance": 1e-6, "max_rollouts": 6,
                       "timestep_check": True}
    c["horizon_sweep"] = {"steps": [20, 40]}
    c["output"]["trajectory_rollouts"] = 3
    return c


def compare_config():
    c = load("configs/soft_walker_knots.json")
    c["simulation"]["steps"] = 150
    c["simulation"]["backend"] = "cpu"
    k = c["compare"]
    k.update({"iterations": 12, "cmaes_rollouts": 300, "repeats": 2, "starts": 5})
    c["optimizer"]["iterations"] = 5
    return c


def shared_config(method):
    """a drag projectile over 10 worlds (gravity and drag drawn): the launch shared, the control
    force's knots per rollout (Adam, two groups, weighted) or none (CMA-ES, one design)"""
    c = load("configs/projectile.json")
    c["model"]["drag"] = 0.05
    c["simulation"].update({"steps": 60, "backend": "cpu"})
    c["batch"] = {"size": 10, "seed": 7, "randomize": {"theta.gravity": [8.0, 12.0], "theta.drag": {"relative": 0.5}}}
    c["loss"] = {"terminal": [{"state": "position.x", "target": 1.5, "weight": 1.0},
                              {"state": "position.y", "target": 0.2, "weight": 1.0}], "control_effort": 1e-3}
    c["variables"] = {"x0.velocity.x": {"lower": 0.0, "upper": 10.0, "shared": True},
                      "x0.velocity.y": {"lower": 0.0, "upper": 10.0, "shared": True}}
    if method == "adam":
        c["batch"].update({"groups": 2, "weights": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]})
        c["variables"]["controls.force.x"] = {"lower": -2.0, "upper": 2.0, "hold": 20}
        c["optimizer"] = {"method": "adam", "learning_rate": 0.05, "iterations": 8, "normalized": True}
    else:
        c["optimizer"] = {"method": "cmaes", "iterations": 4, "sigma0": 0.2, "normalized": True}
    c["validation"] = {"enabled": True, "at": ["initial", "final"], "tolerance": 1e-6, "max_rollouts": 6}
    c["output"]["trajectory_rollouts"] = 10
    return c


def part_shared():
    for method in ("adam", "cmaes"):
        cfg = shared_config(method)
        name = "shared-" + method
        path = write_config(name, cfg)
        # one process at 1 and 2 threads: the same artifact
        folders = []
        for t in (1, 2):
            out = fresh(f"{name}-threads{t}")
            r = run([STEER, "run", path, "--out", out, "--quiet", "--threads", str(t)])
            if r.returncode != 0:
                fail(f"{name}: steer run --threads {t} exited {r.returncode}: {r.stderr[-600:]}")
            folders.append(one_folder(out, f"{name} at {t} threads"))
        names = compare_artifacts(folders[0], folders[1], f"{name}: 2 threads vs 1")
        print(f"{name}: 2 threads: {', '.join(names)} equal to 1 thread")
        with open(os.path.join(folders[0], "artifact.json")) as f:
            a = json.load(f)
        checks = [v for v in a["validation"] if "shared" in v]
        if len(checks) != 2 or not all(v["all_passed"] for v in checks):
            fail(f"{name}: expected two passing group-gradient checks, got {checks}")
        rows = a["result"]["rollouts"]
        members = a["shared"]["rollouts_per_group"]
        for b, row in enumerate(rows):
            for v in ("x0.velocity.x", "x0.velocity.y"):
                if row["variables"][v]["final"] != rows[b - b % members]["variables"][v]["final"]:
                    fail(f"{name}: rollout {b}'s {v} differs from its group's first rollout's")
        same_answer(name, cfg)


def same_answer(name, cfg, command="run"):
    path = write_config(name, cfg)
    ref_out = fresh(name + "-alone")
    r = run([STEER, command, path, "--out", ref_out, "--quiet"])
    if r.returncode not in (0, 1):
        fail(f"{name}: steer {command} alone exited {r.returncode}: {r.stderr[-600:]}")
    ref = one_folder(ref_out, name + " alone")
    ref_rc = r.returncode
    for n in (1, 2, 3):
        out = fresh(f"{name}-np{n}")
        r = run(mpirun(n) + [command, path, "--out", out])
        if r.returncode != ref_rc:
            fail(f"{name}: mpirun -np {n} steer {command} exited {r.returncode} (alone: {ref_rc}): {r.stderr[-800:]}")
        got = one_folder(out, f"{name} on {n} ranks")
        names = compare_artifacts(ref, got, f"{name}: {n} rank(s) vs one process", command == "compare")
        with open(os.path.join(got, "artifact.json")) as f:
            par = json.load(f)["parallel"]
        if par["ranks"] != n:
            fail(f"{name}: the artifact of {n} ranks says {par['ranks']}")
        if command == "run" and n > 1 and "rollouts (" + str(n) + " ranks)" not in r.stderr and cfg["optimizer"]["method"] != "none":
            fail(f"{name}: rank 0's progress does not count rollouts over the ranks: {r.stderr[-400:]}")
        if command == "run" and n > 1:
            optimizer_bytes(name, cfg, got, par, n)
        extra = " (the clock-scaled cost figures left out)" if command == "compare" else ""
        print(f"{name}: {n} rank(s): {', '.join(names)} equal to one process{extra}")


def npy_shape(path):
    """the shape in a .npy file's header"""
    with open(path, "rb") as f:
        head = f.read(128).decode("latin1")
    return ast.literal_eval(head[head.index("{"):head.index("}") + 1])["shape"]


def optimizer_bytes(name, cfg, got, par, n):
    """Adam and gd run on each rank's block: the optimizer gathers a logged iteration's losses
    (8 B per rollout), the leading rollouts' variables of a small problem and, once, the final
    variables, never an evaluation's gradients and diagnostics (docs/scaling.md)"""
    method = cfg["optimizer"]["method"]
    opt = par.get("optimizer")
    if opt is None:
        fail(f"{name}: the artifact of {n} ranks has no parallel.optimizer")
    B, nv = npy_shape(os.path.join(got, "gradient.npy"))[:2]
    iters = opt["iterations"]
    gathered = iters * B * (8 + 8 * nv + 96)  # what the gathered path receives at least
    shared = any(v.get("shared") for v in cfg.get("variables", {}).values())
    if method in ("adam", "gd") and not shared:
        # per logged iteration (≤ iterations + 1 entries): losses and ≤ 8 rows of ≤ 32 variables;
        # once: the final variables, the counters (24 B per rank) and a flag per rank
        bound = (iters + 1) * (8 * B + 8 * 8 * 32) + 8 * B * nv + 25 * n
        if opt["path"] != "per-rank blocks" or opt["bytes_received"] > bound:
            fail(f"{name}: {method} on {n} ranks took the path '{opt['path']}' and received "
                 f"{opt['bytes_received']} B (the block path's bound: {bound} B)")
    elif opt["path"] != "gathered" or opt["bytes_received"] < gathered:
        fail(f"{name}: {method} on {n} ranks: path '{opt['path']}', {opt['bytes_received']} B received, "
             f"expected the gathered path's ≥ {gathered} B")
    print(f"{name}: {n} ranks, {method}: optimizer path '{opt['path']}', {opt['bytes_received']} B received "
          f"over {iters} iterations (B = {B}, nv = {nv}; gathering every evaluation: ≥ {gathered} B)")


def npy_data(path):
    """a .npy file's shape and its data bytes (after the header)"""
    with open(path, "rb") as f:
        raw = f.read()
    header_len = int.from_bytes(raw[8:10], "little")  # format 1.0: 10-byte preamble
    return npy_shape(path), raw[10 + header_len:]


def part_shards():
    # --shard-bytes 1 forces shards: each rank writes its block's rows of both gradient files into
    # the one artifact folder; their union in rank order must be the one-process files, and the
    # rest of the artifact must equal one process's
    cfg = morphology_config()
    path = write_config("shards", cfg)
    ref_out = fresh("shards-alone")
    r = run([STEER, "run", path, "--out", ref_out, "--quiet", "--shard-bytes", "1"])
    if r.returncode != 0:
        fail(f"shards: steer run alone exited {r.returncode}: {r.stderr[-600:]}")
    ref = one_folder(ref_out, "shards alone")
    if not os.path.exists(os.path.join(ref, "gradient.npy")):
        fail("shards: one process wrote no gradient.npy (shards are for runs split across ranks)")
    with open(os.path.join(ref, "artifact.json")) as f:
        ref_art = json.load(f)
    for n in (2, 3):
        out = fresh(f"shards-np{n}")
        r = run(mpirun(n) + ["run", path, "--out", out, "--quiet", "--shard-bytes", "1"])
        if r.returncode != 0:
            fail(f"shards: mpirun -np {n} exited {r.returncode}: {r.stderr[-800:]}")
        if [e for e in os.listdir(out) if e.startswith(".")]:
            fail(f"shards: a temporary folder is left in {out}: {os.listdir(out)}")
        got = one_folder(out, f"shards on {n} ranks")
        with open(os.path.join(got, "artifact.json")) as f:
            art = json.load(f)
        gf = art["result"]["gradient_file"]
        shards = gf.get("shards")
        if not shards or len(shards) != n:
            fail(f"shards: {n} ranks list {shards!r}, expected {n} shards")
        expect = {"artifact.json", "report.html", "trajectory.csv"}
        for base, key in (("gradient_initial", "initial"), ("gradient", "final"),
                          ("variables_initial", "variables_initial"), ("variables", "variables_final")):
            _, whole = npy_data(os.path.join(ref, base + ".npy"))
            union = b""
            rows = 0
            for k, sh in enumerate(shards):
                if sh["rank"] != k or sh[key] != f"{base}.rank{k:04d}.npy":
                    fail(f"shards: shard {k} on {n} ranks is {sh}")
                shape, data = npy_data(os.path.join(got, sh[key]))
                if list(shape) != sh["shape"] or sh["rollouts"] != [rows, rows + shape[0]]:
                    fail(f"shards: {sh[key]} has shape {shape}, listed as {sh}")
                rows += shape[0]
                union += data
                expect.add(sh[key])
            if union != whole:
                fail(f"shards: the {n} shards of {base}.npy are not the one-process file's rows")
        if sorted(os.listdir(got)) != sorted(expect):
            fail(f"shards: {n} ranks published {sorted(os.listdir(got))}, expected {sorted(expect)}")
        # apart from the gradient files' listing, the artifact is the one-process one
        for a in (art, ref_art):
            del a["result"]["gradient_file"]
        d = differences(comparable(ref_art), comparable(art))
        if d:
            fail(f"shards: artifact.json of {n} ranks differs at {len(d)} place(s), e.g. " + "; ".join(d[:5]))
        with open(os.path.join(ref, "artifact.json")) as f:
            ref_art = json.load(f)
        print(f"shards: {n} ranks: {len(shards)} shards of gradient(_initial).npy and variables(_initial).npy, their union "
              f"equal to one process's files; the rest of the artifact equal")
    # a rank that cannot write its shard: every rank fails together, and rank 0's temporary
    # folder, which already holds its own files, is removed instead of published
    out = fresh("shards-fail")
    r = run(mpirun(3, {"STEER_FAIL_RANK": 2, "STEER_FAIL_KIND": "shard"})
            + ["run", path, "--out", out, "--quiet", "--shard-bytes", "1"])
    who = "rank 2 of 3 (rollouts 13–18) failed: writing its artifact shard: injected failure"
    if r.returncode == 0 or r.stderr.count(who) != 1:
        fail(f"shards: a failed shard write should exit non-zero and say '{who}' once, got {r.returncode}: {r.stderr[-600:]}")
    if os.listdir(out):
        fail(f"shards: a failed shard write left {os.listdir(out)} in the output folder")
    print(f"shards: rank 2 of 3 failing to write its shard: exit {r.returncode}, said once, nothing published")


def part_fault():
    cfg = morphology_config()
    path = write_config("fault", cfg)
    for n, rank, kind, expect in ((3, 1, "exception", "injected failure"), (2, 1, "oom", "out of memory")):
        out = fresh(f"fault-np{n}-{kind}")
        r = run(mpirun(n, {"STEER_FAIL_RANK": rank, "STEER_FAIL_KIND": kind, "STEER_FAIL_AFTER": 2})
                + ["run", path, "--out", out, "--quiet"])
        base, extra = divmod(19, n)
        begin = rank * base + min(rank, extra)
        count = base + (1 if rank < extra else 0)
        who = f"rank {rank} of {n} (rollouts {begin}–{begin + count - 1})"
        if r.returncode == 0:
            fail(f"fault {kind}: the job exited 0")
        if who not in r.stderr or expect not in r.stderr:
            fail(f"fault {kind}: stderr does not name '{who}' and '{expect}': {r.stderr[-600:]}")
        if r.stderr.count(who) != 1:
            fail(f"fault {kind}: the failure is said {r.stderr.count(who)} times: {r.stderr[-600:]}")
        left = os.listdir(out)
        if left:
            fail(f"fault {kind}: the output folder holds {left} after a failed job")
        print(f"fault {kind} on rank {rank} of {n}: exit {r.returncode}, '{who} failed' said once, nothing published")
    # an error only rank 0 meets (it alone prepares the output folder): the job is aborted with
    # the error's exit code, the message said once with its rank
    not_a_folder = os.path.join(WORK, "fault-out-is-a-file")
    with open(not_a_folder, "w") as f:
        f.write("a file\n")
    r = run(mpirun(2) + ["run", path, "--out", not_a_folder, "--quiet"])
    said = "--out: '" + not_a_folder + "' is not a folder [rank 0 of 2; the job is aborted]"
    if r.returncode != 2 or r.stderr.count(said) != 1:
        fail(f"fault --out: expected exit 2 and '{said}' once, got {r.returncode}: {r.stderr[-600:]}")
    print("fault --out on rank 0 alone: exit 2, said once, the job aborted")


def part_devices():
    # one GPU per rank by node-local rank: with CUDA_VISIBLE_DEVICES a list, rank r takes entry
    # r % length (all ranks here share one node); the CPU backend runs, the choice is recorded
    cfg = projectile_config()
    path = write_config("devices", cfg)
    for visible, expect in (("3,5", ["3", "5", "3"]), ("7", ["7", "7", "7"])):
        out = fresh("devices")
        r = run(mpirun(3, {"CUDA_VISIBLE_DEVICES": visible}) + ["run", path, "--out", out, "--quiet"])
        if r.returncode != 0:
            fail(f"devices: exited {r.returncode}: {r.stderr[-600:]}")
        with open(os.path.join(one_folder(out, "devices"), "artifact.json")) as f:
            got = [p["cuda_visible_devices"] for p in json.load(f)["parallel"]["per_rank"]]
        if got != expect:
            fail(f"devices: CUDA_VISIBLE_DEVICES={visible} on 3 ranks gave {got}, expected {expect}")
        print(f"devices: CUDA_VISIBLE_DEVICES={visible} on 3 ranks: ranks see {got}")


def part_resume():
    cfg = morphology_config()
    path = write_config("resume", cfg)
    ref_out = fresh("resume-alone")
    r = run([STEER, "run", path, "--out", ref_out, "--quiet"])
    if r.returncode != 0:
        fail(f"resume: the uninterrupted run exited {r.returncode}: {r.stderr[-600:]}")
    ref = one_folder(ref_out, "resume alone")
    out = fresh("resume-split")
    # the optimizer's problem fails at its 3rd evaluation on rank 1: iterations 1 and 2 are logged
    r = run(mpirun(2, {"STEER_FAIL_RANK": 1, "STEER_FAIL_AFTER": 3})
            + ["run", path, "--out", out, "--quiet", "--checkpoint-evaluations", "1"])
    if r.returncode == 0:
        fail("resume: the failing job exited 0")
    cks = [e for e in os.listdir(out) if e.endswith(".checkpoint")]
    if len(cks) != 1 or published(out):
        fail(f"resume: expected one checkpoint and no artifact after the failure, found {os.listdir(out)}")
    ck = os.path.join(out, cks[0])
    with open(os.path.join(ck, "state.json")) as f:
        logged = json.load(f)["logged"]
    if logged < 1:
        fail("resume: the checkpoint logged no evaluation")
    r = run(mpirun(3) + ["run", path, "--out", out, "--resume", ck])
    if r.returncode != 0:
        fail(f"resume: mpirun -np 3 --resume exited {r.returncode}: {r.stderr[-800:]}")
    if "logged optimizer evaluations to replay" not in r.stderr or r.stderr.count("to replay") != 1:
        fail(f"resume: rank 0 alone should say what it replays: {r.stderr[-600:]}")
    got = one_folder(out, "resume on 3 ranks")
    if os.path.exists(ck):
        fail("resume: the checkpoint folder is still there after the artifact was published")
    compare_artifacts(ref, got, "resume: 2 ranks failed, resumed on 3, vs one uninterrupted process")
    print(f"resume: failed on 2 ranks after {logged} logged evaluation(s), resumed on 3: equal to one process")


def main():
    if MPIRUN == "NO_MPI":
        print("SKIP: steer was built without MPI (cmake/mpi.cmake found no MPI C library, or STEER_MPI=OFF)")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    if PART == "morphology":
        same_answer("morphology", morphology_config())
    elif PART == "panda":
        same_answer("panda", panda_config())
        same_answer("panda-check", panda_config(), "check")
    elif PART == "projectile":
        same_answer("projectile", projectile_config())
    elif PART == "compare":
        same_answer("compare", compare_config(), "compare")
    elif PART == "fault":
        part_fault()
    elif PART == "devices":
        part_devices()
    elif PART == "resume":
        part_resume()
    elif PART == "shards":
        part_shards()
    elif PART == "shared":
        part_shared()
    else:
        fail("unknown part " + PART)


if __name__ == "__main__":
    main()
