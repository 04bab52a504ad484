"""The Flower deployment launcher's small parts (the full launch is the federated paper's Flower test, slow)."""
from __future__ import annotations

import socket

from tasks.federated.flower_deployment import config_arg, free_port


def test_config_arg_is_flowers_key_value_syntax():
    from flwr.common.config import parse_config_args

    text = config_arg({"client": 3, "data": "/tmp/a b/client_3.npz", "rate": 0.5, "on": True})
    assert parse_config_args([text]) == {"client": 3, "data": "/tmp/a b/client_3.npz", "rate": 0.5, "on": True}


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
