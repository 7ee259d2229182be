"""A line chart as a standalone SVG file, so the examples need no plotting package."""
from __future__ import annotations

import math
from typing import Sequence


def line_chart(path: str, series: dict, title: str, xlabel: str, ylabel: str, log_y: bool = False) -> None:
    """series: name -> (xs, ys). Writes an 640x400 SVG with axes, min/max tick labels and a legend."""
    w, h, l, r, t, b = 640, 400, 70, 20, 40, 50
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]

    def fy(v: float) -> float:
        return math.log10(v) if log_y else v

    xs = [x for s in series.values() for x in s[0]]
    ys = [fy(y) for s in series.values() for y in s[1] if (y > 0 or not log_y) and math.isfinite(y)]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1

    def px(x: float) -> float:
        return l + (x - x0) / (x1 - x0) * (w - l - r)

    def py(y: float) -> float:
        return h - b - (fy(y) - y0) / (y1 - y0) * (h - t - b)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{l}" y1="{h - b}" x2="{w - r}" y2="{h - b}" stroke="black"/>',
           f'<line x1="{l}" y1="{t}" x2="{l}" y2="{h - b}" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">{xlabel}</text>',
           f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">{ylabel}</text>',
           f'<text x="{l}" y="{h - b + 15}" text-anchor="middle">{x0:g}</text>',
           f'<text x="{w - r}" y="{h - b + 15}" text-anchor="end">{x1:g}</text>']
    lab = (lambda v: f"{10 ** v:.3g}") if log_y else (lambda v: f"{v:.3g}")
    out += [f'<text x="{l - 5}" y="{h - b}" text-anchor="end">{lab(y0)}</text>',
            f'<text x="{l - 5}" y="{t + 10}" text-anchor="end">{lab(y1)}</text>']
    for i, (name, (sx, sy)) in enumerate(series.items()):
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(sx, sy) if (y > 0 or not log_y) and math.isfinite(y))
        c = colors[i % len(colors)]
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<text x="{w - r - 5}" y="{t + 15 * (i + 1)}" text-anchor="end" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
