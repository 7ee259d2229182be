#!/usr/bin/env python3
"""Parallel efficiency of runs split across MPI ranks (docs/scaling.md).

    python3 bench/mpi_scaling.py STEER [--mpirun mpirun] [--ranks 2] [--panda-iterations 20]
                                 [--repeat 1] [--out DIR] [--only morphology|panda]

For each workload — configs/morphology_sweep.json (4096 variants, 10 Adam iterations) and
configs/panda_reach.json (4096 arms; Adam iterations cut to --panda-iterations so that the three
shapes fit in minutes) — it times `steer run` wall clock in three shapes on the CPU backend:

  A  one process, one thread               (--threads 1)
  B  one process, R threads                (--threads R)
  C  R ranks under mpirun, one thread each (--threads 1, each rank bound to its core)

and prints a Markdown table: parallel efficiency of the ranks E = t_A / (R t_C), the fair
comparison on R cores, ranks against threads, t_B / t_C (> 1: the ranks are faster), and the
CPU seconds of each shape (on a shared machine the CPU time shows the ranks' extra work — the
replicated optimizer arithmetic, the whole batch drawn on every rank, the gathers — where the
wall time also shows the neighbours). With --repeat the shapes run interleaved and the table
gives each shape's fastest run. It also
checks that C's artifact equals A's apart from the run-description fields (same threads per
process, so the same effective config): the measured job is the exact job.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def comparable(x, path=()):
    # the run-description fields of docs/scaling.md ("Same answer")
    if isinstance(x, dict):
        return {k: comparable(v, path + (k,)) for k, v in x.items()
                if k not in ("created_utc", "parallel") and not any(t in k for t in ("seconds", "per_second", "latency"))
                and not (path == ("device",) and k in ("host", "threads"))
                and not (path == ("effective_config", "output") and k == "dir")}
    if isinstance(x, list):
        return [comparable(v, path) for v in x]
    return x


def artifact_of(out):
    runs = [e for e in os.listdir(out) if not e.startswith(".") and not e.endswith(".checkpoint")]
    if len(runs) != 1:
        sys.exit(f"expected one artifact in {out}, found {runs}")
    folder = os.path.join(out, runs[0])
    with open(os.path.join(folder, "artifact.json")) as f:
        return folder, json.load(f)


def timed(cmd, out):
    """wall seconds and CPU seconds (user + system, the process and every rank it launched)"""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd + ["--out", out, "--quiet"], capture_output=True, text=True, env=env)
    t = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return t, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steer")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--panda-iterations", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1, help="runs per shape, interleaved; the table gives the fastest")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=["morphology", "panda"], default=None)
    a = ap.parse_args()
    R = a.ranks
    work = a.out or tempfile.mkdtemp(prefix="mpi_scaling_")
    os.makedirs(work, exist_ok=True)
    launcher = [a.mpirun, "-np", str(R), "--bind-to", "core"]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    if os.cpu_count() and R > os.cpu_count():
        launcher.append("--oversubscribe")

    workloads = []
    with open(os.path.join(SOURCE, "configs/morphology_sweep.json")) as f:
        m = json.load(f)
    m["simulation"]["backend"] = "cpu"
    workloads.append(("morphology", "morphology_sweep: 4096 variants, T = 400, 10 Adam iterations", m))
    with open(os.path.join(SOURCE, "configs/panda_reach.json")) as f:
        p = json.load(f)
    p["model"]["include"] = os.path.join(SOURCE, "configs", p["model"]["include"])
    p["optimizer"]["iterations"] = a.panda_iterations
    workloads.append(("panda", f"panda_reach: 4096 arms, T = 250, {a.panda_iterations} Adam iterations", p))

    rows = []
    for key, label, cfg in workloads:
        if a.only and a.only != key:
            continue
        path = os.path.join(work, key + ".json")
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
        shapes = {
            "A": [a.steer, "run", path, "--backend", "cpu", "--threads", "1"],
            "B": [a.steer, "run", path, "--backend", "cpu", "--threads", str(R)],
            "C": launcher + [a.steer, "run", path, "--backend", "cpu", "--threads", "1"],
        }
        best, cpu = {}, {}
        for rep in range(a.repeat):
            for s, cmd in shapes.items():
                t, c = timed(cmd, os.path.join(work, f"{key}-{s}"))
                if t < best.get(s, float("inf")):
                    best[s], cpu[s] = t, c
                print(f"{key} {s} run {rep + 1}: {t:.1f} s wall, {c:.1f} s CPU (load {os.getloadavg()[0]:.1f})",
                      file=sys.stderr, flush=True)
        _, art_a = artifact_of(os.path.join(work, f"{key}-A"))
        _, art_c = artifact_of(os.path.join(work, f"{key}-C"))
        same = comparable(art_a) == comparable(art_c)
        tA, tB, tC = best["A"], best["B"], best["C"]
        rows.append((label, tA, tB, tC, tA / (R * tC), tB / tC, cpu["A"], cpu["B"], cpu["C"], same))

    print(f"| workload | A: 1 process × 1 thread | B: 1 process × {R} threads | C: {R} ranks × 1 thread | "
          f"efficiency t_A/({R}·t_C) | t_B/t_C | CPU s A / B / C | C's artifact = A's |")
    print("|---|---|---|---|---|---|---|---|")
    for label, tA, tB, tC, eff, ratio, cA, cB, cC, same in rows:
        print(f"| {label} | {tA:.1f} s | {tB:.1f} s | {tC:.1f} s | {eff:.2f} | {ratio:.2f} | "
              f"{cA:.1f} / {cB:.1f} / {cC:.1f} | {'yes' if same else 'NO'} |")
    if not all(r[-1] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
