#!/usr/bin/env python3
"""How close steer's CPU packed paths come to this CPU's peak, and what that predicts for an H200.

  python3 bench/roofline.py --build build --out /tmp/roofline           # measure, then tabulate
  python3 bench/roofline.py --out /tmp/roofline --tabulate-only         # tabulate what is there
  ... --kernels KB.json   the kernel budget's figures (tools/kernel_budget.py --json) for the H200
                          occupancy: adds the H200 table and writes it to bench/h200_prediction.json
                          (--prediction); without it the H200 table is left out
  python3 bench/roofline.py --compare GPU_OUT   the prediction against bench/gpu.sh's measurement
                          (tools/device_check.sh runs it on the device machine)

Measures (one thread, the CPU backend's default schedule: the stored forward pass):
  bench/cpu_ceiling: this CPU's peak FLOP/s per precision (vector FMA chains, and the same as a
    multiply and an add, steer's own ceiling: it never fuses) and STREAM triad bandwidth;
  bench/bench_rollout on one scene per model at a packed batch size: rollout-steps/s forward and
    forward+backward, with the counted flops and distinct bytes per rollout-step
    (steer/op_count.h; special functions apart, not in the flops).

The CPU roofline per scene and precision: predicted = min(P / F, W / Q) rollout-steps/s, with P
the unfused peak [flop/s], F the counted flops per rollout-step, W the triad bandwidth [B/s] and
Q the counted bytes per rollout-step; measured / predicted says how close the code comes to its
roofline, and the achieved flop rate over the fused peak is the fraction of this CPU's peak.

The H200 prediction (stated as one, never measured here): the same roofline with the H200's
ceilings (NVIDIA's H200 SXM datasheet: FP64 34 TFLOP/s and FP32 67 TFLOP/s without tensor
cores, 4.8 TB/s HBM3e; 132 SMs, 64 K registers and 64 resident warps per SM), the compute
ceiling derated by two factors:
  occupancy: resident warps per SM from the kernel's registers (rounded up to 8 per thread,
    65,536 per SM), over the 16 warps that hide the FP pipelines' latency (4 schedulers x 4
    warps each), at most 1;
  calibration: the share of the CPU's compute ceiling the same scene and precision reaches
    (measured x F / P: branches, special functions, dependency chains and bookkeeping cost
    alike on both; an assumption, to be checked by tools/device_check.sh's measurement).
  predicted = min(P_gpu x occupancy x share / F, W_gpu / Q_gpu).
  Memory: the counted bytes per rollout-step, plus the checkpoint traffic (nx values written and
  read once per K = ceil(sqrt(T)) steps, forward+backward only), plus the local-memory frame
  where it cannot stay in L1: resident threads x frame over 256 KB per SM, its whole frame read
  and written once per step (the backward kernel's tape).
"""
import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# one scene per model: (name, config, batch size, kernel model names as ptxas reports them)
SCENES = [
    ("projectile", "bench/configs/projectile_throughput.json", 4096, "Projectile"),
    ("mass_spring (robot A)", "bench/configs/mass_spring_throughput.json", 256,
     "FixedIntegrators<MassSpring, 1u>"),
    ("articulated (Panda)", "configs/panda_reach.json", 64, "FixedIntegrators<Articulated, 3u>"),
    ("articulated (quadruped)", "bench/configs/quadruped_throughput.json", 64,
     "FixedIntegrators<ArticulatedLegged, 3u>"),
    ("fem (1250 tetrahedra)", "bench/configs/fem_throughput.json", 8, None),
]

H200 = {"fp64_gflops": 34e3, "fp32_gflops": 67e3, "bandwidth_gbs": 4800.0, "sms": 132,
        "registers_per_sm": 65536, "max_warps_per_sm": 64, "l1_bytes_per_sm": 256 * 1024}
LATENCY_WARPS = 16  # warps per SM that keep the FP pipelines busy (4 schedulers x 4)
SCENE_CONFIG = {name: config for name, config, _, _ in SCENES}


def run(cmd, out_path):
    print("+", " ".join(str(c) for c in cmd), file=sys.stderr)
    with open(out_path, "w") as f:
        subprocess.run([str(c) for c in cmd], check=True, stdout=f, cwd=ROOT)


def measure(build, out, min_time):
    run([build / "bench" / "cpu_ceiling", "--min-time", "0.5", "--repeats", "5"], out / "ceiling.json")
    for i, (name, config, batch, _) in enumerate(SCENES):
        run([build / "bench" / "bench_rollout", "--config", config, "--backend", "cpu",
             "--precision", "both", "--batches", batch, "--threads", 1, "--min-time", min_time,
             "--checkpoint", "stored", "--json", out / f"scene{i}.json"], out / f"scene{i}.md")


