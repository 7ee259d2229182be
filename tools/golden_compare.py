#!/usr/bin/env python3
"""The golden comparison of a refactor: every shipped config (iterations, batches and compare
budgets cut down) through `steer check`, `run` and `compare`, a few float32 runs and the CLI's
usage errors, run with a baseline binary and a candidate binary; their stdout, stderr, exit
codes and run folders (artifact.json, trajectory.csv, report.html, ...) must agree byte for
byte once wall-clock timings, timestamps, output paths and compare's measured cost axis are
masked (a refactor changes no number).

  python3 tools/golden_compare.py --source CHECKOUT --baseline OLD_STEER --candidate NEW_STEER --out DIR [--only REGEX]

CHECKOUT is a checkout whose configs/ the commands run (both binaries read the same files; the
cut-down copies are written there as configs/golden_*.json). Exit 0 when nothing differs, 1
with the differences listed."""
import json, os, re, subprocess, sys, glob, shutil, difflib, time
import argparse

def write_configs(cfg_dir):
    for f in sorted(glob.glob(cfg_dir + '/*.json')):
        name = os.path.basename(f)
        if name.startswith('golden_'):
            continue
        j = json.load(open(f))
        opt = j.get('optimizer')
        if isinstance(opt, dict) and 'iterations' in opt:
            opt['iterations'] = min(opt['iterations'], 6)
            if 'log_every' in opt:
                opt['log_every'] = 2
        b = j.get('batch')
        if isinstance(b, dict) and 'size' in b:
            b['size'] = min(b['size'], 8)
        c = j.get('compare')
        if isinstance(c, dict):
            if 'iterations' in c: c['iterations'] = min(c['iterations'], 6)
            if 'cmaes_rollouts' in c: c['cmaes_rollouts'] = min(c['cmaes_rollouts'], 200)
            if 'repeats' in c: c['repeats'] = 1
        json.dump(j, open(os.path.join(cfg_dir, 'golden_' + name), 'w'), indent=1)

def commands():
    cmds = []
    for f in sorted(glob.glob(CFG + '/golden_*.json')):
        n = os.path.basename(f)[len('golden_'):-5]
        cmds.append(('check_' + n, ['check', f]))
        cmds.append(('run_' + n, ['run', f]))
        j = json.load(open(f))
        if 'compare' in j:
            cmds.append(('compare_' + n, ['compare', f]))
    for n in ['projectile', 'difftaichi_robot_a', 'panda_reach', 'box_slide']:
        cmds.append(('run32_' + n, ['run', CFG + '/golden_' + n + '.json', '--precision', 'float32']))
    cmds.append(('err_noargs', []))
    cmds.append(('err_run_noconfig', ['run']))
    cmds.append(('err_missing_file', ['run', '/nonexistent/x.json']))
    cmds.append(('err_bad_backend', ['run', CFG + '/golden_projectile.json', '--backend', 'tpu']))
    cmds.append(('err_bad_threads', ['run', CFG + '/golden_projectile.json', '--threads', '-3']))
    cmds.append(('err_bad_precision', ['check', CFG + '/golden_projectile.json', '--precision', 'float16']))
    cmds.append(('err_report_missing', ['report', '/nonexistent/run']))
    bad = os.path.join(CFG, 'golden_bad')
    os.makedirs(bad, exist_ok=True)
    base = json.load(open(CFG + '/golden_projectile.json'))
    variants = {
        'unknown_key': lambda j: j.update({'bogus': 1}),
        'bad_dt': lambda j: j['simulation'].update({'dt': -1}),
        'bad_model': lambda j: j['model'].update({'type': 'spaceship'}),
        'bad_steps': lambda j: j['simulation'].update({'steps': 0}),
        'bad_var': lambda j: j['variables'].update({'x0.nothing': {'lower': 0, 'upper': 1}}),
    }
    for k, fn in variants.items():
        j = json.loads(json.dumps(base)); fn(j)
        p = os.path.join(bad, k + '.json'); json.dump(j, open(p, 'w'))
        cmds.append(('err_cfg_' + k, ['run', p]))
    return cmds

TIMING_KEY = re.compile(r'(second|latency|per_s\b|_per_s_|_s$|^time$|host|date|created|started|finished|elapsed|wall|pid|rate$|cpu_model|machine)', re.I)
# compare's cost axis is measured (backward/forward time ratio), so its rollout counts vary run to run
COST_KEY = re.compile(r'(rollouts_total|rollouts_used|rollouts_per_gradient|backward_over_forward|rollouts_to|cost|_rollouts$|rollouts_at|(?:^|_)ratio|steer_rollouts)', re.I)

def norm_json(o, outdir):
    if isinstance(o, dict):
        r = {}
        for k, v in o.items():
            numeric = (isinstance(v, (int, float)) and not isinstance(v, bool)) or (
                isinstance(v, list) and all(isinstance(e, (int, float)) for e in v))
            if (TIMING_KEY.search(k) or COST_KEY.search(k)) and numeric:
                r[k] = '<T>'
            elif k in ('host', 'created', 'started', 'finished', 'date', 'time_utc', 'machine', 'cpu'):
                r[k] = '<X>'
            else:
                r[k] = norm_json(v, outdir)
        return r
    if isinstance(o, list):
        return [norm_json(v, outdir) for v in o]
    if isinstance(o, str):
        return norm_text(o, outdir)
    return o

