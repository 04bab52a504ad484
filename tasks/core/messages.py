"""Messages between the project's own processes: a 4-byte length, then that many bytes of JSON.

The stage and its MLflow companion (stages/tracking.py, over pipes) and the warm host and its callers
(stages/warm.py, over a Unix socket, descriptors passed beside the frame) speak it. A length, not a line:
a frame is read exactly, so a read never takes in part of the next message. Standard library only: the
warm host's caller loads this before it knows whether it runs warm (as tasks/core/private.py).
"""
from __future__ import annotations

import json
import socket
import struct
from typing import Any, BinaryIO, Callable

HEADER = struct.Struct("!I")  # the body's length in bytes
MAX_BYTES = 1 << 26  # far above any message sent (a long training curve is a few MB): past it the peer is broken


class MessageError(ValueError):
    """A frame cut short, over the size limit or not JSON; str(error) says which."""


def frame(message: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """`message` as one frame; `default`: as json.dumps's, for values JSON has no type for (numpy numbers)."""
    body = json.dumps(message, default=default).encode()
    return HEADER.pack(len(body)) + body


def send(connection: socket.socket | BinaryIO, message: Any, default: Callable[[Any], Any] | None = None) -> None:
    data = frame(message, default)
    if isinstance(connection, socket.socket):
        connection.sendall(data)
    else:
        connection.write(data)
        connection.flush()


def receive(connection: socket.socket | BinaryIO, limit: int = MAX_BYTES) -> Any:
    """The next message from a connected stream socket or a binary pipe; None when the stream ends between
    messages."""
    return read_message(connection.recv if isinstance(connection, socket.socket) else connection.read, limit)


def read_message(read: Callable[[int], bytes], limit: int = MAX_BYTES) -> Any:
    """The next message from `read(n)`, which returns at most n bytes and b"" at the end of the stream (for
    a reader that takes descriptors with the bytes, see stages/warm.py)."""
    header = _read_exactly(read, HEADER.size)
    if not header:
        return None
    if len(header) < HEADER.size:
        raise MessageError(f"a message cut short: the stream ended {len(header)} bytes into its {HEADER.size}-byte length")
    size, = HEADER.unpack(header)
    if size > limit:
        raise MessageError(f"a message of {size} bytes, over the limit of {limit} (or no framed message at all)")
    body = _read_exactly(read, size)
    if len(body) < size:
        raise MessageError(f"a message cut short: the stream ended after {len(body)} of its {size} bytes")
    try:
        return json.loads(body)
    except ValueError as error:  # not UTF-8, or not JSON
        raise MessageError(f"a message that is not JSON ({error}): {body[:80]!r}") from None


def _read_exactly(read: Callable[[int], bytes], size: int) -> bytes:
    """`size` bytes, fewer only where the stream ends."""
    data = bytearray()
    while len(data) < size:
        chunk = read(size - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)
