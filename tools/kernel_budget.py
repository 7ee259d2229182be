#!/usr/bin/env python3
"""The CUDA kernels' resource budget: registers, stack frame, spills and shared memory per
kernel (ptxas -v), and compile time and peak memory per translation unit.

Three ways in:

  kernel_budget.py --compile [-j N] [--arch sm_90] [UNIT.cu ...]
      compiles kernels/*.cu (or the units named) with nvcc -Xptxas -v, as the CMake build
      does, then checks them;
  kernel_budget.py --logs DIR
      checks the reports the CMake build left in DIR (it compiles CUDA through this script's
      --launch mode, so the suite checks the budget without compiling twice);
  kernel_budget.py --launch DIR -- nvcc ARGS...
      the build's compiler launcher: runs the command with -Xptxas -v added, keeps ptxas's
      report (and the unit's wall time and peak memory) in DIR/<object>.ptxas, and passes
      every other line of the compiler's output through.

The budget (tools/kernel_budget.json) sets limits per kernel kind (forward, backward, any) and
lists the exceptions argued in docs/design.md ("The kernel budget"), each as a ceiling: a
kernel over its limit and over its exception's figures fails, so an exception can only shrink.
Exit status: 0 within budget, 1 over it, 2 for a usage error (a missing nvcc, folder or file).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT_SUFFIX = ".ptxas"
FIELDS = ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes", "shared_bytes")


def usage_error(message):
    print(f"kernel_budget.py: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- running nvcc


def run_measured(cmd):
    """Runs cmd; returns (exit status, stdout+stderr text, wall seconds, peak resident MB of the
    command and the processes it waited for: nvcc's cicc and ptxas)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    return proc.returncode, output, wall, usage.ru_maxrss / 1024.0  # ru_maxrss: KiB on Linux


def is_ptxas_line(line):
    return line.startswith("ptxas info") or re.match(r"^\s+\d+ bytes stack frame", line) is not None


def launch(log_dir, cmd):
    """The CMake build's launcher: cmd with -Xptxas -v; the report beside the object's name."""
    if not cmd:
        usage_error("--launch needs the compiler command after --")
    output_name = "unit"
    if "-o" in cmd and cmd.index("-o") + 1 < len(cmd):
        output_name = Path(cmd[cmd.index("-o") + 1]).name
    # a compile (-c) of a .cu file gets the report; a link or a dependency scan passes through
    compiles_cuda = "-c" in cmd and any(arg.endswith(".cu") for arg in cmd)
    if not compiles_cuda:
        return subprocess.call(cmd)
    rc, output, wall, peak_mb = run_measured(cmd + ["-Xptxas", "-v"])
    report_lines = [line for line in output.splitlines() if is_ptxas_line(line)]
    other = [line for line in output.splitlines() if not is_ptxas_line(line)]
    if other:
        print("\n".join(other), file=sys.stderr)
    if rc == 0:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        source = next(arg for arg in cmd if arg.endswith(".cu"))
        header = {"unit": Path(source).name, "wall_seconds": round(wall, 1),
                  "peak_memory_mb": round(peak_mb)}
        text = "# " + json.dumps(header) + "\n" + "\n".join(report_lines) + "\n"
        target = Path(log_dir) / (output_name + REPORT_SUFFIX)
        temporary = target.with_suffix(".tmp")
        temporary.write_text(text)
        temporary.replace(target)  # never a half-written report
    return rc


def nvcc_command(nvcc, unit, arch, obj):
    """The CMake build's flags for one kernel unit (CMakeLists.txt, src/CMakeLists.txt)."""
    eigen = "/usr/include/eigen3"
    return [nvcc, "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", f"-arch={arch}",
            "-DSTEER_WITH_CUDA=1", "-DEIGEN_DONT_PARALLELIZE", '-DSTEER_VERSION="budget"',
            f"-I{ROOT / 'include'}", f"-I{ROOT / 'src'}", f"-I{ROOT / 'kernels'}", f"-isystem={eigen}",
            "-Xcompiler=-Wall,-Wextra,-Wno-unknown-pragmas", "-Wreorder", "-Wext-lambda-captures-this",
            "-Werror=all-warnings", "-Xcompiler=-Werror", "-c", str(unit), "-o", str(obj)]


def compile_units(units, arch, jobs, log_dir):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        usage_error("--compile needs nvcc (on PATH or /usr/local/cuda/bin)")
    log_dir.mkdir(parents=True, exist_ok=True)

    def one(unit):
        obj = log_dir / (unit.stem + ".o")
        cmd = nvcc_command(nvcc, unit, arch, obj)
        rc = launch(log_dir, cmd)
        obj.unlink(missing_ok=True)
        print(f"compiled {unit.name}: exit {rc}", file=sys.stderr, flush=True)
        return unit.name, rc

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, units))
    return [name for name, rc in results if rc != 0]


