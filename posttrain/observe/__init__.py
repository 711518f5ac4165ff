"""Metric sinks and the trajectory store."""
