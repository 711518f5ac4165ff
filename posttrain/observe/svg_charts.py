"""Inline SVG charts for the self-contained HTML reports (eval, inspection): no script, no
network, so a report opens anywhere, offline."""

from __future__ import annotations

import html

_BAR = "#4c78a8"


def bar_chart(
    title: str, items: list[tuple[str, float]], value_max: float | None = None, plot_id: str = "", fmt: str = "{:.2f}"
) -> str:
    """A horizontal bar chart as inline SVG; each bar is a <rect class="bar">."""
    width, label_w, row_h = 640, 200, 22
    height = 30 + row_h * max(1, len(items))
    top = value_max if value_max is not None else max([v for _, v in items] + [1e-9])
    parts = [
        f'<svg class="plot" id="{html.escape(plot_id)}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{html.escape(title)}">',
        f'<text x="0" y="16" font-size="14" font-weight="bold">{html.escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(items):
        y = 26 + i * row_h
        w = 0 if top <= 0 else (width - label_w - 60) * max(0.0, value) / top
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{html.escape(str(label))[:30]}</text>')
        parts.append(
            f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row_h - 6}" '
            f'fill="{_BAR}"><title>{html.escape(str(label))}: {fmt.format(value)}</title></rect>'
        )
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="12">{fmt.format(value)}</text>')
    if not items:
        parts.append('<text x="0" y="40" font-size="12">(none)</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram(title: str, values: list[float], bins: int = 10, plot_id: str = "", unit: str = "") -> str:
    """How many of `values` fall in each of `bins` equal-width bins, as a bar chart."""
    if not values:
        return bar_chart(title, [], plot_id=plot_id)
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / span * bins))] += 1
    items = [
        (f"{low + span * i / bins:.1f}-{low + span * (i + 1) / bins:.1f}{unit}", float(c)) for i, c in enumerate(counts)
    ]
    return bar_chart(title, items, plot_id=plot_id, fmt="{:.0f}")
