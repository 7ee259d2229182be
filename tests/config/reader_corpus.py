#!/usr/bin/env python3
"""Runs `steer run` on every malformed config of tests/data/malformed (manifest.tsv) and on
the big ones made here at run time (deep nesting, huge strings and files, endless devices and
FIFOs), and checks each: exit code 2 (not a crash, not 1), the expected key on stderr, stderr
under 2 KB, nothing written into the --out folder, and a bounded time.

usage: reader_corpus.py --steer BIN --corpus DIR [--only SUBSTRING] [--keep]
Exit 0 when every case passes; the failures are listed otherwise.
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

MAX_STDERR = 2048  # bytes
CASE_TIMEOUT = 60  # seconds: a config error is found in well under one


def run_case(steer, cfg, expect, work, name, max_seconds=None):
    """runs one config; returns a list of problems (empty: the case passed)"""
    out = os.path.join(work, "out_" + name)
    os.mkdir(out)
    t0 = time.monotonic()
    try:
        p = subprocess.run([steer, "run", cfg, "--backend", "cpu", "--quiet", "--out", out],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CASE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return ["no answer within %d s" % CASE_TIMEOUT]
    secs = time.monotonic() - t0
    err = p.stderr
    problems = []
    if p.returncode < 0:
        problems.append("crashed with signal %d" % -p.returncode)
    elif p.returncode != 2:
        problems.append("exit code %d, expected 2" % p.returncode)
    text = err.decode("utf-8", "replace")
    if expect not in text:
        problems.append("stderr does not name %r" % expect)
    if len(err) >= MAX_STDERR:
        problems.append("stderr holds %d bytes (limit %d)" % (len(err), MAX_STDERR))
    left = os.listdir(out)
    if left:
        problems.append("wrote into the out folder: %s" % ", ".join(sorted(left)[:5]))
    if max_seconds is not None and secs > max_seconds:
        problems.append("took %.1f s (limit %.0f s)" % (secs, max_seconds))
    if problems:
        problems.append("stderr: " + text[:400].replace("\n", "\\n"))
    shutil.rmtree(out, ignore_errors=True)
    return problems


def manifest(corpus):
    cases = []
    with open(os.path.join(corpus, "manifest.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, expect = line.split("\t", 1)
            cases.append((name, expect))
    return cases


PROJ = ('{"name": "big", %s"model": {"type": "projectile", "dim": 2}, "simulation": {"dt": 0.01, "steps": 20}, '
        '"loss": {"terminal": [{"state": "position.x", "target": 1.0}]}, "optimizer": {"method": "none"}, '
        '"validation": {"enabled": false}}')


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def feed_forever(fd, chunk, stop):
    """writes chunk into the FIFO open (non-blocking) at fd until stop is set"""
    while not stop.is_set():
        try:
            os.write(fd, chunk)
        except BlockingIOError:
            time.sleep(0.001)
        except OSError:
            break


def generated(work):
    """(name, config path, expected text, time limit [s] or None, cleanup) made at run time"""
    g = os.path.join(work, "gen")
    os.mkdir(g)
    cases = []
    rel_arm = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "models",
                                           "panda_arm.json"), g)

    def art(include):
        return ('{"name": "big", "model": {"type": "articulated", "include": "%s"}, "simulation": {"dt": 0.002, "steps": 10}, '
                '"loss": {"terminal": [{"state": "joint1.q", "target": 0.1}]}, "optimizer": {"method": "none"}, '
                '"validation": {"enabled": false}}' % include)

    n = 100000
    cases.append(("deep_objects_100k", write(os.path.join(g, "deep_objects.json"),
                                             PROJ % ('"description": ' + '{"a": ' * n + "1" + "}" * n + ", ")),
                  "description", 10))
    n = 1000000
    cases.append(("deep_arrays_1m", write(os.path.join(g, "deep_arrays.json"),
                                          PROJ % ('"description": ' + "[" * n + "]" * n + ", ")), "description", 10))
    cases.append(("deep_arrays_unclosed_1m", write(os.path.join(g, "deep_unclosed.json"),
                                                   PROJ % ('"description": ' + "[" * n + ", ")), "description", 10))
    write(os.path.join(g, "deep.frag"), '{"bodies": ' + "[" * n + "]" * n + "}")
    cases.append(("include_deep_1m", write(os.path.join(g, "include_deep.json"), art("deep.frag")), "model.include", 10))
    # a name of 200 MB: refused by the size cap from the file's size, without reading or quoting it
    big = os.path.join(g, "name_200mb.json")
    with open(big, "w") as f:
        f.write('{"name": "')
        block = "n" * (1 << 20)
        for _ in range(200):
            f.write(block)
        f.write('"}')
    cases.append(("name_200mb", big, "16 MiB", 5))
    # a name of 15 MB fits the size cap: refused by the name's own limit, not quoted
    cases.append(("name_15mb", write(os.path.join(g, "name_15mb.json"), PROJ.replace('"name": "big"', '"name": "%s"')
                                     % ("n" * 15000000, "")), "name", 10))
    cases.append(("choice_15mb", write(os.path.join(g, "choice_15mb.json"),
                                       (PROJ % '"description": "", ').replace('"steps": 20', '"steps": 20, "precision": "%s"' % ("f" * 15000000))),
                  "simulation.precision", 10))
    cases.append(("unknown_key_15mb", write(os.path.join(g, "key_15mb.json"), PROJ % ('"%s": 1, ' % ("k" * 15000000))),
                  "unknown key", 10))
    cases.append(("padded_17mb", write(os.path.join(g, "padded.json"), PROJ % "" + " " * (17 << 20)), "16 MiB", 5))
    nums = ",".join(["0"] * 7000000)
    cases.append(("description_7m_numbers", write(os.path.join(g, "numbers.json"), PROJ % ('"description": [' + nums + "], ")),
                  "description", 20))
    keys = ", ".join('"k%d": 0' % i for i in range(700000))
    cases.append(("model_700k_keys", write(os.path.join(g, "keys.json"), PROJ.replace('"dim": 2', '"dim": 2, ' + keys) % ""),
                  "unknown key", 20))
    dup = ", ".join('"k%d": 0' % i for i in range(500000)) + ', "k7": 1'
    cases.append(("duplicate_after_500k_keys", write(os.path.join(g, "dup.json"), PROJ % ('"description": {' + dup + "}, ")),
                  "description.k7", 20))
    cases.append(("dev_zero", "/dev/zero", "16 MiB", 10))
    cases.append(("directory", g, "directory", 5))
    cases.append(("missing_file", os.path.join(g, "no_such.json"), "no_such.json", 5))
    cases.append(("include_dev_zero", write(os.path.join(g, "include_zero.json"), art("/dev/zero")), "model.include", 10))
    os.mkfifo(os.path.join(g, "silent.fifo"))
    cases.append(("fifo_without_writer", os.path.join(g, "silent.fifo"), "not valid JSON", 5))
    os.mkfifo(os.path.join(g, "endless.fifo"))
    cases.append(("fifo_fed_forever", os.path.join(g, "endless.fifo"), "16 MiB", 20))
    os.mkfifo(os.path.join(g, "endless_inc.fifo"))
    cases.append(("include_fifo_fed_forever", write(os.path.join(g, "include_fifo.json"), art("endless_inc.fifo")),
                  "model.include", 20))
    cases.append(("include_ok_but_projectile", write(os.path.join(g, "inc_proj.json"),
                                                     PROJ.replace('"dim": 2', '"dim": 2, "include": "%s"' % rel_arm) % ""),
                  "model.include", 5))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steer", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="steer_reader_corpus_")
    failures = []
    count = 0
    t0 = time.monotonic()
    try:
        for name, expect in manifest(a.corpus):
            if a.only not in name:
                continue
            count += 1
            probs = run_case(a.steer, os.path.join(a.corpus, name), expect, work, name.replace(".json", ""))
            if probs:
                failures.append((name, probs))
        stop = threading.Event()
        for name, cfg, expect, limit in generated(work):
            if a.only not in name:
                continue
            count += 1
            feeders = []
            fifo = {"fifo_fed_forever": "endless.fifo", "include_fifo_fed_forever": "endless_inc.fifo"}.get(name)
            if fifo:
                # opened for reading and writing, so the writer is there before steer opens the FIFO
                # (a FIFO without one reads as empty) and the open never waits
                fd = os.open(os.path.join(work, "gen", fifo), os.O_RDWR | os.O_NONBLOCK)
                t = threading.Thread(target=feed_forever, args=(fd, b"[" * 65536, stop), daemon=True)
                t.start()
                feeders.append((t, fd))
            probs = run_case(a.steer, cfg, expect, work, name, limit)
            stop.set()
            for t, fd in feeders:
                t.join(5)
                os.close(fd)
            stop.clear()
            if probs:
                failures.append((name, probs))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    secs = time.monotonic() - t0
    for name, probs in failures:
        print("FAIL %s:\n  %s" % (name, "\n  ".join(probs)))
    print("reader_corpus: %d cases, %d failed, %.1f s" % (count, len(failures), secs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