# ---------------------------------------------------------------- reading ptxas's report


def demangle(names):
    if not names:
        return {}
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, out.stdout.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {name: name for name in names}


def short_name(demangled):
    """'void steer::cuda_detail::(anonymous namespace)::backward_kernel<steer::Projectile, float,
    true>(...)' -> 'backward_kernel<Projectile, float, true>' (true: the dual-number reference)."""
    name = demangled
    for prefix in ("(anonymous namespace)::", "steer::", "cuda_detail::"):
        name = name.replace(prefix, "")
    name = re.sub(r"^void ", "", name.split("(")[0])
    return name


def kernel_kind(name):
    base = name.split("<")[0]
    if base.startswith("forward"):
        return "forward"
    if base.startswith("backward"):
        return "backward"
    return "other"


def parse_report(path):
    """One unit's report: its header (time, memory) and its entry functions' resources."""
    lines = path.read_text().splitlines()
    header = json.loads(lines[0][2:]) if lines and lines[0].startswith("# ") else {"unit": path.stem}
    kernels, current, entries, arch = {}, None, set(), "?"
    for line in lines:
        m = re.search(r"Compiling entry function '([^']+)' for '(\w+)'", line)
        if m:
            entries.add(m.group(1))
            arch = m.group(2)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = kernels.setdefault((m.group(1), arch), dict.fromkeys(FIELDS, 0))
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current is not None:
            current["stack_bytes"], current["spill_store_bytes"], current["spill_load_bytes"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["shared_bytes"] = int(s.group(1)) if s else 0
    # device functions outside the kernels (noinline) have properties too; the budget is per kernel
    return header, {key: figures for key, figures in kernels.items() if key[0] in entries}


# ---------------------------------------------------------------- the budget


def load_budget(path):
    try:
        budget = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        usage_error(f"--budget {path}: {error}")
    for key in ("limits", "exceptions"):
        if key not in budget:
            usage_error(f"--budget {path}: no '{key}' key")
    return budget


def limits_for(budget, kind):
    merged = dict(budget["limits"].get("any", {}))
    merged.update(budget["limits"].get(kind, {}))
    return merged


def check_kernel(name, figures, budget):
    """The kernel's breaches: (field, figure, limit, exception ceiling or None, over the ceiling)."""
    limits = limits_for(budget, kernel_kind(name))
    exception = next((e for e in budget["exceptions"] if e["kernel"] == name), None)
    breaches = []
    for field, limit in limits.items():
        if figures[field] <= limit:
            continue
        ceiling = exception.get(field) if exception else None
        breaches.append((field, figures[field], limit, ceiling, ceiling is None or figures[field] > ceiling))
    return breaches, exception


def markdown_table(units, kernels, budget):
    out = [f"Per kernel (limits: {json.dumps(budget['limits'])}):", "",
           "| unit | kernel | arch | registers | stack B | spill stores B | spill loads B | shared B | verdict |",
           "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for unit, name, figures, breaches, exception in kernels:
        if not breaches:
            verdict = "within budget"
        elif any(b[4] for b in breaches):
            verdict = "**over budget**: " + ", ".join(f"{b[0]} {b[1]} > {b[2]}" for b in breaches if b[4])
        else:
            verdict = "exception (" + ", ".join(b[0] for b in breaches) + ")"
        out.append(f"| {unit} | `{name}` | {figures['arch']} | " + " | ".join(f"{figures[f]:,}" for f in FIELDS) + f" | {verdict} |")
    out += ["", "Per translation unit (wall time and peak memory of nvcc and its cicc and ptxas):", "",
            "| unit | compile s | peak MB |", "|---|---:|---:|"]
    for header in units:
        out.append(f"| {header['unit']} | {header.get('wall_seconds', '?')} | {header.get('peak_memory_mb', '?')} |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--compile", action="store_true", help="compile the kernel units with nvcc, then check")
    source.add_argument("--logs", type=Path, help="check the reports the CMake build wrote in this folder")
    source.add_argument("--launch", type=Path, help="the build's compiler launcher (reports go to this folder)")
    parser.add_argument("units", nargs="*", help="with --compile: the .cu files (default kernels/*.cu); "
                                                 "with --launch: the compiler command after --")
    parser.add_argument("--arch", default="sm_90", help="with --compile: the architecture (default sm_90)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="with --compile: units compiled side by side")
    parser.add_argument("--work", type=Path, default=Path("build/kernel_budget"),
                        help="with --compile: where the reports go (default build/kernel_budget)")
    parser.add_argument("--budget", type=Path, default=ROOT / "tools" / "kernel_budget.json")
    parser.add_argument("--markdown", type=Path, help="write the tables here")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()

    if args.launch is not None:
        return launch(args.launch, args.units)
    if args.jobs < 1:
        usage_error(f"--jobs {args.jobs}: must be at least 1")
    budget = load_budget(args.budget)
    if args.compile:
        units = [Path(u).resolve() for u in args.units] or sorted((ROOT / "kernels").glob("*.cu"))
        missing = [str(u) for u in units if not u.is_file()]
        if missing:
            usage_error("no such unit: " + ", ".join(missing))
        failed = compile_units(units, args.arch, args.jobs, args.work)
        if failed:
            print("kernel_budget.py: nvcc failed on " + ", ".join(failed), file=sys.stderr)
            return 1
        log_dir = args.work
    else:
        log_dir = args.logs
        if not log_dir.is_dir():
            usage_error(f"--logs {log_dir}: no such folder (build with CUDA first)")
    reports = sorted(log_dir.glob("*" + REPORT_SUFFIX))
    if not reports:
        usage_error(f"no {REPORT_SUFFIX} reports in {log_dir}")

    units, kernels, mangled = [], [], []
    parsed = [parse_report(r) for r in reports]
    for _, found in parsed:
        mangled += [raw for raw, _ in found]
    names = demangle(mangled)
    for header, found in parsed:
        units.append(header)
        for (raw, unit_arch), figures in sorted(found.items(), key=lambda kv: short_name(names[kv[0][0]])):
            name = short_name(names[raw])
            figures["arch"] = unit_arch
            breaches, exception = check_kernel(name, figures, budget)
            kernels.append((header["unit"], name, figures, breaches, exception))

    table = markdown_table(units, kernels, budget)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        args.json.write_text(json.dumps({
            "units": units,
            "kernels": [{"unit": u, "kernel": n, **f, "within_budget": not b,
                         "exception": bool(b) and not any(x[4] for x in b)} for u, n, f, b, _ in kernels]}, indent=1))
    over = [(u, n, b) for u, n, _, b, _ in kernels if any(x[4] for x in b)]
    unused = [e["kernel"] for e in budget["exceptions"]
              if not any(e["kernel"] == n and b for _, n, _, b, _ in kernels)]
    for pattern in unused:
        print(f"note: the exception '{pattern}' is no longer needed (no kernel it names is over a limit)")
    if over:
        for unit, name, breaches in over:
            detail = ", ".join(f"{f} {v} > limit {l}" + (f" and exception {c}" if c is not None else "")
                               for f, v, l, c, bad in breaches if bad)
            print(f"OVER BUDGET: {unit}: {name}: {detail}", file=sys.stderr)
        return 1
    print(f"{len(kernels)} kernels in {len(units)} units within budget (exceptions as argued in docs/design.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
