"""Metric sinks, the trajectory store, and the inline SVG charts the HTML reports share."""
