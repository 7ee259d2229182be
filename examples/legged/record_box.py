#!/usr/bin/env python3
"""Records the "measured" trajectory that configs/box_slide.json (or box_bounce.json) identifies (docs/legged.md, The box).

The recording is steer itself at known contact parameters and a finer timestep: the box of
box_slide.json at dt / FINE (default 4) over the same duration, with the true friction
coefficient and coefficient of restitution (or, with --damping, a contact damping instead) given
on the command line. With the config's contact.impact "time_of_impact" the restitution is the
impulses' and the config's contact.damping stays. Every FINE-th state is kept, so the recorded times are the fit's steps, and
Gaussian noise of standard deviation SIGMA is added to each recorded coordinate (m for the
centre, 1 for the quaternion's components). steer's contact law is not MuJoCo's (a penalty force
with smoothed Coulomb friction against MuJoCo's soft constraint with a friction cone), so a MuJoCo
recording would mix the model's error into the identification; a finer-timestep steer recording
keeps only the discretization error (dt vs dt / FINE) and the noise.

Writes OUT_CSV (t and the recorded columns) and, beside it, OUT_CSV with _recorded.csv replaced by
_truth.json (the values, the noise, the command). Usage (from the repository root):
  python3 examples/legged/record_box.py build/steer configs/box_slide.json configs/data/box_slide_recorded.csv
      [--friction MU] [--restitution E | --damping C] [--noise SIGMA] [--seed N] [--fine F]
"""
import argparse
import csv
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

COLUMNS = ["root.p.x", "root.p.y", "root.p.z", "root.quat.w", "root.quat.z"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("steer")
    ap.add_argument("config")
    ap.add_argument("out_csv")
    ap.add_argument("--friction", type=float, default=0.5, help="true contact.friction (mu)")
    ap.add_argument("--restitution", type=float, default=0.3, help="true contact.restitution (e)")
    ap.add_argument("--damping", type=float, default=None,
                    help="true contact.damping [N s/m] instead of a restitution")
    ap.add_argument("--noise", type=float, default=1e-4, help="noise standard deviation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fine", type=int, default=4, help="recording timestep = dt / fine")
    a = ap.parse_args()
    if a.fine < 1 or a.noise < 0:
        sys.exit("record_box: --fine must be >= 1 and --noise >= 0")
    if not a.out_csv.endswith("_recorded.csv"):
        sys.exit("record_box: OUT_CSV must end in _recorded.csv (the truth goes beside it)")

    cfg_dir = os.path.dirname(os.path.abspath(a.config))
    c = json.load(open(a.config))
    m = c["model"]
    for key in ("mjcf", "urdf", "include"):
        if key in m and not os.path.isabs(m[key]):
            m[key] = os.path.join(cfg_dir, m[key])
    ct = m.setdefault("contact", {})
    ct["friction"] = a.friction
    if a.damping is not None:
        ct.pop("restitution", None)
        ct.pop("impact", None)
        ct.pop("impact_sweeps", None)
        ct["damping"] = a.damping
    elif ct.get("impact") == "time_of_impact":
        # the impulses' restitution; the normal law keeps the config's contact.damping
        ct["restitution"] = a.restitution
    else:
        ct.pop("damping", None)
        ct["restitution"] = a.restitution
    dt = c["simulation"]["dt"]
    steps = c["simulation"]["steps"]
    c["name"] = "box_recording"
    c["simulation"]["dt"] = dt / a.fine
    c["simulation"]["steps"] = steps * a.fine
    c["batch"] = {"size": 1}
    # a placeholder loss (a run needs one); nothing is optimized or checked
    c["loss"] = {"terminal": [{"state": "root.p.x", "target": 0, "weight": 0}]}
    for key in ("variables", "compare", "perturb", "horizon_sweep", "success_tolerance"):
        c.pop(key, None)
    c["optimizer"] = {"method": "none"}
    c["validation"] = {"enabled": False}
    c["output"] = {"trajectory_stride": a.fine, "trajectory_rollouts": 1, "json_trajectory_points": 2}

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "record.json")
        json.dump(c, open(path, "w"), indent=1)
        cmd = [a.steer, "run", path, "--out", tmp, "--quiet"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("record_box: steer failed (%d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
        traj = glob.glob(os.path.join(tmp, "box_recording-*", "trajectory.csv"))
        if len(traj) != 1:
            sys.exit("record_box: expected one trajectory.csv under " + tmp)
        rows = list(csv.DictReader(open(traj[0])))
    if not rows:
        sys.exit("record_box: empty trajectory")
    if "rollout" in rows[0]:
        rows = [row for row in rows if int(row["rollout"]) == 0]
    # trajectory.csv names a column <state>_<unit> (or <state> without a unit)
    header = list(rows[0].keys())
    source = {}
    for col in COLUMNS:
        hits = [h for h in header if h == col or h.startswith(col + "_")]
        if len(hits) != 1:
            sys.exit("record_box: no single column for %s in %s" % (col, header))
        source[col] = hits[0]

    rng = random.Random(a.seed)
    with open(a.out_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["t"] + COLUMNS)
        for row in rows:
            k = int(row["step"])
            # the recorded time is the fit's step k / fine times dt, exactly
            t = (k // a.fine) * dt
            w.writerow(["%.10g" % t] + ["%.9g" % (float(row[source[col]]) + rng.gauss(0.0, a.noise)) for col in COLUMNS])
    truth = {"contact.friction": a.friction, "noise": a.noise, "seed": a.seed,
             "recording_dt_s": dt / a.fine, "fit_dt_s": dt, "steps": steps, "rows": len(rows),
             "command": " ".join(["python3", "examples/legged/record_box.py", "<steer>", a.config, a.out_csv,
                                  "--friction", repr(a.friction)]
                                 + (["--damping", repr(a.damping)] if a.damping is not None
                                    else ["--restitution", repr(a.restitution)])
                                 + ["--noise", repr(a.noise), "--seed", str(a.seed), "--fine", str(a.fine)])}
    if a.damping is not None:
        truth["contact.damping"] = a.damping
    else:
        truth["contact.restitution"] = a.restitution
    json.dump(truth, open(a.out_csv[: -len("_recorded.csv")] + "_truth.json", "w"), indent=1)
    print("record_box: %d rows, friction %g, %s, noise %g -> %s" % (
        len(rows), a.friction,
        ("damping %g" % a.damping) if a.damping is not None else ("restitution %g" % a.restitution),
        a.noise, a.out_csv))


if __name__ == "__main__":
    main()
