"""start_head: a head whose `ray start` cannot come up is started again, then reported in one
line, instead of leaving a driver's ray.init to retry for minutes."""

from __future__ import annotations

import pytest

from posttrain.dispatch.local_cluster import listening, start_head

pytest.importorskip("ray", reason="the ray extra is not installed (make setup installs it)")


def test_a_head_that_cannot_start_is_retried_then_reported(tmp_path, capfd):
    # --num-cpus=many: `ray start` exits at once, every time
    with pytest.raises(RuntimeError, match=r"the Ray head did not come up in 2 attempts of 30 s"):
        start_head(tmp_path, attempts=2, timeout=30.0, num_cpus="many")
    assert capfd.readouterr().err.count("starting it again") == 2


def test_listening_tells_an_open_port_from_a_closed_one():
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert listening(port)
    assert not listening(port)
