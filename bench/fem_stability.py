#!/usr/bin/env python3
"""The FEM model's two integrators side by side over Young's modulus x timestep (issue 41's
stability table, as bench/mass_spring_stability does for the mass-spring robot).

The scene: a 3 x 1 x 1 block of 5 cm cubes (15 tetrahedra, 16 vertices), stable neo-Hookean,
nu = 0.3, 1000 kg/m^3, Kelvin-Voigt damping 1e-4 s, released 2 cm above the penalty ground
(3 kN/m per surface vertex, 2 mm smoothing, friction 0.5 over 0.05 m/s) moving at (0.5, 0, 0) m/s,
for 0.2 s. Each cell of the grid E x h is one `steer run` of that config (optimizer none,
validation off) with model.integrator symplectic_euler or backward_euler. A cell is stable when
every recorded state is finite and the largest vertex speed stays below 10 m/s (the block falls
2 cm: about 0.6 m/s at impact); backward Euler's cells report "NaN" where a step's Newton
iteration did not converge (the step is NaN by design). The explicit limit estimate printed
beside: h_c = L / c with L the smallest element's edge (5 cm / sqrt(3)) and c = sqrt((lambda +
2 mu) / rho) the dilatational wave speed.

  fem_stability.py --steer build/steer [--json out.json]
"""
import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

MODULI = [1e4, 1e5, 1e6, 1e7]
STEPS_MS = [0.05, 0.2, 0.5, 1.0, 2.0, 5.0]
HORIZON = 0.2


def config(young, dt, integrator, out):
    return {
        "name": "fem_stability",
        "model": {"type": "fem",
                  "mesh": {"grid": {"cells": [3, 1, 1], "cell_size": 0.05, "origin": [0.0, 0.02, 0.0]}},
                  "material": {"young": young, "poisson": 0.3, "density": 1000.0, "damping": 1e-4},
                  "integrator": integrator,
                  "ground": {"type": "penalty", "stiffness": 3000.0, "damping": 5.0, "smoothing": 0.002,
                             "friction": 0.5, "friction_smoothing": 0.05}},
        "simulation": {"dt": dt, "steps": max(1, round(HORIZON / dt)), "precision": "float64", "backend": "cpu",
                       "threads": 1},
        "initial_state": {"velocity": [0.5, 0.0, 0.0]},
        "loss": {"com_displacement": {"axis": "x", "weight": -1.0}},
        "optimizer": {"method": "none"},
        "validation": {"enabled": False},
        "output": {"dir": str(out), "trajectory_stride": 1, "trajectory_rollouts": 1},
    }


def run_cell(steer, young, dt, integrator, work):
    out = work / f"{integrator}-{young:g}-{dt:g}"
    cfg = work / f"{out.name}.json"
    cfg.write_text(json.dumps(config(young, dt, integrator, out)))
    r = subprocess.run([steer, "run", str(cfg)], capture_output=True, text=True)
    if r.returncode != 0:
        return {"status": "error", "message": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    folder = sorted(out.iterdir())[-1]
    with open(folder / "trajectory.csv") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    vel = [i for i, h in enumerate(head) if ".velocity." in h]
    vmax, finite = 0.0, True
    for row in rows[1:]:
        for i in vel:
            v = float(row[i])
            if not math.isfinite(v):
                finite = False
                break
            vmax = max(vmax, abs(v))
        if not finite:
            break
    # a non-finite state: the explicit step blew up; the implicit one's Newton did not converge
    status = "stable" if finite and vmax < 10 else ("NaN" if not finite and integrator == "backward_euler" else "unstable")
    return {"status": status, "max_speed_m_per_s": vmax if finite else None}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steer", required=True)
    p.add_argument("--json")
    args = p.parse_args(argv)
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for young in MODULI:
            mu = young / (2 * 1.3)
            lam = young * 0.3 / (1.3 * 0.4)
            hc = (0.05 / math.sqrt(3)) / math.sqrt((lam + 2 * mu) / 1000.0)
            row = {"young_Pa": young, "explicit_limit_estimate_ms": hc * 1e3, "cells": []}
            for ms in STEPS_MS:
                cell = {"dt_ms": ms}
                for integ in ("symplectic_euler", "backward_euler"):
                    cell[integ] = run_cell(args.steer, young, ms * 1e-3, integ, work)
                row["cells"].append(cell)
            table.append(row)
    print("| E [Pa] | h_c estimate [ms] | " + " | ".join(f"h = {ms:g} ms" for ms in STEPS_MS) + " |")
    print("|---|---:|" + "---|" * len(STEPS_MS))
    short = {"stable": "ok", "unstable": "blows up", "NaN": "NaN", "error": "error"}
    for row in table:
        cells = [f"{short[c['symplectic_euler']['status']]} / {short[c['backward_euler']['status']]}"
                 for c in row["cells"]]
        print(f"| {row['young_Pa']:g} | {row['explicit_limit_estimate_ms']:.3g} | " + " | ".join(cells) + " |")
    print("(each cell: symplectic Euler / backward Euler)")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
