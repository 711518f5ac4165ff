"""What the verifier runs with is the image's, not the agent's.

The agent is root in its sandbox, and in system mode (/usr, /etc, /var, /opt writable, for
tasks whose Dockerfile installs packages) it could plant things the verifier would run: a fake
`python3` or `pytest` earlier on PATH, a `.pth` or `sitecustomize.py` startup hook that makes
every Python process pass. Before the tests run, the guard drops the agent's versions of:

- executables in the system PATH directories whose name the image already has on PATH
  (a replaced or shadowing `python3`, `pytest`, `bash`, `curl`); new names stay, so a task
  that asks for a tool to be installed is still verified with it;
- Python startup hooks (`*.pth`, `sitecustomize.py`, `usercustomize.py`) in any
  site-packages or dist-packages directory, except the ones editable installs and setuptools
  write.

The user site (under /root, always writable) is switched off for the verifier with
PYTHONNOUSERSITE. What is left is the task's own business: a test.sh that runs the workspace's
files, sources rc files or puts a writable directory first on PATH is exploitable, and the
quality inspector's probes say so.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from posttrain.sandbox.interface import DEFAULT_PATH, SandboxError

SYSTEM_ROOTS = ("/usr/", "/etc/", "/var/", "/opt/")
STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py")
TRUSTED_PTH_PREFIXES = ("__editable__", "distutils-precedence", "_virtualenv")
VERIFIER_ENV = {"PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _merged_usr(directory: str) -> str:
    """/bin is /usr/bin on merged-/usr systems (Debian's): one directory, one name."""
    if directory in ("/bin", "/sbin") and os.path.islink(directory):
        return "/usr" + directory
    return directory


def path_dirs(path_value: str | None) -> list[str]:
    return [_merged_usr(d.rstrip("/") or "/") for d in (path_value or DEFAULT_PATH).split(":") if d]


def is_startup_hook(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if not any(p in ("site-packages", "dist-packages") for p in parts):
        return False
    name = parts[-1]
    if name in STARTUP_HOOKS:
        return True
    return name.endswith(".pth") and not name.startswith(TRUSTED_PTH_PREFIXES)


def make_selector(path_value: str | None, image_has):
    """The predicate `discard_system_changes` calls: (path, in_image) -> drop the agent's
    version? `image_has(path)` says whether the image has a file there."""
    dirs = [d for d in path_dirs(path_value) if d.startswith(SYSTEM_ROOTS)]
    image_names: dict[str, bool] = {}

    def on_image_path(name: str) -> bool:
        if name not in image_names:
            image_names[name] = any(image_has(f"{d}/{name}") for d in path_dirs(path_value))
        return image_names[name]

    def select(path: str, in_image: bool) -> bool:
        if is_startup_hook(path):
            return True
        parent, name = os.path.split(path)
        return parent in dirs and (in_image or on_image_path(name))

    return select


def guard_toolchain(sandbox, path_value: str | None) -> list[str]:
    """Drop the agent's planted tools and hooks; returns the paths dropped. A backend that
    cannot (docker, local) is left as it is and says so."""
    discard = getattr(sandbox, "discard_system_changes", None)
    if discard is None:
        return []
    image_has = getattr(sandbox, "image_has", None)
    if image_has is None:
        return []
    try:
        return discard(make_selector(path_value, image_has))
    except (OSError, SandboxError):
        return []
