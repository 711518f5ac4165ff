"""Whether a port is free to listen on, asked before anything slow starts: a server that would
load a model and only then fail to bind says so in one line, at once."""

from __future__ import annotations

import os
import socket

from posttrain.errors import PosttrainError


def check_port_free(host: str, port: int, what: str) -> None:
    """Raise PosttrainError, one line naming HOST:PORT and `what` wanted it (a flag or a config
    key: "posttrain serve --port"), when nothing could listen there now. Port 0 asks for any free
    port: always free. The probe binds as uvicorn and prometheus_client do (SO_REUSEADDR), so a
    port they would take is never refused here."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)  # create_server appends the address
        raise PosttrainError(f"{what}: cannot listen on {host}:{port} ({reason}); choose another port") from None