def norm_text(s, outdir):
    s = s.replace(outdir, '<OUT>')
    s = re.sub(r'\d{8}T\d{6}Z|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?', '<DATE>', s)
    s = re.sub(r'-\d{8}-\d{6}', '-<DATE>', s)
    s = re.sub(r'\d+(\.\d+)?(e[-+]?\d+)? ?(s|ms|min|h)\b', '<T>', s)
    s = re.sub(r'\d+(\.\d+)?(e[-+]?\d+)?[kMG]? ?(rollouts?|steps?|rollout-steps)/s', '<RATE>', s)
    return s

def norm_html(t, outdir):
    m = re.search(r'(<script type="application/json" id="steer-data">)(.*?)(</script>)', t, re.S)
    if m:
        try:
            j = json.dumps(norm_json(json.loads(m.group(2)), outdir), sort_keys=True, indent=0)
            t = t[:m.start(2)] + j + t[m.end(2):]
        except Exception:
            pass
    return norm_text(t, outdir)

def norm_cost(t):
    t = re.sub(r'cost model:.*', 'cost model: <C>', t)
    t = re.sub(r'in [0-9.e+-]+ rollouts', 'in <N> rollouts', t)
    t = re.sub(r'^( +[-0-9.e+]+: )[-0-9.e+]+ / [0-9]+ +\(ratio [-0-9.e+]+\)', r'\1<C>', t, flags=re.M)
    t = re.sub(r'^( +N = +[0-9]+ \([-0-9.e+]+\): )[-0-9.e+]+ +\(ratio [-0-9.e+]+\)', r'\1<C>', t, flags=re.M)
    return t

def run_all(binary, out):
    os.makedirs(out, exist_ok=True)
    for name, args in commands():
        if ONLY and not re.search(ONLY, name):
            continue
        d = os.path.join(out, name)
        if os.path.exists(d): shutil.rmtree(d)
        os.makedirs(d)
        full = [binary] + args
        if args and args[0] in ('run', 'check', 'compare') and len(args) > 1:
            full += ['--out', os.path.join(d, 'runs'), '--quiet', '--threads', '2']
        t0 = time.time()
        p = subprocess.run(full, capture_output=True, text=True, cwd=SOURCE, timeout=1800)
        open(os.path.join(d, 'rc'), 'w').write(str(p.returncode))
        open(os.path.join(d, 'stdout'), 'w').write(p.stdout)
        open(os.path.join(d, 'stderr'), 'w').write(p.stderr)
        print(f'{name}: rc {p.returncode} in {time.time()-t0:.1f}s', flush=True)

def files_of(d):
    out = {}
    for root, _, fs in os.walk(d):
        for f in fs:
            out[os.path.relpath(os.path.join(root, f), d)] = os.path.join(root, f)
    return out

def canon_rel(rel):
    return re.sub(r'-\d{8}T\d{6}Z|-\d{8}-\d{6}|\d{8}T\d{6}', '-<DATE>', rel)

def compare(base, new):
    diffs = []
    for name, _ in commands():
        if ONLY and not re.search(ONLY, name):
            continue
        b, n = os.path.join(base, name), os.path.join(new, name)
        fb = {canon_rel(k): v for k, v in files_of(b).items()}
        fn = {canon_rel(k): v for k, v in files_of(n).items()}
        if set(fb) != set(fn):
            diffs.append((name, 'file sets differ: ' + str(sorted(set(fb) ^ set(fn)))))
        for rel in sorted(set(fb) & set(fn)):
            tb, tn = open(fb[rel], errors='replace').read(), open(fn[rel], errors='replace').read()
            if rel.endswith('.json'):
                try:
                    tb = json.dumps(norm_json(json.loads(tb), b), indent=1, sort_keys=True)
                    tn = json.dumps(norm_json(json.loads(tn), n), indent=1, sort_keys=True)
                except Exception:
                    pass
            elif (rel.endswith('.svg') or rel.endswith('.html')) and name.startswith('compare_'):
                continue  # drawn on the measured cost axis
            elif rel.endswith('.html'):
                tb, tn = norm_html(tb, b), norm_html(tn, n)
            elif rel.endswith('compare.csv'):
                tb = '\n'.join(','.join(f for i, f in enumerate(l.split(',')) if i != 2) for l in tb.splitlines())
                tn = '\n'.join(','.join(f for i, f in enumerate(l.split(',')) if i != 2) for l in tn.splitlines())
            elif not rel.endswith('.csv'):
                tb, tn = norm_text(tb, b), norm_text(tn, n)
                if name.startswith('compare_'):
                    tb, tn = norm_cost(tb), norm_cost(tn)
            if tb != tn:
                d = list(difflib.unified_diff(tb.splitlines(), tn.splitlines(), 'base/' + rel, 'new/' + rel, n=0, lineterm=''))
                diffs.append((name, rel + '\n    ' + '\n    '.join(x[:300] for x in d[:14])))
    return diffs

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--source', required=True)
    ap.add_argument('--baseline', required=True)
    ap.add_argument('--candidate', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--only')
    a = ap.parse_args()
    ONLY = a.only
    SOURCE = os.path.abspath(a.source)
    CFG = os.path.join(SOURCE, 'configs')
    write_configs(CFG)
    base_out, new_out = os.path.join(a.out, 'baseline'), os.path.join(a.out, 'candidate')
    run_all(os.path.abspath(a.baseline), base_out)
    run_all(os.path.abspath(a.candidate), new_out)
    diffs = compare(base_out, new_out)
    total = len([1 for n, _ in commands() if not ONLY or re.search(ONLY, n)])
    print(f'\n== golden: {total} commands, {len(diffs)} differences')
    for name, what in diffs:
        print(f'-- {name}: {what}')
    sys.exit(1 if diffs else 0)
