"""Run `python -m <module>` in a fork of a warm interpreter: the libraries every stage imports
(prefect, mlflow, numpy, scipy, torch, ...) are loaded once, not in each of a pipeline's stages.

A stage spends 3-5 s importing before it does any work, several times its own orchestration.
The first stage that finds no warm host starts one in the background and runs in-process;
later stages connect to it over a Unix socket, hand over their stdin/stdout/stderr, working
folder, environment and arguments, and the host forks a child that runs the module exactly as
`python -m` would. The child imports the project's own packages fresh from the caller's folder
(none of them is loaded in the host), so an edited stage runs its new code.

This module is the caller's side and stays standard-library only: it is what `python -m
stages` loads before it knows whether to fork or to run here. The caller forwards SIGINT,
SIGTERM and SIGHUP to the child and exits with its status; if the caller dies, the host
terminates the child. Hosts are keyed by everything fixed when a library is imported (the
interpreter, its installed packages, the environment variables libraries read on import, the
memory limit, the niceness), so a changed environment gets its own host and an idle host exits after
IDLE_EXIT_S. PAPERS_WARM=0 turns hosting off.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

IDLE_EXIT_S = 900
# Read by libraries when they are imported (not when called), so a host loaded under other values cannot serve.
IMPORT_TIME_ENV = ("PYTHON", "NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "KMP_", "TORCH_", "CUDA_", "PREFECT_LOGGING_",
                   "MPLBACKEND", "LANG", "LC_")
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MAX_MESSAGE = 1 << 20


def enabled() -> bool:
    return os.environ.get("PAPERS_WARM", "1") != "0" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def in_warm_child() -> bool:
    """True in the process a host forked for a caller (not in its subprocesses, which have other pids)."""
    return os.environ.get("PAPERS_WARM_CHILD") == str(os.getpid())


def caller_pid() -> int:
    """The process that was started to run this module: the caller when a host forked this one, else this one."""
    return int(os.environ["PAPERS_WARM_CALLER"]) if in_warm_child() else os.getpid()


def host_folder() -> Path:
    return Path(tempfile.gettempdir()) / f"papers-warm-{os.getuid()}"


def interpreter() -> list[str]:
    """This environment's interpreter: `python` and `python3.11` of one venv are the same one."""
    return [sys.prefix, os.path.realpath(sys.executable)]


def host_key(environ: dict | None = None) -> str:
    """What a host must share with a caller to serve it (see the module docstring); `environ`: the
    environment to key (default: this process's)."""
    environ = os.environ if environ is None else environ
    packages = Path(sysconfig.get_paths()["purelib"])
    facts = {
        "interpreter": interpreter(),
        "packages": packages.stat().st_mtime_ns if packages.exists() else 0,
        "env": sorted((k, v) for k, v in environ.items() if k.startswith(IMPORT_TIME_ENV)),
        "memory_limit": resource.getrlimit(resource.RLIMIT_AS),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),  # a child cannot be less nice than its host without privileges
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:20]


def paths(key: str) -> dict[str, Path]:
    folder = host_folder()
    return {kind: folder / f"{key}.{kind}" for kind in ("sock", "lock", "json", "log")}


def send_message(connection: socket.socket, message: dict, fds: list[int] = ()) -> None:
    data = json.dumps(message).encode() + b"\n"
    if fds:
        socket.send_fds(connection, [data], list(fds))
    else:
        connection.sendall(data)


