"""A user's black-box function named `MODULE:FUNCTION` (as scipy.optimize users write one), imported at the door:
every fault is an InputError naming the reference, never a traceback.

The function runs contained, in a child process forked for it: the child imports MODULE (from the working directory
first, as `python -m` would) and answers each call over a socket pair. A crash of the user's code, in a C extension
(a segfault) or by os._exit, ends the child only; the command then stops with one line, "FUNCTION 'mod:f': the
objective crashed (signal SIGSEGV)", instead of dying with the signal. A call costs a round trip (30-150 us
measured on 2 busy cores, against ~1 us in process); a large array argument travels through memory the two
processes share, not through the socket.
"""
from __future__ import annotations

import faulthandler
import importlib
import mmap
import multiprocessing.connection
import os
import pickle
import signal
import socket
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError

SHARED_FROM_BYTES = 64 * 2**10  # an array argument this large goes through the shared memory


class UserFunctionError(Exception):
    """Base of what a contained function raised: the parent sees an exception of the same name and message (the
    callers say "raised ValueError: ..."), not the user's own class, which may not exist or pickle here."""


@dataclass(frozen=True)
class Unsendable:
    """A value the user's function returned that cannot travel back (no pickle): its repr, for the message."""
    text: str

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class _Shared:
    """An array argument left in the shared memory at `offset`."""
    offset: int
    shape: tuple[int, ...]
    dtype: str


_RAISED: dict[str, type[UserFunctionError]] = {}
_OPEN: weakref.WeakSet[UserFunction] = weakref.WeakSet()  # closed in every child forked after them


def load_function(reference: str) -> UserFunction:
    """FUNCTION of MODULE, imported in a child process (a dotted name reaches into a class or namespace:
    `mymodule:Problems.rosenbrock`), as a callable that runs it there."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise InputError(f"FUNCTION {reference!r}: expected MODULE:FUNCTION, e.g. mymodule:objective")
    function = UserFunction(reference)
    kind, payload = function.receive(f"importing {module_name}")
    if kind == "refused":
        function.close()
        raise InputError(payload)
    function.__name__ = payload
    return function


class UserFunction:
    """The user's function in its child: `f(*args)` sends the arguments and returns its value, or raises what it
    raised (a UserFunctionError of the same name), or an InputError when the child is gone (its crash)."""

    def __init__(self, reference: str):
        self.reference, self.__name__ = reference, reference.partition(":")[2]
        ours, theirs = socket.socketpair()
        self._memory = _Memory()
        for stream in (sys.stdout, sys.stderr):  # else the child would write out this process's buffered output too
            stream.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            ours.close()
            _serve(reference, multiprocessing.connection.Connection(theirs.detach()), self._memory)
        theirs.close()
        self._connection = multiprocessing.connection.Connection(ours.detach())
        self._closed = weakref.finalize(self, _stop, self.pid, self._connection, self._memory)
        _OPEN.add(self)

    def __call__(self, *args):
        try:
            self._connection.send(self._memory.put(args))
        except OSError:  # the child is gone (a broken pipe)
            raise self._crashed("the objective") from None
        kind, payload = self.receive("the objective")
        if kind == "raised":
            raise _raised(*payload)
        return payload

    def receive(self, doing: str) -> tuple[str, object]:
        """The child's next answer (kind, payload); an InputError naming how it ended when it ended instead."""
        try:
            return self._connection.recv()
        except (EOFError, OSError):
            raise self._crashed(doing) from None

    def _crashed(self, doing: str) -> InputError:
        _, status = os.waitpid(self.pid, 0)
        self._closed.detach()
        self._connection.close()
        self._memory.close()
        if os.WIFSIGNALED(status):
            how = f"crashed (signal {signal.Signals(os.WTERMSIG(status)).name})"
        else:
            how = f"ended its process (exit status {os.waitstatus_to_exitcode(status)})"
        return InputError(f"FUNCTION {self.reference!r}: {doing} {how}")

    def close(self) -> None:
        """End the child (done by the garbage collector or at exit otherwise)."""
        self._closed()


