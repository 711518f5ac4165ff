"""Pure geometry on placed objects: each one is its bounding box, an oriented rectangle on the
floor plan (x, z) turned by its yaw, times a vertical interval [base, top].

Yaw follows Three.js's rotation.y: the object's own x axis points along (cos t, -sin t) and its
own z axis (its front) along (sin t, cos t) in the (x, z) plane."""

from __future__ import annotations

import math
from dataclasses import dataclass

from posttrain.tasks.scene.schema import SceneObject

Point = tuple[float, float]


@dataclass(frozen=True)
class Footprint:
    """An object's floor-plan rectangle: centre, half extents along its own axes, and those axes."""

    center: Point
    half_width: float
    half_depth: float
    x_axis: Point
    z_axis: Point

    def corners(self) -> list[Point]:
        (cx, cz), (ux, uz), (vx, vz) = self.center, self.x_axis, self.z_axis
        w, d = self.half_width, self.half_depth
        return [(cx + sx * w * ux + sz * d * vx, cz + sx * w * uz + sz * d * vz) for sx, sz in _SIGNS]

    def contains(self, point: Point, tolerance: float = 0.0) -> bool:
        dx, dz = point[0] - self.center[0], point[1] - self.center[1]
        along_x = abs(dx * self.x_axis[0] + dz * self.x_axis[1])
        along_z = abs(dx * self.z_axis[0] + dz * self.z_axis[1])
        return along_x <= self.half_width + tolerance and along_z <= self.half_depth + tolerance


_SIGNS = ((-1, -1), (1, -1), (1, 1), (-1, 1))


def footprint(obj: SceneObject) -> Footprint:
    yaw = math.radians(obj.rotation)
    cos, sin = math.cos(yaw), math.sin(yaw)
    return Footprint((obj.position[0], obj.position[2]), obj.width / 2, obj.depth / 2, (cos, -sin), (sin, cos))


def front(obj: SceneObject) -> Point:
    yaw = math.radians(obj.rotation)
    return math.sin(yaw), math.cos(yaw)


def _projection(corners: list[Point], axis: Point) -> tuple[float, float]:
    values = [x * axis[0] + z * axis[1] for x, z in corners]
    return min(values), max(values)


def plan_penetration(a: Footprint, b: Footprint) -> float:
    """How deep two floor-plan rectangles overlap (separating axis theorem): the least overlap
    of their projections on the four edge axes; 0 or less when they are apart or touch."""
    ca, cb = a.corners(), b.corners()
    depth = math.inf
    for axis in (a.x_axis, a.z_axis, b.x_axis, b.z_axis):
        low_a, high_a = _projection(ca, axis)
        low_b, high_b = _projection(cb, axis)
        depth = min(depth, min(high_a, high_b) - max(low_a, low_b))
    return depth


def vertical_overlap(a: SceneObject, b: SceneObject) -> float:
    return min(a.top, b.top) - max(a.base, b.base)


def overlaps(a: SceneObject, b: SceneObject, tolerance: float) -> bool:
    """The two boxes share a volume deeper than `tolerance` on every axis (touching is fine)."""
    return vertical_overlap(a, b) > tolerance and plan_penetration(footprint(a), footprint(b)) > tolerance


def plan_gap(a: Footprint, b: Footprint) -> float:
    """The distance between two floor-plan rectangles; 0 when they touch or overlap."""
    if plan_penetration(a, b) >= 0:
        return 0.0
    ca, cb = a.corners(), b.corners()
    edges_a = list(zip(ca, ca[1:] + ca[:1]))
    edges_b = list(zip(cb, cb[1:] + cb[:1]))
    return min(
        min(_point_segment(p, s) for p in ca for s in edges_b),
        min(_point_segment(p, s) for p in cb for s in edges_a),
    )


def _point_segment(p: Point, segment: tuple[Point, Point]) -> float:
    (ax, az), (bx, bz) = segment
    dx, dz = bx - ax, bz - az
    length2 = dx * dx + dz * dz
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - az) * dz) / length2))
    return math.hypot(p[0] - (ax + t * dx), p[1] - (az + t * dz))


def angle_between(u: Point, v: Point) -> float:
    """Degrees between two plan directions; 180 when either is zero."""
    nu, nv = math.hypot(*u), math.hypot(*v)
    if nu == 0 or nv == 0:
        return 180.0
    cosine = max(-1.0, min(1.0, (u[0] * v[0] + u[1] * v[1]) / (nu * nv)))
    return math.degrees(math.acos(cosine))
