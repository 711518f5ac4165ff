"""Inline SVG charts for the self-contained HTML reports (eval, inspection): no script, no
network, so a report opens anywhere, offline."""

from __future__ import annotations

import html
import math

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


def histogram(
    title: str, values: list[float], bins: int = 10, plot_id: str = "", unit: str = "", integer: bool = False
) -> str:
    """How many of `values` fall in each bin, as a bar chart, at most about `bins` bins.
    `integer`: counts (steps, turns), one bin per whole number, labelled by it ("3"), or per run
    of whole numbers ("10-19") when they span more than `bins`. Else bins of a round width (1, 2
    or 5 times a power of ten) between multiples of it ("0.5-1.0s"); equal values are one bin."""
    if not values:
        return bar_chart(title, [], plot_id=plot_id)
    low, high = min(values), max(values)
    if integer:
        low, high = math.floor(low), math.floor(high)
        width = max(1, int(round_width((high - low + 1) / bins))) if high - low + 1 > bins else 1
    else:
        width = round_width((high - low) / bins) if high > low else 0.0
    start = math.floor(low / width) * width if width else low
    count = int((high - start) / width + 1e-9) + 1 if width else 1
    counts = [0] * count
    for v in values:
        index = int(((math.floor(v) if integer else v) - start) / width + 1e-9) if width else 0
        counts[min(count - 1, index)] += 1
    items = [(_bin_label(start + width * i, width, integer) + unit, float(c)) for i, c in enumerate(counts)]
    return bar_chart(title, items, plot_id=plot_id, fmt="{:.0f}")


def round_width(raw: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is at least `raw` (> 0)."""
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))


def _bin_label(edge: float, width: float, integer: bool) -> str:
    if integer:
        first, last = int(edge), int(edge + width) - 1
        return str(first) if first == last else f"{first}-{last}"
    if not width:
        return f"{edge:g}"
    digits = max(0, -math.floor(math.log10(width) + 1e-9))
    return f"{edge:.{digits}f}-{edge + width:.{digits}f}"
