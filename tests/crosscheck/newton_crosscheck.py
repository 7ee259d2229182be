"""Cross-check against NVIDIA Newton (PyPI newton 1.8.0, warp-lang 1.19.0, CPU device): the
quadruped of configs/mjcf/quadruped.xml imported by both engines, in the air (torso 2 m up, no
contact), Newton's SolverFeatherstone against steer's `euler`.

The scene, the state mapping and the loss are bench/peers/newton_quadruped.py's (imported from
there); this is its `check` shortened for the suite. Asserted:

  1. imported inertials: every body's mass and centre of mass and inertia within 1e-5 relative
     (MuJoCo's compiler on steer's side, Newton's own MJCF parser on the other);
  2. `matched` laws (damping, joint limits and torque limits off in both: the laws are then the
     same up to the quaternion update's (h|w|)^3/12 per step), 0.5 s at h = 2 ms from a
     spinning, leg-swinging start 2 m up: torso position within 1e-4 m, orientation within 1e-4 rad,
     hinge angles within 1e-4 rad (Newton is float32: about 1e-6 relative per step, grown by
     the dynamics over 250 steps);
  3. the file's laws (damping 3 N m s/rad implicit in steer, explicit in Newton: a first-order
     difference): the largest hinge-angle difference over 0.5 s at h = 1 ms is 0.4-0.6 of the
     one at 2 ms (first order: 1/2);
  4. gradients, matched laws, T = 10 and 100 steps: dL/dv_0 (18) and dL/du (12 constant hinge
     torques) of a terminal loss; steer's adjoint against its centered FD (float64, eps 1e-6)
     within 1e-6; Newton's wp.Tape against steer's adjoint within 2e-4 of the largest component
     (float32), with one SolverFeatherstone per step. With one solver for all steps (Newton's
     usual use) the tape reuses the last step's mass matrix and Cholesky factor for every step's
     adjoint: that error is reported, not asserted.

  python3 tests/crosscheck/newton_crosscheck.py --steer-python build/python --work build/crosscheck
exit 0 pass, 1 fail, 77 skip (no venv, PyPI unreachable, steer's module missing).
"""
import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import peer_venv  # noqa: E402

