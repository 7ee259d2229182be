"""Reads the folder run_peers.sh wrote and prints the Markdown tables of the peer benchmarks.

Files: <case>.<round>.json (one per case and round), bounce_check.json, wp_jit.json, load.tsv
(case, UTC time, load averages before it). A case's figure is the best over its rounds of each
run's best call, per rollout (the call's time divided by B): wall time, and process CPU time
(summed over threads). Ratios are peer / steer per rollout, at the same B; "load" is the range
of the 1-minute load average before the case's runs. Warp's CPU device runs a kernel's threads
one after another on one core (its CPU launch is a serial loop over the launch's dimension), so
its one figure stands against steer at 1 and at 2 threads.
"""
import glob
import json
import os
import sys


def read_json(p):
    """the JSON object of a file, after any banner lines a peer printed first (Taichi's)"""
    with open(p) as f:
        text = f.read()
    return json.loads(text[text.index("{"):])


def load_runs(folder, case):
    runs = []
    for p in sorted(glob.glob(os.path.join(folder, case + ".[0-9]*.json"))):
        try:
            runs.append(read_json(p))
        except (OSError, ValueError):
            pass
    return runs


def loads(folder):
    out = {}
    p = os.path.join(folder, "load.tsv")
    if os.path.exists(p):
        for line in open(p):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                out[parts[0]] = float(parts[2].split()[0])
    return out


def load_range(L, case):
    v = [x for k, x in L.items() if k.startswith(case + ".")]
    return "%.1f–%.1f" % (min(v), max(v)) if v else "—"


def per_rollout(r, key, field):
    d = r[key]
    if "per_rollout_" + field in d:
        return d["per_rollout_" + field]
    return d[field] / r.get("batch", 1)


def fig(runs, key, field="best_s"):
    v = [per_rollout(r, key, field) for r in runs if key in r]
    return min(v) if v else float("nan")


def us(s):
    return "%.3g" % (s * 1e6)


def ratio(a, b):
    if not (a == a and b == b) or b == 0:
        return "—"
    r = a / b
    return "%.0f×" % r if r >= 100 else "%.3g×" % r


