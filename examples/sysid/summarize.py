#!/usr/bin/env python3
"""Tabulates the system-identification runs of run_sysid.sh (examples/sysid/README.md).

For each run folder (one recording: noise level and seed) it reads truth.json (record_panda)
and the steer artifact, takes the rollout with the lowest final loss among the starts, and
prints one Markdown row: the largest relative error of the masses and of the dampings against
the truth, the spread of the starts' results, the final loss and the perturbation check.
With --detail it also prints every parameter of every run. Standard library only."""
import json
import pathlib
import sys


def load(run):
    truth = json.loads((run / "truth.json").read_text())
    arts = sorted(run.glob("runs/*/artifact.json"))
    if not arts:
        raise SystemExit(f"{run}: no artifact (did steer run fail?)")
    return truth, json.loads(arts[-1].read_text())


def row(run, detail):
    truth, art = load(run)
    rolls = art["result"]["rollouts"]
    best = min(rolls, key=lambda r: r["loss_final"])
    errs, spreads, lines = {}, {}, []
    for name, t in truth["truth"].items():
        key = "theta." + name
        got = best["variables"][key]["final"]
        errs[name] = (got - t) / t
        finals = [r["variables"][key]["final"] for r in rolls]
        spreads[name] = (max(finals) - min(finals)) / t
        lines.append(f"| {truth['noise_rad']:g} | {truth['seed']} | {name} | {truth['nominal'][name]:.6g} | {t:.6g} | "
                     f"{got:.6g} | {100 * errs[name]:+.3f}% |")
    mass = [abs(e) for n, e in errs.items() if n.endswith(".mass")]
    damp = [abs(e) for n, e in errs.items() if n.endswith(".damping")]
    levels = {lv["relative"]: lv for lv in art["perturbation"]["levels"]}
    pert = ", ".join(f"{r:+.0%}: {levels[r]['loss_mean']:.4g} ({levels[r]['rollouts_labelled_narrow_valley']} narrow)"
                     for r in sorted(levels))
    vals = [v for v in art["validation"] if v.get("stage") == "initial"]
    check = f"{vals[0]['rollouts_passed']}/{vals[0]['rollouts_checked']}" if vals and "rollouts_checked" in vals[0] else "-"
    summary = (f"| {truth['noise_rad']:g} | {truth['seed']} | {100 * max(mass):.3f}% | {100 * max(damp):.3f}% | "
               f"{100 * max(spreads.values()):.2g}% | {best['loss_final']:.4g} | {pert} | {check} |")
    return summary, lines


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: summarize.py OUT_DIR [--detail]")
    out = pathlib.Path(sys.argv[1])
    detail = "--detail" in sys.argv[2:]
    runs = sorted((p for p in out.iterdir() if (p / "truth.json").exists()),
                  key=lambda p: (json.loads((p / "truth.json").read_text())["noise_rad"], p.name))
    print("| noise σ [rad] | seed | max mass error | max damping error | spread of 8 starts | final loss (best) "
          "| armature ±20%: mean loss | gradient check (initial) |")
    print("|---|---|---|---|---|---|---|---|")
    details = []
    for run in runs:
        s, lines = row(run, detail)
        print(s)
        details += lines
    if detail:
        print()
        print("| noise σ [rad] | seed | parameter | nominal | truth | identified | error |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(details))


if __name__ == "__main__":
    main()