TAG = "newton_crosscheck"
TOL_INERTIAL = 1e-5
TOL_TRAJ = 1e-4  # m, rad
FIRST_ORDER = (0.4, 0.6)
TOL_STEER_FD = 1e-6
TOL_NEWTON_GRAD = 2e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steer-python", default=str(ROOT / "build" / "python"))
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "crosscheck")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "bench" / "peers"))
    import newton_quadruped as nq

    peer_venv.enter(TAG, args.work / "newton-venv", nq.NEWTON_REQUIREMENTS, ["newton", "warp", "numpy"])
    steer = peer_venv.import_steer(TAG, args.steer_python)
    t_start = time.perf_counter()
    wp, newton = nq.import_newton(args.work / "warp-cache")
    x0, u = nq.air_start()
    results, checks = {"newton": newton.__version__, "warp": wp.config.version}, []

    def check(name, value, ok, bound):
        checks.append({"check": name, "value": value, "bound": bound, "pass": bool(ok)})
        print(f"{TAG}: {'ok  ' if ok else 'FAIL'} {name}: {value} ({bound})", flush=True)

    inert = nq.inertia_check(wp, newton, steer)
    results["inertials"] = inert
    if "skipped" in inert:
        check("inertials", inert["skipped"], False, "steer's body slots")
    else:
        worst = max(inert["mass_rel"], inert["inertia_rel"] or 0.0)
        check("inertials mass/inertia rel", worst, worst <= TOL_INERTIAL, f"<= {TOL_INERTIAL}")
        check("inertials com [m]", inert["com_m"], inert["com_m"] <= TOL_INERTIAL, f"<= {TOL_INERTIAL}")

    t_jit = time.perf_counter()
    traj = {}
    for law, dt in (("matched", 0.002), ("file", 0.002), ("file", 0.001)):
        T = int(round(0.5 / dt))
        nw = nq.NewtonAir(wp, newton, T, dt, law).trajectory(x0, u)
        st = nq.steer_trajectory(nq.steer_air(steer, T, dt, law), x0, u)
        traj[f"{law}_dt{dt:g}"] = nq.traj_diff(nw, st)
        if len(traj) == 1:
            results["first_newton_run_s"] = time.perf_counter() - t_jit  # includes Warp's JIT
    results["trajectory"] = traj
    m = traj["matched_dt0.002"]
    for k in ("root_p_m", "root_angle_rad", "hinge_q_rad"):
        check(f"matched trajectory {k}", m[k], m[k] <= TOL_TRAJ, f"<= {TOL_TRAJ}")
    ratio = traj["file_dt0.001"]["hinge_q_rad"] / traj["file_dt0.002"]["hinge_q_rad"]
    results["file_first_order_ratio"] = ratio
    check("file laws: hinge diff(1 ms)/diff(2 ms)", ratio, FIRST_ORDER[0] <= ratio <= FIRST_ORDER[1],
          f"in {list(FIRST_ORDER)}")

    grads = {}
    for T in (10, 100):
        sim = nq.steer_air(steer, T, 0.002, "matched")
        L_s, gv_s, gu_s, fdv, fdu = nq.steer_grad_fd(sim, x0, u)
        e_fd = max(nq.vec_rel(gv_s, fdv), nq.vec_rel(gu_s, fdu))
        check(f"T={T} steer adjoint vs FD", e_fd, e_fd <= TOL_STEER_FD, f"<= {TOL_STEER_FD}")
        row = {"steer_loss": L_s, "steer_adjoint_vs_fd": e_fd}
        for tag, per_step in (("per_step_solver", True), ("shared_solver", False)):
            L_n, gv_n, gu_n = nq.NewtonAir(wp, newton, T, 0.002, "matched", per_step_solver=per_step).grad(x0, u)
            e = max(nq.vec_rel(gv_n, gv_s), nq.vec_rel(gu_n, gu_s))
            row[tag] = {"loss_rel": abs(L_n - L_s) / abs(L_s), "grad_rel": e}
            if per_step:
                check(f"T={T} Newton tape (per-step solver) vs steer adjoint", e, e <= TOL_NEWTON_GRAD,
                      f"<= {TOL_NEWTON_GRAD}")
            else:
                print(f"{TAG}: info T={T} Newton tape (one shared solver) vs steer adjoint: {e:.3g} "
                      "(Featherstone's per-solver M/H/L buffers; not asserted)", flush=True)
        grads[f"T{T}"] = row
    results["gradient"] = grads
    info = [(f"{T} Newton tape, one shared solver (not asserted)", row["shared_solver"]["grad_rel"])
            for T, row in grads.items()]
    return finish(TAG, args, results, checks, "quadruped in the air", info, t_start)


def finish(tag, args, results, checks, scene, info, t_start):
    """Records the checks in results, writes --json and --markdown (the checks, then the printed
    figures `info` as (name, value) rows), prints the verdict; returns the exit code."""
    results["checks"] = checks
    results["seconds"] = time.perf_counter() - t_start
    ok = all(c["pass"] for c in checks)
    results["pass"] = ok
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        lines = [f"### Newton {results['newton']} (warp {results['warp']}, CPU) vs steer: {scene}",
                 "", "| check | value | bound | |", "|---|---:|---|---|"]
        for c in checks:
            value = f"{c['value']:.3g}" if isinstance(c["value"], float) else f"{c['value']}"
            lines.append(f"| {c['check']} | {value} | {c['bound']} | {'pass' if c['pass'] else 'FAIL'} |")
        lines += [f"| {name} | {value:.3g} | — | info |" for name, value in info]
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    print(f"{tag}: {'PASS' if ok else 'FAIL'} ({results['seconds']:.0f} s)", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
