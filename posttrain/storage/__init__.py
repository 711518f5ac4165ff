"""Where posttrain's artifacts are written (run directories, reports, caches)."""
