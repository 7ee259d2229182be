#!/usr/bin/env python3
"""report.html in a real browser (docs/report.md): runs shipped configs cut down to seconds
(the projectile, a DiffTaichi robot, the morphology sweep with a small batch, a Panda config and
a comparison), opens each run's report.html in headless Chromium from the file system, and
fails unless the page's self-check passes: the page drew every part without a JavaScript
error, and playing the animation changed the drawn frame. Saves a screenshot of each page.

usage: report_browser.py STEER SOURCE_DIR WORK_DIR [--screenshots DIR]
exit 0 pass, 1 fail, 77 no browser on this machine (ctest SKIP_RETURN_CODE)."""
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys

BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]

# config -> (command, cuts): each cut is a (section, key, value) written over the shipped config
CASES = [
    ("projectile", "run", [("optimizer", "iterations", 30)]),
    ("difftaichi_robot_a", "run", [("simulation", "steps", 300), ("optimizer", "iterations", 3),
                                   ("validation", "epsilon_sweep", [1e-4, 1e-6])]),
    ("morphology_sweep", "run", [("batch", "size", 16), ("optimizer", "iterations", 2),
                                 ("validation", "max_rollouts", 2)]),
    ("panda", "run", [("simulation", "steps", 100), ("validation", "max_rollouts", 2),
                      ("validation", "epsilon_sweep", [1e-4, 1e-6])]),
    # the pages' other parts: horizon sweep, perturbation and success, a contact sweep, a bounce,
    # the arm's energy in free motion
    ("panda_horizon_sweep", "run", [("simulation", "steps", 50), ("horizon_sweep", "steps", [20, 50, 80])]),
    ("panda_reach", "run", [("simulation", "steps", 60), ("batch", "size", 8), ("optimizer", "iterations", 3),
                            ("validation", "max_rollouts", 2), ("validation", "epsilon_sweep", [1e-4, 1e-6])]),
    ("soft_contact_sweep", "run", [("simulation", "steps", 100)]),
    ("warp_bounce", "run", [("optimizer", "iterations", 5)]),
    ("panda_free_swing", "check", [("simulation", "steps", 200)]),
    ("soft_walker_knots", "compare", [("simulation", "steps", 200), ("compare", "iterations", 10),
                                      ("compare", "cmaes_rollouts", 300), ("compare", "repeats", 1),
                                      ("validation", "enabled", False)]),
]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def browser():
    for b in BROWSERS:
        p = shutil.which(b)
        if p:
            return p
    return None


def chromium(exe, args, timeout=120):
    # --no-sandbox: the test may run as root in a container, where Chromium's sandbox refuses
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--allow-file-access-from-files", "--hide-scrollbars"]
    r = subprocess.run(base + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return r


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    steer, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shots = None
    if "--screenshots" in sys.argv:
        shots = sys.argv[sys.argv.index("--screenshots") + 1]
    exe = browser()
    if not exe:
        print("SKIP: no Chromium on this machine (tools/bootstrap.sh test installs the Debian package chromium)")
        return 77
    os.makedirs(work, exist_ok=True)
    shots = shots or os.path.join(work, "screenshots")
    os.makedirs(shots, exist_ok=True)
    for name, command, cuts in CASES:
        cfg = json.load(open(os.path.join(src, "configs", name + ".json")))
        for sec, key, val in cuts:
            cfg.setdefault(sec, {})[key] = val
        # an included model file is named by its absolute path, since the cut config lives elsewhere
        inc = cfg.get("model", {}).get("include")
        if isinstance(inc, str) and not os.path.isabs(inc):
            cfg["model"]["include"] = os.path.join(src, "configs", inc)
        path = os.path.join(work, name + ".json")
        out = os.path.join(work, "runs_" + name)
        shutil.rmtree(out, ignore_errors=True)
        json.dump(cfg, open(path, "w"))
        r = subprocess.run([steer, command, path, "--out", out, "--backend", "cpu", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        if r.returncode not in (0, 1):
            fail("%s: steer %s exited %d: %s" % (name, command, r.returncode, r.stderr[-400:]))
        pages = glob.glob(os.path.join(out, "*", "report.html"))
        if len(pages) != 1:
            fail("%s: expected one report.html under %s, found %d" % (name, out, len(pages)))
        page = pages[0]
        size = os.path.getsize(page)
        if size >= 2000000:
            fail("%s: report.html is %d bytes, over the 2 MB budget" % (name, size))
        url = "file://" + os.path.abspath(page)
        # the self-check plays the animation for a second of (virtual) time and writes its verdict
        d = chromium(exe, ["--virtual-time-budget=5000", "--dump-dom", url + "#selftest"])
        if d.returncode != 0:
            fail("%s: chromium exited %d: %s" % (name, d.returncode, d.stderr[-400:]))
        m = re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', d.stdout, re.S)
        line = html.unescape(m.group(1)) if m else ""
        if not line:
            fail("%s: the page never finished its self-check (a script error stops it): %s" % (name, d.stdout[-600:]))
        if "SELFTEST PASS" not in line:
            fail("%s: %s" % (name, line.strip()[:800]))
        png = os.path.join(shots, "report_%s.png" % name)
        # the page laid out 1200 px wide, rendered at 0.7 scale: a small picture of the whole top
        s = chromium(exe, ["--virtual-time-budget=3000", "--window-size=1200,1500", "--force-device-scale-factor=0.7",
                           "--screenshot=" + png, url])
        if s.returncode != 0 or not os.path.isfile(png) or os.path.getsize(png) < 1000:
            fail("%s: no screenshot: %s" % (name, s.stderr[-400:]))
        print("%s (%s): %d bytes; %s; screenshot %s" % (name, command, size, line.strip()[:200], png))
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
