"""check_port_free: a port something listens on is one line naming it and what wanted it."""

import socket

import pytest

from posttrain.errors import PosttrainError
from posttrain.ports import check_port_free


def test_a_port_in_use_is_one_line_naming_the_port_and_who_wanted_it():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(PosttrainError) as refused:
            check_port_free("127.0.0.1", port, "posttrain serve --port")
    message = str(refused.value)
    assert message.startswith(f"posttrain serve --port: cannot listen on 127.0.0.1:{port} (")
    assert "choose another port" in message and "\n" not in message


def test_a_free_port_and_port_zero_pass():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    check_port_free("127.0.0.1", port, "the test")  # free again once the probe closed
    check_port_free("127.0.0.1", 0, "the test")  # 0: any free port