def main():
    folder = sys.argv[1]
    L = loads(folder)
    out = []
    chk_p = os.path.join(folder, "bounce_check.json")
    if os.path.exists(chk_p) and os.path.getsize(chk_p):
        c = read_json(chk_p)
        out += ["Warp's bounce scene (ground and wall), loss and dL/dv0 at v0 = (5, -5, 0):", "",
                "| engine | precision | loss | dL/dv0 |", "|---|---|---:|---|"]
        for key, name, prec in (("warp_sim_float32", "warp.sim (as shipped), wp.Tape", "float32"),
                                ("warp_float64", "Warp kernels of the same laws, wp.Tape", "float64"),
                                ("steer_float64", "steer, configs/warp_bounce.json", "float64")):
            e = c[key]
            out.append("| %s | %s | %.12g | (%s) |" % (name, prec, e["loss"], ", ".join("%.12g" % g for g in e["grad_v0"])))
        a, b, s = c["steer_vs_warp_float64"], c["warp_float64_vs_warp_sim_float32"], c["steer_vs_warp_sim_float32"]
        out += ["", "steer vs Warp float64: loss %.2g, gradient %.2g relative; Warp float64 vs warp.sim float32: "
                "loss %.2g, gradient %.2g; steer vs warp.sim float32: loss %.2g, gradient %.2g (gradient: max_i |a_i - b_i| / max_i |b_i|). "
                "Pass (1e-6 float64, 1e-4 float32): %s" % (a["loss_rel"], a["grad_rel"], b["loss_rel"], b["grad_rel"],
                                                                  s["loss_rel"], s["grad_rel"], c["pass"]), ""]

    jit = []
    jp = os.path.join(folder, "wp_jit.json")
    if os.path.exists(jp) and os.path.getsize(jp):
        j = read_json(jp)
        jit.append("Warp: first call with an empty kernel cache (compiles every kernel) %.1f s, model build %.1f s, "
                   "wp.init %.1f s" % (j["first_call_s"], j["model_build_s"], j["init_s"]))
    for name, case in (("Warp, cached kernels (first call of each timed run)", "wp_b*"),
                       ("Taichi port (first call: JIT or offline cache)", "ti_b64_t*"),
                       ("DiffTaichi published (first call)", "dt_upstream_t1")):
        v = []
        for p in glob.glob(os.path.join(folder, case + ".[0-9]*.json")):
            try:
                v.append(read_json(p)["first_call_s"])
            except (OSError, ValueError, KeyError):
                pass
        if v:
            jit.append("%s: %.2f–%.2f s" % (name, min(v), max(v)))
    if jit:
        out += ["Compile / first-call time (not in any per-rollout figure below; steer compiles once, with its build):", ""]
        out += ["- " + x for x in jit] + [""]

    batches = sorted({int(os.path.basename(p).split("_b")[1].split(".")[0])
                      for p in glob.glob(os.path.join(folder, "wp_b*.[0-9]*.json"))})
    threads = sorted({int(os.path.basename(p).split("_t")[1].split(".")[0])
                      for p in glob.glob(os.path.join(folder, "st_bounce_b*_t*.[0-9]*.json"))})
    if batches:
        out += ["Warp's bounce scene, B particles in one warp.sim model vs steer at the same B; per rollout [µs], "
                "best over rounds (wall / CPU); ratio = Warp / steer:", ""]
        head = "| B | Warp fwd | Warp fwd+bwd |"
        for t in threads:
            head += " steer %dT fwd | steer %dT fwd+bwd | fwd+bwd ratio %dT (wall / CPU) | fwd ratio %dT |" % (t, t, t, t)
        out += [head + " particles identical | load |", "|---:|" + "---:|" * (2 + 4 * len(threads)) + "---|---|"]
        for B in batches:
            w = load_runs(folder, "wp_b%d" % B)
            row = "| %d | %s / %s | %s / %s |" % (B, us(fig(w, "forward")), us(fig(w, "forward", "cpu_best_s")),
                                                  us(fig(w, "forward_backward")), us(fig(w, "forward_backward", "cpu_best_s")))
            lr = [load_range(L, "wp_b%d" % B)]
            for t in threads:
                s = load_runs(folder, "st_bounce_b%d_t%d" % (B, t))
                lr.append(load_range(L, "st_bounce_b%d_t%d" % (B, t)))
                row += " %s / %s | %s / %s | %s / %s | %s |" % (
                    us(fig(s, "forward")), us(fig(s, "forward", "cpu_best_s")), us(fig(s, "forward_backward")),
                    us(fig(s, "forward_backward", "cpu_best_s")), ratio(fig(w, "forward_backward"), fig(s, "forward_backward")),
                    ratio(fig(w, "forward_backward", "cpu_best_s"), fig(s, "forward_backward", "cpu_best_s")) if t == 1 else "—",
                    ratio(fig(w, "forward"), fig(s, "forward")))
            ident = all(r.get("particles_identical") for r in w) if w else None
            out.append(row + " %s | %s |" % (ident, ", ".join(lr)))
        out.append("")
        for p in sorted(glob.glob(os.path.join(folder, "st_bounce32_b*_t1.[0-9]*.json")))[:1]:
            B = int(os.path.basename(p).split("32_b")[1].split("_")[0])
            s32, w = load_runs(folder, "st_bounce32_b%d_t1" % B), load_runs(folder, "wp_b%d" % B)
            out += ["steer in float32 (Warp's precision), B = %d, 1 thread: fwd %s / %s µs, fwd+bwd %s / %s µs per rollout "
                    "(wall / CPU); Warp / steer fwd+bwd %s / %s (load %s)" % (
                        B, us(fig(s32, "forward")), us(fig(s32, "forward", "cpu_best_s")), us(fig(s32, "forward_backward")),
                        us(fig(s32, "forward_backward", "cpu_best_s")), ratio(fig(w, "forward_backward"), fig(s32, "forward_backward")),
                        ratio(fig(w, "forward_backward", "cpu_best_s"), fig(s32, "forward_backward", "cpu_best_s")),
                        load_range(L, "st_bounce32_b%d_t1" % B)), ""]

    ti_t = sorted({int(os.path.basename(p).split("_t")[1].split(".")[0]) for p in glob.glob(os.path.join(folder, "ti_b64_t*.[0-9]*.json"))})
    if ti_t:
        out += ["DiffTaichi robot A, B = 64, float64: steer's Taichi port (ti.ad.Tape) vs steer; per rollout [µs], best over "
                "rounds (wall / CPU); ratio = Taichi / steer:", "",
                "| threads | Taichi fwd | Taichi fwd+bwd | steer fwd | steer fwd+bwd | fwd+bwd ratio (wall / CPU) | fwd ratio (wall) | load |",
                "|---:|---:|---:|---:|---:|---:|---:|---|"]
        for t in ti_t:
            ti = load_runs(folder, "ti_b64_t%d" % t)
            s = load_runs(folder, "st_robot_b64_t%d" % t)
            out.append("| %d | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s | %s, %s |" % (
                t, us(fig(ti, "forward")), us(fig(ti, "forward", "cpu_best_s")), us(fig(ti, "forward_backward")),
                us(fig(ti, "forward_backward", "cpu_best_s")), us(fig(s, "forward")), us(fig(s, "forward", "cpu_best_s")),
                us(fig(s, "forward_backward")), us(fig(s, "forward_backward", "cpu_best_s")),
                ratio(fig(ti, "forward_backward"), fig(s, "forward_backward")),
                ratio(fig(ti, "forward_backward", "cpu_best_s"), fig(s, "forward_backward", "cpu_best_s")),
                ratio(fig(ti, "forward"), fig(s, "forward")), load_range(L, "ti_b64_t%d" % t), load_range(L, "st_robot_b64_t%d" % t)))
        out.append("")

    up = load_runs(folder, "dt_upstream_t1")
    if up:
        s = load_runs(folder, "st_robot_f32_b1_t1")
        u0 = up[0]
        out += ["DiffTaichi's published mass_spring.py (robot %d, %s, neural controller %d inputs -> %d hidden -> %d springs, "
                "loss -x of particle 0, %d steps, float32, one robot, 1 thread) and steer's robot A (open-loop sinusoid "
                "actuation, centre-of-mass loss, penalty ground, 681 steps, float32, B = 1, 1 thread); per rollout [µs] "
                "(wall / CPU); not the same work (see the log):" % (
                    u0["robot"], "advance_toi" if u0["toi"] else "advance_no_toi", u0["n_inputs"], u0["n_hidden"], u0["n_springs"],
                    u0["steps"] - 1), "",
                "| engine | fwd | fwd+bwd | load |", "|---|---:|---:|---|",
                "| DiffTaichi published | %s / %s | %s / %s | %s |" % (us(fig(up, "forward")), us(fig(up, "forward", "cpu_best_s")),
                                                                   us(fig(up, "forward_backward")), us(fig(up, "forward_backward", "cpu_best_s")),
                                                                   load_range(L, "dt_upstream_t1")),
                "| steer robot A | %s / %s | %s / %s | %s |" % (us(fig(s, "forward")), us(fig(s, "forward", "cpu_best_s")),
                                                             us(fig(s, "forward_backward")), us(fig(s, "forward_backward", "cpu_best_s")),
                                                             load_range(L, "st_robot_f32_b1_t1")), ""]

    mj = load_runs(folder, "mj_panda")
    if mj:
        best = {}
        for r in mj:
            for row in r["rows"]:
                k = (row["batch"], row["threads"])
                b = row["batch"]
                cur = (row["mujoco"]["best_s"] / b, row["mujoco"]["cpu_best_s"] / b, row["steer"]["per_rollout_best_s"],
                       row["steer"]["per_rollout_cpu_best_s"])
                prev = best.get(k, (float("inf"),) * 4 + (None, None, []))
                best[k] = tuple(min(a, c) for a, c in zip(prev[:4], cur)) + (row["loss_mujoco"], row["loss_steer"],
                                                                             prev[6] + [row["load_mujoco"], row["load_steer"]])
        out += ["MuJoCo %s C engine (mujoco.rollout, one MjData per thread) vs steer, the Panda reach's work "
                "(250 steps, implicitfast), forward only, float64; per rollout [µs], best over rounds (wall / CPU, CPU summed "
                "over threads); ratio = MuJoCo / steer:" % mj[0]["mujoco"], "",
                "| B | threads | MuJoCo fwd | steer fwd | ratio (wall / CPU) | loss MuJoCo | loss steer | load |",
                "|---:|---:|---:|---:|---:|---:|---:|---|"]
        for (b, t), (mw, mc, sw, sc, lm, ls, ld) in sorted(best.items()):
            out.append("| %d | %d | %s / %s | %s / %s | %s / %s | %.10g | %.10g | %.1f–%.1f |" % (
                b, t, us(mw), us(mc), us(sw), us(sc), ratio(mw, sw), ratio(mc, sc) if t == 1 else "—", lm, ls, min(ld), max(ld)))
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
