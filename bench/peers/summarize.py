"""Reads the JSON files run_peers.sh wrote into one folder and prints the Markdown tables.

Files: <case>.<rep>.json, one per case and repeat; a case's time is the best over its
repeats of each run's best call (the machine is shared, so the least disturbed run is the
figure that measures the code). Gradient checks are taken from rep 1 (*.grad.json files).
"""
import glob
import json
import os
import sys


def load(folder, case):
    runs = []
    for p in sorted(glob.glob(os.path.join(folder, case + ".*.json"))):
        if p.endswith(".grad.json"):
            continue
        with open(p) as f:
            runs.append(json.load(f))
    return runs


def best(runs, key, per_rollout=True):
    field = "per_rollout_best_s" if per_rollout and "per_rollout_best_s" in runs[0][key] else "best_s"
    return min(r[key][field] for r in runs)


def med(runs, key):
    field = "per_rollout_median_s" if "per_rollout_median_s" in runs[0][key] else "median_s"
    return min(r[key][field] for r in runs)


def ms(s):
    return "%.3g" % (s * 1e3)


def main():
    folder = sys.argv[1]
    out = []
    # ---- mass-spring robot A: Taichi vs steer
    ms_cases = [
        ("ti_f64_b1_t1", "Taichi (ti.ad.Tape)", "float64", 1, 1),
        ("ti_f32_b1_t1", "Taichi (ti.ad.Tape)", "float32", 1, 1),
        ("ti_f64_b64_t1", "Taichi (ti.ad.Tape)", "float64", 64, 1),
        ("ti_f64_b64_t2", "Taichi (ti.ad.Tape)", "float64", 64, 2),
        ("st_ms_f64_b1_t1", "steer CPU", "float64", 1, 1),
        ("st_ms_f32_b1_t1", "steer CPU", "float32", 1, 1),
        ("st_ms_f64_b64_t1", "steer CPU", "float64", 64, 1),
        ("st_ms_f64_b64_t2", "steer CPU", "float64", 64, 2),
    ]
    rows = {}
    for case, who, prec, B, th in ms_cases:
        runs = load(folder, case)
        if runs:
            rows[case] = (who, prec, B, th, best(runs, "forward"), best(runs, "forward_backward"),
                          med(runs, "forward_backward"), len(runs))
    ti_ref = {c[2:5]: c[0] for c in ms_cases if c[0].startswith("ti_")}  # (precision, B, threads)
    out.append("Mass-spring robot A (6 particles, 11 springs, 11 actuators × 10 phases), T = 681, dt = 0.004 s; "
               "times per rollout, best over repeats (median in brackets: best run's median)")
    out.append("")
    out.append("| simulator | precision | B | threads | fwd [ms] | fwd+bwd [ms] | Taichi fwd+bwd / this (same precision, B, threads) | repeats |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for case, (who, prec, B, th, f, fb, fbm, n) in rows.items():
        ref = rows.get(ti_ref.get((prec, B, th), ""))
        ratio = "%.1f×" % (ref[5] / fb) if ref and not case.startswith("ti_") else "—"
        out.append("| %s | %s | %d | %d | %s | %s (%s) | %s | %d |" % (who, prec, B, th, ms(f), ms(fb), ms(fbm), ratio, n))
    out.append("")
    # gradient agreement Taichi vs steer
    tg = glob.glob(os.path.join(folder, "ti_f64_b1_t1.1.json"))
    sg = glob.glob(os.path.join(folder, "st_ms_grad.grad.json"))
    if tg and sg:
        t, s = json.load(open(tg[0])), json.load(open(sg[0]))
        gmax = max(abs(g) for g in s["grad"])
        rel = max(abs(t["grad"][n] - g) / max(abs(g), 1e-300) for n, g in zip(s["var_names"], s["grad"]))
        absd = max(abs(t["grad"][n] - g) for n, g in zip(s["var_names"], s["grad"])) / gmax
        out.append("Taichi vs steer, float64, same weights: loss %.12g vs %.12g (relative difference %.1e); "
                   "∂L/∂(weights, biases), %d components: max relative difference %.1e, max |difference| / max |∂L| %.1e."
                   % (t["loss"], s["loss"], abs(t["loss"] - s["loss"]) / abs(s["loss"]), len(s["grad"]), rel, absd))
        out.append("")
    # ---- bounce: Warp vs steer
    b_cases = [
        ("wp_example", "Warp, example scene (wall + ground, 65536 contact slots)", "float32", 1, 1),
        ("wp_example_tuned", "Warp, example scene, soft_contact_max = 1", "float32", 1, 1),
        ("wp_ground", "Warp, ground only (steer's scene)", "float32", 1, 1),
        ("st_bounce_f64_b1_t1", "steer CPU (configs/warp_bounce.json)", "float64", 1, 1),
        ("st_bounce_f32_b1_t1", "steer CPU (configs/warp_bounce.json)", "float32", 1, 1),
        ("st_bounce_f64_b4096_t1", "steer CPU (configs/warp_bounce.json)", "float64", 4096, 1),
        ("st_bounce_f64_b4096_t2", "steer CPU (configs/warp_bounce.json)", "float64", 4096, 2),
    ]
    brow = {}
    for case, who, prec, B, th in b_cases:
        runs = load(folder, case)
        if runs:
            brow[case] = (who, prec, B, th, best(runs, "forward"), best(runs, "forward_backward"),
                          med(runs, "forward_backward"), len(runs))
    out.append("Bounce, one particle, T = 288, dt = 1/480 s; times per rollout, best over repeats (median in brackets)")
    out.append("")
    out.append("| simulator | precision | B | threads | fwd [ms] | fwd+bwd [ms] | Warp example / this | Warp ground-only / this | repeats |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, (who, prec, B, th, f, fb, fbm, n) in brow.items():
        r1 = r2 = "—"
        if case.startswith("st_"):
            if "wp_example" in brow:
                r1 = "%.0f×" % (brow["wp_example"][5] / fb)
            if "wp_ground" in brow:
                r2 = "%.0f×" % (brow["wp_ground"][5] / fb)
        out.append("| %s | %s | %d | %d | %s | %s (%s) | %s | %s | %d |" % (who, prec, B, th, ms(f), ms(fb), ms(fbm), r1, r2, n))
    out.append("")
    # gradient checks
    for case in ["wp_example", "wp_ground", "wp_ground_kd0"]:
        p = os.path.join(folder, case + ".grad.json")
        if os.path.exists(p):
            d = json.load(open(p))
            fds = "; ".join("ε %s: (%s), max |err| / max |∂L| %.1e" % (e, ", ".join("%.5g" % v for v in r["fd"]),
                                                                    r["max_abs_err_over_max_grad"]) for e, r in d["fd"].items())
            out.append("- %s (kd %g): loss %.7g, tape ∂L/∂v0 = (%s); centered FD %s" % (
                case, d["kd"], d["loss"], ", ".join("%.5g" % g for g in d["grad_v0"]), fds))
    for case in ["st_bounce", "st_bounce_kd0"]:
        p = os.path.join(folder, case + ".grad.json")
        if os.path.exists(p):
            d = json.load(open(p))
            out.append("- %s (%s): loss %.7g, adjoint ∂L/∂v0 = (%s); centered FD ε %g (relative): (%s), max relative error %.1e" % (
                case, " ".join(d["sets"]) or "as shipped", d["loss"], ", ".join("%.5g" % g for g in d["grad"]),
                d["fd"]["eps"], ", ".join("%.5g" % g for g in d["fd"]["fd"]), d["fd"]["max_rel_err"]))
    print("\n".join(out))


if __name__ == "__main__":
    main()