def receive_message(connection: socket.socket, buffer: bytearray, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One newline-terminated JSON message (None at end of stream) and any descriptors sent with it."""
    fds: list[int] = []
    while b"\n" not in buffer:
        if max_fds:
            data, received, _, _ = socket.recv_fds(connection, 65536, max_fds)
            fds.extend(received)
        else:
            data = connection.recv(65536)
        if not data:
            return None, fds
        buffer.extend(data)
        if len(buffer) > MAX_MESSAGE:
            raise ValueError("message too long")
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line), fds


def _start_host(key: str) -> None:
    """Start a host for `key` in the background unless one is starting (it holds the lock while alive)."""
    where = paths(key)
    where["lock"].parent.mkdir(mode=0o700, exist_ok=True)
    with open(where["lock"], "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a host holds it: starting or serving
        fcntl.flock(lock, fcntl.LOCK_UN)
    with open(where["log"], "ab") as log:
        subprocess.Popen([sys.executable, "-m", "stages.warm_host", key], cwd="/", stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, start_new_session=True, close_fds=True)


def _connect(key: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(paths(key)["sock"]))
        return connection
    except OSError:
        connection.close()
        return None


def run_in_host(module: str, args: list[str], fds: tuple[int, ...] = (0, 1, 2), spawn: dict | None = None) -> int | None:
    """Run `python -m module *args` in a fork of the warm host; its exit status, or None when no host
    serves (one is then started for the next caller, and this one should run in-process).

    fds: this process's descriptors the child gets under the same numbers; spawn: instead of a module,
    multiprocessing's spawn_main(**spawn) (a pool worker, see spawn_launcher)."""
    if not enabled() or in_warm_child():
        return None
    key = host_key()
    connection = _connect(key)
    if connection is None:
        _start_host(key)
        return None
    with connection:
        request = {"module": module, "args": list(args), "cwd": os.getcwd(), "env": dict(os.environ), "pid": os.getpid(),
                   "umask": _umask(), "fds": list(fds), "spawn": spawn}
        try:
            send_message(connection, request, fds=list(fds))
            buffer = bytearray()
            started, _ = receive_message(connection, buffer)
        except OSError:
            return None  # the host went away before it forked: nothing ran yet
        if started is None or "pid" not in started:
            return None
        child = started["pid"]
        previous = {signum: signal.signal(signum, lambda signum, frame: _forward(child, signum)) for signum in FORWARDED_SIGNALS}
        try:
            ended, _ = receive_message(connection, buffer)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if ended is None:
        print(f"error: the warm host ended while running `python -m {module}` (pid {child}); "
              f"its log: {paths(key)['log']}", file=sys.stderr)
        return 1
    return int(ended["exit"])


def _forward(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


SPAWN_ARGUMENT = re.compile(r"(tracker_fd|pipe_handle)=(\d+)")


def launcher_path(key: str) -> Path:
    return host_folder() / f"{key}.spawn"


def write_spawn_launcher(key: str) -> Path:
    """The executable multiprocessing's spawn start method runs in a host's children (multiprocessing.set_executable):
    a pool worker then starts as a fork of the host, not as a fresh interpreter."""
    path = launcher_path(key)
    staged = path.with_suffix(f".spawn.{os.getpid()}")
    staged.write_text(f"#!{sys.executable}\nimport sys\nfrom stages.warm import spawn_launcher\n"
                      "sys.exit(spawn_launcher(sys.argv[1:]))\n")
    staged.chmod(0o700)
    os.replace(staged, path)
    return path


def spawn_launcher(argv: list[str]) -> int:
    """multiprocessing spawns `LAUNCHER [opts] -c 'from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=N,
    pipe_handle=M)' --multiprocessing-fork` with descriptors N and M open: run that worker in a fork of the warm host,
    handing it every descriptor it inherited (N, M and the pool's pipes), or, with no host, as the plain interpreter would. The launcher lives as long as the worker
    and ends when its own parent (the stage) is gone, which makes the host stop the worker."""
    program = argv[argv.index("-c") + 1] if "-c" in argv else ""
    spawn = {name: int(value) for name, value in SPAWN_ARGUMENT.findall(program)}
    if set(spawn) == {"tracker_fd", "pipe_handle"} and Path("/proc/self/fd").is_dir():
        parent = os.getppid()

        def end_with_parent() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=end_with_parent, name="end-with-parent", daemon=True).start()
        code = run_in_host("", ["--multiprocessing-fork"], fds=inherited_descriptors(), spawn=spawn)
        if code is not None:
            return code
    os.execv(sys.executable, [sys.executable, *argv])


def inherited_descriptors() -> tuple[int, ...]:
    """Every descriptor open in this process: a spawned worker finds its pipes under the numbers it was given."""
    listed = [int(name) for name in os.listdir("/proc/self/fd")]
    open_now = []
    for fd in listed:  # the listing's own descriptor is closed again by now
        try:
            fcntl.fcntl(fd, fcntl.F_GETFD)
            open_now.append(fd)
        except OSError:
            pass
    return tuple(sorted(open_now))


def stop_hosts() -> int:
    """Stop every warm host of this interpreter (`papers server stop`); how many were running."""
    stopped = 0
    for record in host_folder().glob("*.json"):
        try:
            facts = json.loads(record.read_text())
            if facts.get("interpreter") == interpreter():
                os.kill(int(facts["pid"]), signal.SIGTERM)
                stopped += 1
        except (OSError, ValueError, KeyError):
            continue
    return stopped


def main(argv: list[str]) -> int:
    """`python -m stages.warm MODULE [ARGS...]`: run a module warm when a host serves, here otherwise."""
    if not argv:
        print("usage: python -m stages.warm MODULE [ARGS...]", file=sys.stderr)
        return 2
    code = run_in_host(argv[0], argv[1:])
    if code is not None:
        return code
    import runpy

    sys.argv = [argv[0], *argv[1:]]
    try:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        return exit_code(exit_.code)
    return 0


def exit_code(code) -> int:
    """The status an interpreter exits with for SystemExit(code): None 0, an int itself, else 1 (the text printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
