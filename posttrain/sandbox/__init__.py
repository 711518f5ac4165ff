"""Sandboxes: isolation (bubblewrap namespaces), quotas (cgroups, tmpfs), overlayfs snapshots,
a warm pool; backends `bwrap` (default on Linux), `local` (no isolation) and `docker`."""
