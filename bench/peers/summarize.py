"""Reads the JSON files run_peers.sh wrote into one folder and prints the Markdown tables.

Files: <case>.<rep>.json, one per case and repeat, and <case>.grad.json for the gradient
checks. A case's figure is the best over its repeats of each run's best call: wall time, and
process CPU time (summed over threads). On a shared machine the CPU time of a one-thread run
is the figure least disturbed by other processes (a preempted call keeps its CPU time but
not its wall time), so the ratios are given for both; with 2 threads CPU time is the sum
over both threads.
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


def per_rollout(r, key, field):
    """field of r[key] per rollout: the per_rollout_ value where written, else divided by B."""
    d = r[key]
    if "per_rollout_" + field in d:
        return d["per_rollout_" + field]
    return d[field] / r.get("batch", 1)


def figures(runs):
    return {
        "fwd": min(per_rollout(r, "forward", "best_s") for r in runs),
        "fb": min(per_rollout(r, "forward_backward", "best_s") for r in runs),
        "fb_med": min(per_rollout(r, "forward_backward", "median_s") for r in runs),
        "fwd_cpu": min(per_rollout(r, "forward", "cpu_best_s") for r in runs),
        "fb_cpu": min(per_rollout(r, "forward_backward", "cpu_best_s") for r in runs),
        "n": len(runs),
    }


def ms(s):
    return "%.3g" % (s * 1e3)


def ratio(a, b):
    r = a / b
    return ("%.0f×" % r) if r >= 100 else ("%.3g×" % r)


def table(folder, cases, refs, title, ref_names):
    out = [title, ""]
    head = "| simulator | precision | B | threads | fwd wall [ms] | fwd CPU [ms] | fwd+bwd wall [ms] (median) | fwd+bwd CPU [ms] |"
    for n in ref_names:
        head += " %s / this: wall, CPU |" % n
    out.append(head + " repeats |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(ref_names) + "---:|")
    rows = {}
    for case, who, prec, B, th in cases:
        runs = load(folder, case)
        if runs:
            rows[case] = figures(runs)
    for case, who, prec, B, th in cases:
        if case not in rows:
            continue
        f = rows[case]
        line = "| %s | %s | %d | %d | %s | %s | %s (%s) | %s |" % (
            who, prec, B, th, ms(f["fwd"]), ms(f["fwd_cpu"]), ms(f["fb"]), ms(f["fb_med"]), ms(f["fb_cpu"]))
        for ref_of in refs:
            ref = rows.get(ref_of(case, prec, B, th))
            if ref and case.startswith("st_"):
                line += " %s, %s |" % (ratio(ref["fb"], f["fb"]), ratio(ref["fb_cpu"], f["fb_cpu"]))
            else:
                line += " — |"
        out.append(line + " %d |" % f["n"])
    out.append("")
    return out


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
    ti_of = {c[2:5]: c[0] for c in ms_cases if c[0].startswith("ti_")}
    out += table(folder, ms_cases, [lambda c, p, B, t: ti_of.get((p, B, t))],
                 "Mass-spring robot A (6 particles, 11 springs, 11 actuators × 10 phases), T = 681, dt = 0.004 s; "
                 "per rollout, best over repeats; the ratio compares the same precision, B and threads",
                 ["Taichi fwd+bwd"])
    tg = os.path.join(folder, "ti_f64_b1_t1.1.json")
    sg = os.path.join(folder, "st_ms_grad.grad.json")
    if os.path.exists(tg) and os.path.exists(sg):
        t, s = json.load(open(tg)), json.load(open(sg))
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
    out += table(folder, b_cases, [lambda *a: "wp_example", lambda *a: "wp_example_tuned", lambda *a: "wp_ground"],
                 "Bounce, one particle, T = 288, dt = 1/480 s; per rollout, best over repeats",
                 ["Warp example", "Warp tuned", "Warp ground-only"])
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