def rows_of(out):
    rows = []
    for i, (name, config, batch, kernel) in enumerate(SCENES):
        path = out / f"scene{i}.json"
        if not path.exists():
            continue
        j = json.loads(path.read_text())
        nx = j.get("model_info", {}).get("nx", 0)
        for r in j["results"]:
            w = r["work_per_rollout_step"]
            rows.append({"scene": name, "kernel": kernel, "precision": r["precision"], "batch": r["batch"],
                         "steps": r["steps"], "nx": nx, "w": w,
                         "fwd": r["forward"]["rollout_steps_per_s_median"],
                         "fb": r["forward_backward"]["rollout_steps_per_s_median"],
                         "recompute": r["recompute_factor"]})
    return rows


def cpu_table(rows, ceiling):
    lines = [f"CPU roofline, one thread ({ceiling['isa']}; peak fused / unfused FP64 "
             f"{ceiling['peak_fp64_gflops']:.3g} / {ceiling['unfused_fp64_gflops']:.3g}, FP32 "
             f"{ceiling['peak_fp32_gflops']:.3g} / {ceiling['unfused_fp32_gflops']:.3g} GFLOP/s; "
             f"triad {ceiling['triad_gbs']:.3g} GB/s):", "",
             "| scene | precision | B | pass | flops/step | bytes/step | flop/byte | predicted steps/s | "
             "measured steps/s | measured/predicted | GFLOP/s | % of peak |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        f64 = r["precision"] == "float64"
        unfused = 1e9 * ceiling["unfused_fp64_gflops" if f64 else "unfused_fp32_gflops"]
        fused = 1e9 * ceiling["peak_fp64_gflops" if f64 else "peak_fp32_gflops"]
        bw = 1e9 * ceiling["triad_gbs"]
        w = r["w"]
        for label, flops, nbytes, measured in (
                ("forward", w["forward_flops"], w["forward_bytes"], r["fwd"]),
                ("fwd+bwd", w["forward_backward_flops"], w["forward_backward_bytes"], r["fb"])):
            predicted = min(unfused / flops, bw / nbytes)
            # the share of the compute ceiling this scene's code reaches: what the H200 inherits
            r[f"compute_share_{label}"] = measured * flops / unfused
            gflops = flops * measured * 1e-9
            lines.append(f"| {r['scene']} | {r['precision']} | {r['batch']} | {label} | {flops:.4g} | "
                         f"{nbytes:.4g} | {flops / nbytes:.3g} | {predicted:.3g} | {measured:.3g} | "
                         f"{measured / predicted:.3f} | {gflops:.3g} | {100 * gflops * 1e9 / fused:.2g} |")
    return lines


def resident_warps(registers):
    per_thread = max(8, 8 * math.ceil(registers / 8))
    return min(H200["max_warps_per_sm"], H200["registers_per_sm"] // (per_thread * 32))


def h200_table(rows, kernels, predictions):
    figures = {k["kernel"]: k for k in kernels["kernels"]}
    lines = ["H200 prediction, one thread per rollout (not measured; the model in bench/roofline.py's "
             "header):", "",
             "| scene | precision | pass | kernel registers | frame B | warps/SM | occupancy | "
             "flops/step | device bytes/step | roofline steps/s | CPU compute share | predicted steps/s | bound |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if not r["kernel"]:
            continue
        s = "double" if r["precision"] == "float64" else "float"
        size = 8 if s == "double" else 4
        peak = 1e9 * H200["fp64_gflops" if s == "double" else "fp32_gflops"]
        bw = 1e9 * H200["bandwidth_gbs"]
        w = r["w"]
        k_interval = math.ceil(math.sqrt(r["steps"]))
        fwd = figures.get(f"forward_kernel<{r['kernel']}, {s}>")
        bwd = figures.get(f"backward_kernel<{r['kernel']}, {s}, false>")
        if not fwd or not bwd:
            continue
        for label, kern, flops, nbytes in (
                ("forward", fwd, w["forward_flops"], w["forward_bytes"]),
                ("fwd+bwd", bwd, 2 * w["forward_flops"] + w["adjoint_flops"],
                 w["forward_bytes"] + w["adjoint_bytes"] + 2 * r["nx"] * size / k_interval)):
            warps = resident_warps(kern["registers"])
            occupancy = min(1.0, warps / LATENCY_WARPS)
            frame = kern["stack_bytes"]
            spill_fraction = max(0.0, 1 - H200["l1_bytes_per_sm"] / max(1, warps * 32 * frame))
            device_bytes = nbytes + 2 * frame * spill_fraction
            roof = min(peak / flops, bw / device_bytes)
            cal = r[f"compute_share_{label}"]
            compute_rate = peak * occupancy * cal / flops
            memory_rate = bw / device_bytes
            predicted = min(compute_rate, memory_rate)
            bound = "compute" if compute_rate <= memory_rate else "memory"
            predictions.append({"config": SCENE_CONFIG[r["scene"]], "scene": r["scene"],
                                "precision": r["precision"], "pass": label,
                                "predicted_rollout_steps_per_s": predicted, "bound": bound})
            lines.append(f"| {r['scene']} | {r['precision']} | {label} | {kern['registers']} | {frame} | {warps} | "
                         f"{occupancy:.2f} | {flops:.4g} | {device_bytes:.4g} | {roof:.3g} | {cal:.3f} | "
                         f"{predicted:.3g} | {bound} |")
    return lines


def compare(prediction_path, device_dir):
    """Prediction, measurement and ratio side by side: the H200 prediction against bench/gpu.sh's
    JSON (its kernel-timed rollout-steps/s at the largest batch of each scene and precision)."""
    predictions = json.loads(Path(prediction_path).read_text())["predictions"]
    measured = {}
    for path in sorted(Path(device_dir).glob("bench_cuda_*.json")):
        j = json.loads(path.read_text())
        config = Path(j["config"]).name if j.get("config") else ""
        for r in j["results"]:
            if "cuda" not in r:
                continue
            key = (config, r["precision"])
            if key not in measured or r["batch"] > measured[key]["batch"]:
                measured[key] = {"batch": r["batch"],
                                 "forward": r["cuda"]["kernel_forward_rollout_steps_per_s"],
                                 "fwd+bwd": r["cuda"]["kernel_forward_backward_rollout_steps_per_s"]}
    lines = ["| scene | precision | pass | predicted steps/s | measured steps/s (B) | measured/predicted |",
             "|---|---|---|---:|---:|---:|"]
    for p in predictions:
        m = measured.get((Path(p["config"]).name, p["precision"]))
        got = f"{m[p['pass']]:.3g} ({m['batch']})" if m else "not measured"
        ratio = f"{m[p['pass']] / p['predicted_rollout_steps_per_s']:.3f}" if m else "—"
        lines.append(f"| {p['scene']} | {p['precision']} | {p['pass']} | "
                     f"{p['predicted_rollout_steps_per_s']:.3g} | {got} | {ratio} |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", type=Path, default=ROOT / "build", help="build folder with bench/ programs")
    p.add_argument("--out", type=Path, help="folder for the measurements and tables")
    p.add_argument("--tabulate-only", action="store_true", help="use the measurements already in --out")
    p.add_argument("--kernels", type=Path, help="tools/kernel_budget.py --json output, for the H200 table")
    p.add_argument("--min-time", type=float, default=0.5, help="bench_rollout's seconds per figure")
    p.add_argument("--compare", type=Path, metavar="DIR",
                   help="bench/gpu.sh's output folder: the H200 prediction (--prediction) against it")
    p.add_argument("--prediction", type=Path, default=ROOT / "bench" / "h200_prediction.json",
                   help="the H200 prediction: written with --kernels, read with --compare")
    a = p.parse_args()
    if a.min_time <= 0:
        p.error(f"--min-time {a.min_time}: must be > 0")
    if a.compare:
        if not a.compare.is_dir():
            p.error(f"--compare {a.compare}: no such folder")
        if not a.prediction.exists():
            p.error(f"--prediction {a.prediction}: no such file")
        print("\n".join(compare(a.prediction, a.compare)))
        return
    if not a.out:
        p.error("--out is required (or --compare DIR)")
    a.out.mkdir(parents=True, exist_ok=True)
    if not a.tabulate_only:
        for prog in ("cpu_ceiling", "bench_rollout"):
            if not (a.build / "bench" / prog).exists():
                p.error(f"--build {a.build}: bench/{prog} is not built there")
        measure(a.build.resolve(), a.out, a.min_time)
    ceiling_path = a.out / "ceiling.json"
    if not ceiling_path.exists():
        p.error(f"--out {a.out}: no ceiling.json (run without --tabulate-only first)")
    ceiling = json.loads(ceiling_path.read_text())
    rows = rows_of(a.out)
    lines = cpu_table(rows, ceiling)
    if a.kernels:
        predictions = []
        lines += [""] + h200_table(rows, json.loads(a.kernels.read_text()), predictions)
        a.prediction.write_text(json.dumps({"device": "H200 SXM (datasheet ceilings)", "cpu": ceiling,
                                            "predictions": predictions}, indent=1) + "\n")
    text = "\n".join(lines) + "\n"
    (a.out / "roofline.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
