"""The framed messages of tasks/core/messages.py: what is sent comes back over a pipe and a socket, in order, and
a frame cut short, over the limit or not JSON is a MessageError that says which."""
from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from tasks.core import messages

SENT = [{"op": "open", "tags": {"paper": "p"}}, {"values": [1.5, None, True], "text": "é\n{"}, [],
        "x" * 200_000]  # the last one more than a pipe or socket holds: read while it is written


def pipe_ends():
    reading, writing = os.pipe()
    return os.fdopen(writing, "wb"), os.fdopen(reading, "rb")


@pytest.mark.parametrize("ends", [pipe_ends, socket.socketpair])
def test_messages_come_back_in_order_and_the_end_of_the_stream_is_none(ends):
    sender, receiver = ends()
    got = []

    def read_all():
        while (message := messages.receive(receiver)) is not None:
            got.append(message)
        got.append(None)

    reader = threading.Thread(target=read_all)
    with sender, receiver:
        reader.start()
        for message in SENT:
            messages.send(sender, message)
        messages.send(sender, {"path": Path("/a/b")}, default=str)  # what JSON has no type for, as json.dumps's default
        sender.close()
        reader.join(timeout=30)
    assert got == [*SENT, {"path": "/a/b"}, None]


def received(data: bytes, limit: int = messages.MAX_BYTES):
    sender, receiver = pipe_ends()
    with sender, receiver:
        sender.write(data)
        sender.close()
        return messages.receive(receiver, limit)


def test_a_frame_cut_short_is_an_error_that_says_so():
    whole = messages.frame({"op": "params", "params": {"a": 1}})
    with pytest.raises(messages.MessageError, match="cut short: the stream ended 2 bytes into its 4-byte length"):
        received(whole[:2])
    with pytest.raises(messages.MessageError, match=f"cut short: the stream ended after 5 of its {len(whole) - 4} bytes"):
        received(whole[:9])


def test_a_frame_over_the_limit_is_refused_before_its_body_is_read():
    with pytest.raises(messages.MessageError, match="a message of 13 bytes, over the limit of 12"):
        received(messages.HEADER.pack(13), limit=12)  # no body sent: refused on its length alone
    assert received(messages.HEADER.pack(12) + b'"abcdefghij"', limit=12) == "abcdefghij"


def test_garbage_is_an_error_not_a_message():
    with pytest.raises(messages.MessageError, match="over the limit .* no framed message at all"):
        received(b'{"op": "close"}\n')  # a JSON line: its first bytes read as an absurd length
    with pytest.raises(messages.MessageError, match="not JSON"):
        received(messages.HEADER.pack(5) + b"{oops")
    with pytest.raises(messages.MessageError, match="not JSON"):
        received(messages.HEADER.pack(2) + b"\xff\xfe")
