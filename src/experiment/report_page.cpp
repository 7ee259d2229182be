#include "experiment/report_page.h"

namespace steer {

const char* const kReportStyle = R"CSS(
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:12px 18px;color:#222;background:#fff}
h1{font-size:1.45em;margin:.3em 0}h2{font-size:1.15em;margin:1.2em 0 .4em;border-bottom:1px solid #ccc}
h3{font-size:1em;margin:.8em 0 .3em}
.verdict{border:2px solid #888;border-radius:6px;padding:8px 12px;margin:8px 0}
.pass{border-color:#2a7;background:#f2fbf5}.fail{border-color:#c33;background:#fdf3f3}
table{border-collapse:collapse;font-size:.86em;margin:4px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.small{font-size:.82em;color:#555}.plots{display:flex;flex-wrap:wrap;gap:10px}
.plots svg,.panel svg{border:1px solid #e4e4e4;background:#fff}
.panel{display:inline-block;margin:0 8px 8px 0;vertical-align:top}.panel .cap{font-size:.8em;color:#444}
.controls{margin:6px 0;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.controls input[type=range]{width:360px}.err{color:#b00;font-family:monospace;white-space:pre-wrap}
code{background:#f4f4f4;padding:0 3px}
)CSS";

// Draws everything from the JSON in <script id="steer-data">. Strings from the run (names,
// descriptions, label details) reach the page only through textContent, never as markup.
const char* const kReportScript = R"JS(
'use strict';
var D = JSON.parse(document.getElementById('steer-data').textContent);
var A = D.artifact || {};
var SVGNS = 'http://www.w3.org/2000/svg';
var COLORS = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2','#7f7f7f','#bcbd22'];
function el(tag, attrs, text, parent) {
  var e = document.createElement(tag);
  if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (parent) parent.appendChild(e);
  return e;
}
function sv(tag, attrs, parent) {
  var e = document.createElementNS(SVGNS, tag);
  if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v, p) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  if (!isFinite(v)) return String(v);
  if (v === 0) return '0';
  var a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential((p || 4) - 1);
  return String(Number(v.toPrecision(p || 4)));
}
function get(o, path, dflt) {
  var parts = path.split('.');
  for (var i = 0; i < parts.length; i++) {
    if (o === null || o === undefined || typeof o !== 'object' || !(parts[i] in o)) return dflt;
    o = o[parts[i]];
  }
  return o === undefined ? dflt : o;
}
function table(parent, head, rows) {
  var t = el('table', null, null, parent);
  var tr = el('tr', null, null, t);
  head.forEach(function (h) { el('th', null, h, tr); });
  rows.forEach(function (r) {
    var row = el('tr', null, null, t);
    r.forEach(function (c) {
      var isNum = typeof c === 'number';
      el('td', isNum ? {'class': 'num'} : null, isNum ? fmt(c, 6) : c, row);
    });
  });
  return t;
}
function section(title, fn) {
  var main = document.getElementById('main');
  var s = el('section', null, null, main);
  el('h2', null, title, s);
  try { fn(s); } catch (e) {
    window.__steerErrors.push(title + ': ' + (e && e.stack ? e.stack : e));
    el('div', {'class': 'err'}, 'this part could not be drawn: ' + e, s);
  }
  return s;
}

// ---- plots: lines and markers on linear or log axes, as SVG ----
function ticks(lo, hi, log) {
  var out = [];
  if (log) {
    var a = Math.floor(lo), b = Math.ceil(hi), step = Math.max(1, Math.ceil((b - a) / 6));
    for (var e = a; e <= b; e += step) if (e >= lo - 1e-9 && e <= hi + 1e-9) out.push(e);
    return out;
  }
  var span = hi - lo, raw = span / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var st = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (s) { return s >= raw; })[0] || mag * 10;
  for (var v = Math.ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) out.push(Math.abs(v) < st * 1e-9 ? 0 : v);
  return out;
}
function plot(parent, o) {
  var W = o.width || 540, H = o.height || 300, L = 64, R = 12, T = 24, B = 40;
  var svg = sv('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'font-size': 11, 'font-family': 'sans-serif'}, parent);
  var tx = function (v) { return o.logx ? (v > 0 ? Math.log10(v) : NaN) : v; };
  var ty = function (v) { return o.logy ? (v > 0 ? Math.log10(v) : NaN) : v; };
  var xs = [], ys = [];
  (o.series || []).forEach(function (s) {
    for (var i = 0; i < s.x.length; i++) {
      var a = tx(s.x[i]), b = ty(s.y[i]);
      if (isFinite(a) && isFinite(b) && s.y[i] !== null) { xs.push(a); ys.push(b); }
    }
  });
  (o.hlines || []).forEach(function (h) { var b = ty(h.y); if (isFinite(b)) ys.push(b); });
  sv('text', {x: W / 2, y: 15, 'text-anchor': 'middle', 'font-weight': 'bold'}, svg).textContent = o.title || '';
  if (!xs.length) {
    sv('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', fill: '#777'}, svg).textContent = 'no finite values to plot';
    return svg;
  }
  var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
  if (x1 - x0 < 1e-300) { x0 -= 0.5; x1 += 0.5; }
  if (y1 - y0 < Math.abs(y1) * 1e-12 + 1e-300) { var d = Math.abs(y1) * 0.1 || 0.5; y0 -= d; y1 += d; }
  var py = (y1 - y0) * 0.05; y0 -= py; y1 += py;
  var X = function (v) { return L + (tx(v) - x0) / (x1 - x0) * (W - L - R); };
  var Y = function (v) { return H - B - (ty(v) - y0) / (y1 - y0) * (H - T - B); };
  var axis = sv('g', {stroke: '#999', fill: 'none'}, svg);
  sv('rect', {x: L, y: T, width: W - L - R, height: H - T - B}, axis);
  ticks(x0, x1, o.logx).forEach(function (t) {
    var px = L + (t - x0) / (x1 - x0) * (W - L - R);
    sv('line', {x1: px, x2: px, y1: H - B, y2: H - B + 4}, axis);
    sv('text', {x: px, y: H - B + 15, 'text-anchor': 'middle', fill: '#333', stroke: 'none'}, svg).textContent = o.logx ? '1e' + t : fmt(t, 3);
  });
  ticks(y0, y1, o.logy).forEach(function (t) {
    var p = H - B - (t - y0) / (y1 - y0) * (H - T - B);
    sv('line', {x1: L - 4, x2: L, y1: p, y2: p}, axis);
    sv('line', {x1: L, x2: W - R, y1: p, y2: p, stroke: '#eee'}, axis);
    sv('text', {x: L - 6, y: p + 4, 'text-anchor': 'end', fill: '#333', stroke: 'none'}, svg).textContent = o.logy ? '1e' + t : fmt(t, 3);
  });
  sv('text', {x: L + (W - L - R) / 2, y: H - 6, 'text-anchor': 'middle'}, svg).textContent = o.xlabel || '';
  var yl = sv('text', {x: 12, y: T + (H - T - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + (T + (H - T - B) / 2) + ')'}, svg);
  yl.textContent = o.ylabel || '';
  (o.hlines || []).forEach(function (h) {
    if (!isFinite(ty(h.y))) return;
    var p = Y(h.y);
    sv('line', {x1: L, x2: W - R, y1: p, y2: p, stroke: h.color || '#c33', 'stroke-dasharray': '6 4', 'stroke-width': 1.5}, svg);
    sv('text', {x: W - R - 4, y: p - 4, 'text-anchor': 'end', fill: h.color || '#c33'}, svg).textContent = h.label || '';
  });
  var legend = 0;
  (o.series || []).forEach(function (s, si) {
    var c = s.color || COLORS[si % COLORS.length], pts = [];
    for (var i = 0; i < s.x.length; i++) {
      var ok = s.y[i] !== null && isFinite(tx(s.x[i])) && isFinite(ty(s.y[i]));
      if (ok) pts.push(X(s.x[i]).toFixed(1) + ',' + Y(s.y[i]).toFixed(1));
      else if (pts.length) { if (!s.markersOnly) sv('polyline', {points: pts.join(' '), fill: 'none', stroke: c, 'stroke-width': s.width || 1.5, 'stroke-dasharray': s.dash || '', opacity: s.opacity || 1}, svg); pts = []; }
      if (ok && (s.markers || s.markersOnly)) {
        var hollow = s.hollow && s.hollow[i];
        sv('circle', {cx: X(s.x[i]), cy: Y(s.y[i]), r: 3, fill: hollow ? '#fff' : c, stroke: c}, svg);
      }
    }
    if (pts.length && !s.markersOnly) sv('polyline', {points: pts.join(' '), fill: 'none', stroke: c, 'stroke-width': s.width || 1.5, 'stroke-dasharray': s.dash || '', opacity: s.opacity || 1}, svg);
    if (s.name && legend < 10) {
      var ly = T + 12 + 13 * legend++;
      sv('line', {x1: L + 8, x2: L + 26, y1: ly - 4, y2: ly - 4, stroke: c, 'stroke-width': 2, 'stroke-dasharray': s.dash || ''}, svg);
      sv('text', {x: L + 30, y: ly}, svg).textContent = s.name;
    }
  });
  return svg;
}
function range(n) { var r = []; for (var i = 0; i < n; i++) r.push(i); return r; }

// ---- the verdict ----
function verdict() {
  var main = document.getElementById('main');
  var ec = A.effective_config || {}, sim = ec.simulation || {}, cmd = A.command || '?';
  el('h1', null, 'steer ' + cmd + ': ' + (ec.name || get(A, 'config.name', 'experiment')), main);
  if (ec.description) el('p', {'class': 'small'}, ec.description, main);
  var passed = cmd === 'compare' ? null : get(A, 'result.check_passed', null);
  var box = el('div', {'class': 'verdict ' + (passed === false ? 'fail' : 'pass')}, null, main);
  var model = get(ec, 'model.type', '?');
  var B = get(ec, 'batch.size', '?');
  var dev = A.device || {};
  el('div', null, 'model ' + model + ', B = ' + B + ', T = ' + fmt(sim.steps) + ' steps, dt = ' + fmt(get(sim, 'dt.value', sim.dt)) +
     ' s, ' + (sim.precision || '') + ', backend ' + (dev.backend || '?') + (dev.threads ? ' (' + dev.threads + ' threads)' : '') +
     (A.created_utc ? ', created ' + A.created_utc : '') + ', steer ' + (A.steer_version || '?'), box);
  var res = A.result || {};
  if (cmd !== 'compare') {
    el('div', null, 'mean loss ' + fmt(res.loss_initial_mean, 6) + ' → ' + fmt(res.loss_final_mean, 6) +
       (res.loss_final_best !== undefined ? ', best ' + fmt(res.loss_final_best, 6) + ' (rollout ' + res.best_rollout + ')' : '') +
       (A.optimization ? ', ' + A.optimization.method + ' over ' + A.optimization.iterations + ' iterations' : ', nothing optimized'), box);
    var vs = A.validation || [];
    if (!vs.length) el('div', null, 'gradient check: off', box);
    vs.forEach(function (v) {
      el('div', null, 'gradient check (' + v.stage + '): ' + v.rollouts_passed + '/' + v.rollouts_checked + ' rollouts passed, largest relative error ' +
         fmt(v.max_relative_error, 3) + ' against the tolerance ' + fmt(v.tolerance, 3) + (v.all_passed ? '' : '  ✗'), box);
    });
    el('div', {'style': 'font-weight:bold'}, passed === false ? 'result: a gradient check failed (see the labels below)' : 'result: every gradient check passed', box);
  } else {
    var g = A.gradient || {}, c = A.cmaes || {};
    el('div', null, 'steer (' + (g.method || '?') + ' on the adjoint gradient): best loss ' + fmt(g.loss_best, 6) + ' after ' + fmt(g.rollouts_total) +
       ' rollouts; CMA-ES: best loss ' + fmt(c.loss_best, 6) + ' after ' + fmt(c.rollouts_used) + ' rollouts' +
       (A.ga ? '; GA: best loss ' + fmt(A.ga.loss_best, 6) + ' after ' + fmt(A.ga.rollouts_used) + ' rollouts' : '') + '; start ' + fmt(g.loss_start, 6), box);
  }
  // labels: one line of meaning and what to do
  var labels = A.labels || {};
  var names = Object.keys(labels);
  var ls = el('div', null, null, box);
  if (!names.length) el('div', null, 'labels: none', ls);
  else {
    el('div', {'style': 'margin-top:6px'}, 'labels (rollouts labelled, over every stage and analysis):', ls);
    table(ls, ['label', 'count', 'what it means', 'what to do', 'read'], names.map(function (n) {
      var d = (D.label_docs || {})[n] || {};
      return [n, labels[n], d.meaning || '', d.todo || '', 'docs/validation.md#' + (d.anchor || n)];
    }));
  }
  var t = A.timings || {};
  if (t.total_seconds !== undefined)
    el('div', {'class': 'small'}, 'timings: total ' + fmt(t.total_seconds, 3) + ' s; forward passes ' + fmt(get(t, 'forward.calls')) + ' (' +
       fmt(get(t, 'forward.rollout_steps_per_second'), 3) + ' rollout-steps/s), forward+backward ' + fmt(get(t, 'forward_backward.calls')) + ' (' +
       fmt(get(t, 'forward_backward.rollout_steps_per_second'), 3) + ' rollout-steps/s)', box);
  if (cmd === 'compare') {
    var cm = A.cost_model || {};
    el('div', {'class': 'small'}, 'cost model: a gradient evaluation costs ' + fmt(cm.rollouts_per_gradient_evaluation, 3) +
       ' rollouts (backward/forward ' + fmt(cm.backward_over_forward, 3) + ')', box);
  }
  if (D.notes) D.notes.forEach(function (n) { el('div', {'class': 'small'}, n, box); });
}

// ---- the motion ----
var player = {frame: 0, frames: 1, playing: false, draws: [], timer: null, speed: 1, times: [0]};
function setFrame(i) {
  player.frame = ((i % player.frames) + player.frames) % player.frames;
  player.draws.forEach(function (f) { f(player.frame); });
  var s = document.getElementById('slider');
  if (s) s.value = player.frame;
  var lab = document.getElementById('tlabel');
  if (lab) lab.textContent = 't = ' + fmt(player.times[Math.min(player.frame, player.times.length - 1)], 4) + ' s (frame ' + (player.frame + 1) + '/' + player.frames + ')';
}
function play(on) {
  player.playing = on;
  var b = document.getElementById('playbtn');
  if (b) b.textContent = on ? 'pause' : 'play';
  if (player.timer) { clearInterval(player.timer); player.timer = null; }
  if (on) player.timer = setInterval(function () { setFrame(player.frame + player.speed); }, 40);
}
function bounds(S, views) {
  // per view: the extent over every drawn frame, the gallery and the ground
  return views.map(function (v) {
    var h0 = Infinity, h1 = -Infinity, v0 = Infinity, v1 = -Infinity, d = S.dim;
    var add = function (p) {
      for (var i = 0; i + d - 1 < p.length; i += d) {
        h0 = Math.min(h0, p[i + v.h]); h1 = Math.max(h1, p[i + v.h]);
        v0 = Math.min(v0, p[i + v.v]); v1 = Math.max(v1, p[i + v.v]);
      }
    };
    S.rollouts.forEach(function (r) { r.p.forEach(add); });
    if (S.ground !== null && S.ground !== undefined && v.v === 1) { v0 = Math.min(v0, S.ground); v1 = Math.max(v1, S.ground); }
    if (S.target) {
      if (S.target.x !== null && v.h === 0) { h0 = Math.min(h0, S.target.x); h1 = Math.max(h1, S.target.x); }
      if (S.target.y !== null && v.v === 1) { v0 = Math.min(v0, S.target.y); v1 = Math.max(v1, S.target.y); }
    }
    // equal scales: one margin from the larger span; else each axis its own
    var span = Math.max(h1 - h0, v1 - v0, 1e-6);
    var ph = 0.06 * (S.equal_aspect === false ? Math.max(h1 - h0, 1e-6) : span), pv = 0.06 * (S.equal_aspect === false ? Math.max(v1 - v0, 1e-6) : span);
    return {h0: h0 - ph, h1: h1 + ph, v0: v0 - pv, v1: v1 + pv};
  });
}
function strainColor(s) {
  // red stretched, blue compressed, grey at rest; full colour at ±15 %
  var a = Math.max(-1, Math.min(1, s / 0.15));
  var r = a > 0 ? 200 : Math.round(200 + 55 * a), b = a < 0 ? 200 : Math.round(200 - 55 * a), g = Math.round(200 - 150 * Math.abs(a));
  if (a > 0) { r = Math.round(170 + 80 * a); b = Math.round(170 - 150 * a); g = Math.round(170 - 150 * a); }
  if (a < 0) { b = Math.round(170 - 80 * a); r = Math.round(170 + 150 * a); g = Math.round(170 + 150 * a); }
  return 'rgb(' + r + ',' + g + ',' + b + ')';
}
function stiffColor(k, k0, k1) {
  var a = k1 > k0 ? (k - k0) / (k1 - k0) : 0.5;
  return 'rgb(' + Math.round(230 - 200 * a) + ',' + Math.round(200 - 120 * a) + ',' + Math.round(120 + 60 * a) + ')';
}
function scales(bx, W, H, equal) {
  var sx = W / (bx.h1 - bx.h0), sy = H / (bx.v1 - bx.v0);
  if (equal !== false) sx = sy = Math.min(sx, sy);
  return {sx: sx, sy: sy};
}
function drawShape(g, S, p, bx, W, H, view, opts) {
  // one configuration: edges and points in the view's projection
  var d = S.dim, k = scales(bx, W, H, S.equal_aspect);
  var X = function (i) { return (p[d * i + view.h] - bx.h0) * k.sx; };
  var Y = function (i) { return H - (p[d * i + view.v] - bx.v0) * k.sy; };
  (S.edges || []).forEach(function (e, k) {
    var col = opts.edgeColor ? opts.edgeColor(k, e) : opts.color;
    sv('line', {x1: X(e[0]).toFixed(1), y1: Y(e[0]).toFixed(1), x2: X(e[1]).toFixed(1), y2: Y(e[1]).toFixed(1), stroke: col,
                'stroke-width': opts.edgeWidth ? opts.edgeWidth(k) : 2.5, 'stroke-linecap': 'round'}, g);
  });
  for (var i = 0; i * d < p.length; i++)
    sv('circle', {cx: X(i).toFixed(1), cy: Y(i).toFixed(1), r: opts.radius || 3, fill: opts.pointColor || opts.color || '#333'}, g);
}
function sweptText(b) {
  // a swept batch's values of this rollout, for the captions
  var row = get(A, 'result.rollouts', [])[b];
  if (!row || !row.swept) return '';
  return ' (' + Object.keys(row.swept).map(function (k) { return k + ' = ' + fmt(row.swept[k], 3); }).join(', ') + ')';
}
function motion(s) {
  var S = D.scene;
  if (!S) { el('p', null, D.scene_note || 'no motion recorded for this run', s); return; }
  var nf = 0;
  S.rollouts.forEach(function (r) { nf = Math.max(nf, r.p.length); });
  player.frames = Math.max(1, nf);
  player.times = S.rollouts[0].t;
  var ctl = el('div', {'class': 'controls'}, null, s);
  var pb = el('button', {id: 'playbtn'}, 'play', ctl);
  pb.addEventListener('click', function () { play(!player.playing); });
  var sl = el('input', {id: 'slider', type: 'range', min: 0, max: player.frames - 1, value: 0}, null, ctl);
  sl.addEventListener('input', function () { play(false); setFrame(parseInt(sl.value, 10)); });
  el('span', {id: 'tlabel'}, '', ctl);
  var sp = el('select', {id: 'speed'}, null, ctl);
  [1, 2, 4].forEach(function (v) { el('option', {value: v}, v + ' frame' + (v > 1 ? 's' : '') + ' per tick', sp); });
  sp.addEventListener('change', function () { player.speed = parseInt(sp.value, 10); });
  var colourMode = 'strain';
  if (S.kind === 'robot') {
    var cm = el('select', {id: 'colour'}, null, ctl);
    el('option', {value: 'strain'}, 'springs by strain (ℓ/ℓ(t=0) − 1: red stretched, blue compressed)', cm);
    el('option', {value: 'stiffness'}, 'springs by stiffness (yellow soft, blue stiff)', cm);
    cm.addEventListener('change', function () { colourMode = cm.value; setFrame(player.frame); });
  }
  el('div', {'class': 'small'}, 'recorded every ' + fmt(get(A, 'trajectory.recorded_every_steps', 1)) + ' steps; ' + S.rollouts.length +
     ' rollout(s) drawn' + (S.frames_note ? '; ' + S.frames_note : ''), s);
  var views = S.views, bxs = bounds(S, views);
  var panels = el('div', null, null, s);
  var mk = function (caption, v, W, Hmax) {
    var bx = bxs[v], H;
    if (S.equal_aspect === false) H = Math.min(Hmax, 0.55 * W);
    else {
      H = Math.max(90, Math.min(Hmax, W * (bx.v1 - bx.v0) / (bx.h1 - bx.h0)));
      W = Math.min(W, H * (bx.h1 - bx.h0) / (bx.v1 - bx.v0));
    }
    var pn = el('div', {'class': 'panel', style: 'width:' + Math.max(150, Math.round(W) + 2) + 'px'}, null, panels);
    var axes = S.axes || ['x', 'y', 'z'];
    el('div', {'class': 'cap'}, caption, pn);
    el('div', {'class': 'cap small'}, axes[views[v].h] + ' ' + fmt(bx.h0, 3) + ' … ' + fmt(bx.h1, 3) + ' m, ' +
       axes[views[v].v] + ' ' + fmt(bx.v0, 3) + ' … ' + fmt(bx.v1, 3) + ' m', pn);
    var svg = sv('svg', {width: Math.round(W), height: Math.round(H), 'class': 'motion'}, pn);
    return {svg: svg, W: W, H: H, bx: bx, view: views[v]};
  };
  var staticLayer = function (P, rolls) {
    var g = sv('g', null, P.svg), bx = P.bx, k = scales(bx, P.W, P.H, S.equal_aspect);
    var X = function (x) { return (x - bx.h0) * k.sx; }, Y = function (y) { return P.H - (y - bx.v0) * k.sy; };
    if (S.ground !== null && S.ground !== undefined && P.view.v === 1) {
      sv('rect', {x: 0, y: Y(S.ground), width: P.W, height: Math.max(0, P.H - Y(S.ground)), fill: '#e9e2d0'}, g);
      sv('line', {x1: 0, x2: P.W, y1: Y(S.ground), y2: Y(S.ground), stroke: '#8a7a55', 'stroke-width': 2}, g);
    }
    if (S.target && S.target.x !== null && P.view.h === 0)
      sv('line', {x1: X(S.target.x), x2: X(S.target.x), y1: 0, y2: P.H, stroke: '#c33', 'stroke-dasharray': '5 4'}, g);
    if (S.target && S.target.y !== null && P.view.v === 1)
      sv('line', {x1: 0, x2: P.W, y1: Y(S.target.y), y2: Y(S.target.y), stroke: '#c33', 'stroke-dasharray': '5 4'}, g);
    if (S.trail) rolls.forEach(function (r, ri) {
      var tp = S.trail_point || 0, d = S.dim;
      var pts = r.p.map(function (p) { return X(p[d * tp + P.view.h]).toFixed(1) + ',' + Y(p[d * tp + P.view.v]).toFixed(1); });
      sv('polyline', {points: pts.join(' '), fill: 'none', stroke: COLORS[(rolls.length > 1 ? ri : 0) % COLORS.length], opacity: 0.3, 'stroke-width': 1.5}, g);
    });
    return sv('g', null, P.svg);
  };
  var width = document.getElementById('main').clientWidth || 1100;
  if (S.kind === 'robot') {
    // side by side (stacked): one panel per rollout, springs coloured per frame
    S.rollouts.forEach(function (r, ri) {
      var P = mk(r.caption || 'rollout ' + r.rollout + sweptText(r.rollout), 0, S.rollouts.length > 1 ? width / 2 - 24 : width - 30, 230), dyn = staticLayer(P, [r]);
      var k = S.edge_stiffness[ri] || [], k0 = Math.min.apply(null, k), k1 = Math.max.apply(null, k), p0 = r.p[0];
      var len = function (p, e) { var dx = p[2 * e[0]] - p[2 * e[1]], dy = p[2 * e[0] + 1] - p[2 * e[1] + 1]; return Math.sqrt(dx * dx + dy * dy); };
      player.draws.push(function (f) {
        var p = r.p[Math.min(f, r.p.length - 1)];
        while (dyn.firstChild) dyn.removeChild(dyn.firstChild);
        drawShape(dyn, S, p, P.bx, P.W, P.H, P.view, {
          color: '#555', pointColor: '#222', radius: 3,
          edgeColor: function (j, e) { return colourMode === 'stiffness' ? stiffColor(k[j], k0, k1) : strainColor(len(p, e) / Math.max(1e-12, len(p0, e)) - 1); },
          edgeWidth: function (j) { return S.edge_actuated[j] ? 3.5 : 1.5; }});
      });
    });
  } else {
    // overlaid: one panel per projection, rollouts in colours
    var per = views.length > 1 ? Math.floor((width - 40) / Math.min(views.length, 3)) - 12 : width - 30;
    views.forEach(function (v, vi) {
      var P = mk(v.name, vi, per, 380), dyn = staticLayer(P, S.rollouts);
      player.draws.push(function (f) {
        while (dyn.firstChild) dyn.removeChild(dyn.firstChild);
        S.rollouts.forEach(function (r, ri) {
          var c = COLORS[ri % COLORS.length];
          drawShape(dyn, S, r.p[Math.min(f, r.p.length - 1)], P.bx, P.W, P.H, P.view, {color: c, pointColor: c, radius: S.kind === 'point' ? 5 : 3.5});
        });
      });
    });
    if (S.rollouts.length > 1) el('div', {'class': 'small'}, 'colours: ' + S.rollouts.map(function (r, i) { return (r.caption || 'rollout ' + r.rollout) + ' ' + ['blue', 'red', 'green', 'purple', 'orange', 'cyan', 'brown', 'pink'][i % 8]; }).join(', '), s);
  }
  if (S.gallery && S.gallery.length) {
    el('h3', null, 'best designs in their rest shape, ranked by final loss', s);
    var gb = bounds({dim: 2, rollouts: [{p: S.gallery.map(function (g) { return g.p; })}], ground: S.ground}, [{h: 0, v: 1}])[0];
    S.gallery.forEach(function (gd) {
      var pn = el('div', {'class': 'panel'}, null, s);
      el('div', {'class': 'cap'}, '#' + gd.rank + ': rollout ' + gd.rollout + ', loss ' + fmt(gd.loss_final, 5), pn);
      var Wg = 250, Hg = Math.max(60, Wg * (gb.v1 - gb.v0) / (gb.h1 - gb.h0));
      var svg = sv('svg', {width: Wg, height: Math.round(Hg)}, pn);
      drawShape(sv('g', null, svg), S, gd.p, gb, Wg, Hg, {h: 0, v: 1}, {color: '#456', pointColor: '#222', radius: 2.5,
        edgeWidth: function (j) { return S.edge_actuated[j] ? 2.5 : 1.2; }});
    });
  }
  setFrame(0);
}

// ---- the curves ----
function curves(s) {
  var box = el('div', {'class': 'plots'}, null, s), any = false;
  var h = get(A, 'optimization.history', null);
  // the history's x: L-BFGS-B samples it per batched evaluation (a line search evaluates several
  // points per accepted step; optimization.iterations counts the steps), the others per iteration
  var xunit = get(A, 'optimization.method', '') === 'lbfgsb' ? 'batched evaluation' : 'iteration';
  if (h && h.iteration && h.iteration.length) {
    any = true;
    var ser = [{name: 'batch mean', x: h.iteration, y: h.loss_mean, width: 2.5, color: '#000'},
               {name: 'batch min', x: h.iteration, y: h.loss_min, dash: '4 3', color: '#2a7'},
               {name: 'batch max', x: h.iteration, y: h.loss_max, dash: '4 3', color: '#c33'}];
    // the median next to the mean: a few diverging rollouts pull the mean, not the median
    if (h.loss_median && h.loss_median.length) ser.splice(1, 0, {name: 'batch median', x: h.iteration, y: h.loss_median, width: 2, dash: '8 3', color: '#1f77b4'});
    var fr = h.loss_first_rollouts || [];
    // loss_first_rollouts: per sampled iteration, the first rollouts' losses
    var nr = fr.length ? fr[0].length : 0;
    for (var r = 0; r < nr; r++) ser.push({name: r < 3 ? 'rollout ' + r : null, x: h.iteration, y: fr.map(function (row) { return row[r]; }), width: 1, opacity: 0.6, color: COLORS[(r + 3) % COLORS.length]});
    var ys = [].concat(h.loss_min || [], h.loss_max || []).filter(function (v) { return v !== null; });
    var pos = ys.length && ys.every(function (v) { return v > 0; });
    var logy = pos && Math.max.apply(null, ys) / Math.min.apply(null, ys) > 100;
    plot(box, {title: 'loss per ' + xunit + ' (' + A.optimization.method + ')', xlabel: xunit, ylabel: 'loss' + (logy ? ' (log)' : ''), logy: logy, series: ser});
  }
  // vars_first_rollouts: per logged iteration, the first rollouts' variables, rollout-major
  // rows of vars_per_rollout values (small problems only, docs/artifact.md); one plot per variable
  var nvp = h ? h.vars_per_rollout || 0 : 0, hv = h ? h.vars_first_rollouts || [] : [];
  if (nvp > 0 && hv.length === h.iteration.length) {
    any = true;
    var vd = el('div', null, null, s);
    el('h3', null, 'variables per ' + xunit + ' (first ' + Math.round(hv[0].length / nvp) + ' rollout(s))', vd);
    var vbox = el('div', {'class': 'plots variables'}, null, vd);
    var names = h.variable_names || [];
    for (var k = 0; k < nvp; k++) {
      var nrv = Math.round(hv[0].length / nvp), vser = [];
      for (var q = 0; q < nrv; q++) vser.push({name: nrv > 1 && q < 8 ? 'rollout ' + q : null, x: h.iteration,
        y: hv.map(function (row) { return row[q * nvp + k]; }), width: 1.5, color: COLORS[q % COLORS.length]});
      plot(vbox, {title: names[k] || ('variable ' + k), xlabel: xunit, ylabel: 'value', width: 270, height: 200, series: vser});
    }
  }
  var rows = get(A, 'result.rollouts', []);
  if (rows.length && rows[0].variables) {
    var vn = Object.keys(rows[0].variables);
    if (vn.length <= 24) {
      any = true;
      var d = el('div', null, null, box);
      el('h3', null, 'variables of rollout 0: start → optimum', d);
      table(d, ['variable', 'unit', 'start', 'optimum', '∂L/∂ at start', '∂L/∂ at optimum'], vn.map(function (n) {
        var v = rows[0].variables[n];
        return [n, v.unit, v.initial, v.final, v.gradient_initial, v.gradient_final];
      }));
    }
  }
  if (!any) el('p', null, 'nothing was optimized in this run', s);
}
function checks(s) {
  var en = D.scene && D.scene.energy;
  if (en && en.length) {
    // free motion: what the integrator does to the energy over time
    var eb = el('div', {'class': 'plots'}, null, s);
    plot(eb, {title: 'energy in free motion: E(t) − E(0)', xlabel: 't [s]', ylabel: 'E − E(0) [J]',
              series: en.map(function (r, i) { return {name: 'rollout ' + r.rollout, x: r.t, y: r.E.map(function (e) { return e - r.E[0]; }), color: COLORS[i % COLORS.length]}; })});
    plot(eb, {title: 'kinetic energy', xlabel: 't [s]', ylabel: 'KE [J]',
              series: en.map(function (r, i) { return {name: 'rollout ' + r.rollout, x: r.t, y: r.KE, color: COLORS[i % COLORS.length]}; })});
  }
  var vs = A.validation || [];
  if (!vs.length) { el('p', null, 'no gradient check ran', s); return; }
  vs.forEach(function (v) {
    el('h3', null, v.stage + ' check: ' + (v.method || ''), s);
    var box = el('div', {'class': 'plots'}, null, s);
    var rs = (v.rollouts || []).slice(0, 16), eps = v.epsilon_sweep || [];
    var ser = rs.map(function (r, i) {
      return {name: i < 8 ? 'rollout ' + r.rollout + (r.passed ? '' : ' ✗') : null, x: eps, y: (r.sweep_relative_error || []).map(function (e) { return e === 0 ? 1e-17 : e; }),
              markers: true, hollow: r.sweep_contact_mode_switch || []};
    });
    plot(box, {title: 'adjoint vs centred FD: relative error against ε', xlabel: 'ε (variable units, log)', ylabel: 'relative error (log)',
               logx: true, logy: true, series: ser, hlines: [{y: v.tolerance, label: 'tolerance ' + fmt(v.tolerance, 2)}]});
    var rr = v.rollouts || [];
    // per-rollout figures are arrays in the order of the checked rollouts
    var ids = function (n) { return range(n).map(function (i) { return rr[i] ? rr[i].rollout : i; }); };
    var zeroLog = function (a) { return a.map(function (x) { return x === 0 ? 1e-17 : x; }); };
    var tc = v.timestep_check;
    if (tc) {
      var key = tc.measure === 'gain_moved' ? 'gain_moved' : 'gradient_change';
      var vals = Array.isArray(tc[key]) ? tc[key] : [];
      plot(box, {title: 'timestep check: at h/2, ' + key.replace('_', ' '), xlabel: 'rollout', ylabel: key + ' (log)', logy: true,
                 series: [{name: null, x: ids(vals.length), y: zeroLog(vals), markersOnly: true, color: '#9467bd'}],
                 hlines: [{y: tc.tolerance, label: 'tolerance ' + fmt(tc.tolerance, 2)}]});
    }
    var f32 = v.float32_vs_float64;
    if (f32) {
      var dv = Array.isArray(f32.gradient_relative_deviation) ? f32.gradient_relative_deviation : [];
      plot(box, {title: 'float32 gradient against float64', xlabel: 'rollout', ylabel: 'relative deviation (log)', logy: true,
                 series: [{x: ids(dv.length), y: zeroLog(dv), markersOnly: true, color: '#ff7f0e'}],
                 hlines: [{y: f32.tolerance, label: 'tolerance ' + fmt(f32.tolerance, 2)}]});
    }
    var en = rr.filter(function (r) { return r.energy_drift_relative > 0; });
    if (en.length)
      plot(box, {title: 'energy drift in free motion', xlabel: 'rollout', ylabel: 'max |E_k − E_0| / max KE (log)', logy: true,
                 series: [{x: en.map(function (r) { return r.rollout; }), y: en.map(function (r) { return r.energy_drift_relative; }), markersOnly: true, color: '#17becf'}],
                 hlines: [{y: get(A, 'effective_config.validation.energy_drift_bound', null), label: 'bound'}]});
    var lab = [];
    rr.forEach(function (r) { (r.labels || []).forEach(function (l) { lab.push(['rollout ' + r.rollout, l.label, l.figure, l.detail || '']); }); });
    if (lab.length) table(s, ['rollout', 'label', 'figure', 'detail'], lab.slice(0, 64));
    table(s, ['rollout', 'loss', '∇L·d', 'FD', 'best error', 'at ε', 'horizon ratio', 'passed'], rr.slice(0, 32).map(function (r) {
      return [String(r.rollout), r.loss, r.directional_adjoint, r.fd, r.best_relative_error, r.best_epsilon, r.horizon_ratio, r.passed ? 'yes' : 'no'];
    }));
  });
}
function analyses(s) {
  var any = false, box = el('div', {'class': 'plots'}, null, s);
  var hs = get(A, 'result.horizon_sweep', null) || A.horizon_sweep;
  if (hs && hs.rows) {
    any = true;
    var st = hs.rows.map(function (r) { return r.steps; });
    plot(box, {title: 'horizon sweep: gradient check per horizon', xlabel: 'steps', ylabel: 'largest relative error (log)', logy: true,
               series: [{name: 'FD error', x: st, y: hs.rows.map(function (r) { return r.max_relative_error; }), markers: true}],
               hlines: [{y: get(A, 'effective_config.validation.tolerance', null), label: 'tolerance'}]});
    var ar = hs.rows.map(function (r) { var a = r.adjoint_ratio_x0_over_seed || []; return a.length ? a[0] : null; });
    plot(box, {title: 'horizon sweep: ‖λ_0‖/‖λ_seed‖ (rollout 0)', xlabel: 'steps', ylabel: 'ratio (log)', logy: true,
               series: [{x: st, y: ar, markers: true, color: '#9467bd'}], hlines: [{y: hs.bound, label: 'bound'}, {y: hs.bound ? 1 / hs.bound : null, label: '1/bound'}]});
  }
  // a batch sweep (contact stiffness, smoothing, …): the first check's error per swept value
  var rows = get(A, 'result.rollouts', []), v0 = (A.validation || [])[0];
  if (v0 && rows.length > 1 && rows[0].swept) {
    var err = {};
    (v0.rollouts || []).forEach(function (r) { err[r.rollout] = r.best_relative_error; });
    Object.keys(rows[0].swept).forEach(function (key) {
      var pts = rows.filter(function (r) { return r.swept && err[r.rollout] !== undefined; });
      if (pts.length < 2) return;
      any = true;
      var xv = pts.map(function (r) { return r.swept[key]; });
      var lx = xv.every(function (x) { return x > 0; }) && Math.max.apply(null, xv) / Math.min.apply(null, xv) > 50;
      plot(box, {title: 'swept ' + key + ': gradient check per level (' + v0.stage + ')', xlabel: key + (lx ? ' (log)' : ''),
                 ylabel: 'best relative error (log)', logx: lx, logy: true,
                 series: [{x: xv, y: pts.map(function (r) { return err[r.rollout] === 0 ? 1e-17 : err[r.rollout]; }), markers: true}],
                 hlines: [{y: v0.tolerance, label: 'tolerance'}]});
    });
  }
  var pt = get(A, 'result.perturbation', null) || A.perturbation;
  if (pt && pt.levels) {
    any = true;
    plot(box, {title: 'perturbation of ' + pt.parameter + ': mean loss per level', xlabel: 'relative change', ylabel: 'mean loss',
               series: [{name: 'perturbed', x: pt.levels.map(function (l) { return l.relative; }), y: pt.levels.map(function (l) { return l.loss_mean; }), markers: true},
                        {name: 'optimum', x: pt.levels.map(function (l) { return l.relative; }), y: pt.levels.map(function (l) { return l.loss_optimum_mean; }), dash: '4 3'}]});
  }
  var sc = get(A, 'result.success', null) || A.success;
  if (sc && sc.success_rate !== undefined) {
    any = true;
    table(s, ['tolerance', 'succeeded', 'rollouts', 'success rate', 'median error', 'p95', 'worst'],
          [[sc.tolerance, sc.succeeded, sc.rollouts, sc.success_rate, sc.max_error_median, sc.max_error_p95, sc.max_error_worst]]);
  }
  var cd = get(A, 'result.com_displacement_x.rollouts', null);
  if (cd) {
    any = true;
    table(s, ['rollout', 'centre-of-mass x travel before [m]', 'after [m]'], cd.slice(0, 16).map(function (r) { return [String(r.rollout), r.before, r.after]; }));
  }
  var rk = get(A, 'result.ranking.top', null);
  if (rk) {
    any = true;
    el('h3', null, 'ranking by final loss (top ' + Math.min(rk.length, 16) + ')', s);
    table(s, ['rank', 'rollout', 'loss at start', 'final loss'], rk.slice(0, 16).map(function (r) { return [String(r.rank), String(r.rollout), r.loss_initial, r.loss_final]; }));
  }
  if (!any) el('p', null, 'no sweeps or analyses in this run', s);
}
function compare(s) {
  var box = el('div', {'class': 'plots'}, null, s);
  var cv = D.compare_curves || [];
  var ser = cv.map(function (c) { return {name: (c.repeat === 0 ? '' : 'repeat ' + c.repeat + ': ') + c.method, x: c.x, y: c.y, width: c.repeat === 0 ? 2 : 1,
                                          opacity: c.repeat === 0 ? 1 : 0.5, color: /cma/i.test(c.method) ? '#d62728' : '#1f77b4'}; });
  var lv = (A.levels || []).map(function (l) { return {y: l.loss_level, label: '', color: '#bbb'}; });
  plot(box, {title: 'best loss against simulated rollouts', xlabel: 'rollouts (log)', ylabel: 'best loss so far', logx: true, series: ser, hlines: lv, width: 700, height: 360});
  if (A.levels) table(s, ['loss level', 'steer rollouts', 'CMA-ES rollouts', 'steer / CMA-ES'], A.levels.map(function (l) {
    return [l.loss_level, l.steer_rollouts < 0 ? 'not reached' : l.steer_rollouts, l.cmaes_rollouts < 0 ? 'not reached' : l.cmaes_rollouts,
            l.ratio_steer_over_cmaes < 0 ? '–' : l.ratio_steer_over_cmaes];
  }));
  if (A.levels_at_cmaes_budgets) {
    el('h3', null, 'rollouts steer needs to reach CMA-ES’s loss after N rollouts', s);
    table(s, ['N', 'CMA-ES loss', 'steer rollouts', 'ratio'], A.levels_at_cmaes_budgets.map(function (l) {
      return [l.cmaes_rollouts, l.cmaes_loss, l.steer_rollouts < 0 ? 'not reached' : l.steer_rollouts, l.ratio_steer_over_cmaes < 0 ? '–' : l.ratio_steer_over_cmaes];
    }));
  }
  var tc = A.timestep_check;
  if (tc) {
    el('h3', null, 'timestep check of the designs (h/2)', s);
    table(s, ['method', 'loss', 'loss at h/2', 'moved / gain'], ['steer', 'cmaes', 'ga'].filter(function (k) { return tc[k]; }).map(function (k) {
      return [k, tc[k].loss, tc[k].loss_half_step, tc[k].moved_of_gain];
    }));
  }
}
function selftest() {
  // for the browser test: the page drew without errors, and playing changes the drawn frame
  var out = document.getElementById('selftest');
  var sig = function () { return Array.prototype.map.call(document.querySelectorAll('svg.motion'), function (x) { return x.innerHTML; }).join('|'); };
  var report = function (ok, why) {
    out.textContent = 'SELFTEST ' + (ok && !window.__steerErrors.length ? 'PASS' : 'FAIL') + ': ' + why +
      (window.__steerErrors.length ? '; errors: ' + window.__steerErrors.join(' / ') : '');
  };
  var plots = document.querySelectorAll('svg').length;
  if (!D.scene) { report(plots > 0, 'no motion in this run; ' + plots + ' figures'); return; }
  var before = sig(), f0 = player.frame;
  play(true);
  setTimeout(function () {
    play(false);
    var after = sig();
    report(after !== before && player.frame !== f0, 'frame ' + f0 + ' -> ' + player.frame + ' of ' + player.frames + (after !== before ? ', drawing changed' : ', drawing unchanged') + '; ' + plots + ' figures');
  }, 130);  // three ticks of 40 ms: short of a wrap-around on the shortest recordings
}
verdict();
section('Motion', motion);
if (A.command === 'compare') section(A.ga ? 'Comparison: steer against CMA-ES and a GA' : 'Comparison: steer against CMA-ES', compare);
else {
  section('Optimization', curves);
  section('Gradient checks', checks);
  section('Sweeps and analyses', analyses);
}
if (location.hash === '#selftest') selftest();
else if (D.scene) { setFrame(Math.floor(player.frames / 2)); }
)JS";

}  // namespace steer