class _Memory:
    """A memory file both processes map (it was opened before the fork): the parent writes the large array arguments
    of a call into it, the child copies them out; it grows with the largest call."""

    def __init__(self):
        self.fd = os.memfd_create("user-function-arguments") if hasattr(os, "memfd_create") else None
        self.map: mmap.mmap | None = None

    def _mapped(self, size: int) -> mmap.mmap:
        if self.map is None or len(self.map) < size:
            if self.map is not None:
                self.map.close()
            if os.fstat(self.fd).st_size < size:
                os.ftruncate(self.fd, size)
            self.map = mmap.mmap(self.fd, size)
        return self.map

    def put(self, args: tuple) -> tuple:
        """`args` with each large array replaced by where it lies in the memory (the parent's side)."""
        large = [isinstance(a, np.ndarray) and a.nbytes >= SHARED_FROM_BYTES and a.dtype.kind in "biufc" for a in args]
        if self.fd is None or not any(large):
            return args
        size = sum(a.nbytes for a, big in zip(args, large) if big)
        memory, offset, sent = self._mapped(size), 0, []
        for arg, big in zip(args, large):
            if big:
                np.frombuffer(memory, arg.dtype, arg.size, offset).reshape(arg.shape)[...] = arg
                arg, offset = _Shared(offset, arg.shape, arg.dtype.str), offset + arg.nbytes
            sent.append(arg)
        return tuple(sent)

    def take(self, args: tuple) -> tuple:
        """The arguments as the parent passed them, copies of the shared ones (the child's side)."""
        if not any(isinstance(a, _Shared) for a in args):
            return args
        memory = self._mapped(max(a.offset + int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize
                                  for a in args if isinstance(a, _Shared)))
        return tuple(np.frombuffer(memory, a.dtype, int(np.prod(a.shape)), a.offset).reshape(a.shape).copy()
                     if isinstance(a, _Shared) else a for a in args)

    def close(self) -> None:
        if self.map is not None:
            self.map.close()
            self.map = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _stop(pid: int, connection: multiprocessing.connection.Connection, memory: _Memory) -> None:
    connection.close()
    memory.close()
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _raised(name: str, message: str) -> UserFunctionError:
    if name not in _RAISED:
        _RAISED[name] = type(name, (UserFunctionError,), {"__module__": "user function"})
    return _RAISED[name](message)


def _serve(reference: str, connection: multiprocessing.connection.Connection, memory: _Memory) -> None:
    """The child: import the function, answer ("ready", its name) or ("refused", the message), then one answer per
    call, ("value", v) or ("raised", (type name, message)), until the parent is gone; then exit without the parent's
    exit handlers."""
    for other in list(_OPEN):  # the parent's ends of earlier children: theirs to close, not this child's to hold
        other._connection.close()
        other._memory.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it then closes this child
    faulthandler.disable()  # a crash is the parent's one line, not a dump of this process's stack as well
    try:
        try:
            function = _import(reference)
        except InputError as error:
            connection.send(("refused", str(error)))
            return
        connection.send(("ready", getattr(function, "__name__", reference.partition(":")[2])))
        while True:
            try:
                args = memory.take(connection.recv())
            except (EOFError, OSError):
                return
            try:
                answer = ("value", function(*args))
            except BaseException as error:  # noqa: BLE001 - SystemExit included: reported, the child goes on
                answer = ("raised", (type(error).__name__, str(error)))
            try:
                connection.send(answer)
            except (TypeError, AttributeError, ValueError, RecursionError, pickle.PicklingError):  # no pickle
                connection.send(("value", Unsendable(repr(answer[1])[:60])))
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)


def _import(reference: str) -> Callable:
    """Import MODULE (the working directory first on the path) and return its callable FUNCTION."""
    module_name, _, attribute = reference.partition(":")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise InputError(f"FUNCTION {reference!r}: no module named {error.name!r}") from None
    except BaseException as error:  # the user's module ran and failed while importing (sys.exit included)
        raise InputError(f"FUNCTION {reference!r}: importing {module_name} raised {type(error).__name__}: {error}") from None
    function = module
    for part in attribute.split("."):
        if not hasattr(function, part):
            raise InputError(f"FUNCTION {reference!r}: module {module_name} has no attribute {attribute!r}")
        function = getattr(function, part)
    if not callable(function):
        raise InputError(f"FUNCTION {reference!r}: {attribute} is a {type(function).__name__}, not callable")
    return function
