"""Real Ray nodes for tests: posttrain/scheduler/local_cluster.py."""

from posttrain.scheduler.local_cluster import FAST_HEALTH_CHECK, ROOT, RayNode, free_port

RayHead = RayNode  # a head is a RayNode started without `head=`

__all__ = ["FAST_HEALTH_CHECK", "ROOT", "RayHead", "RayNode", "free_port"]
