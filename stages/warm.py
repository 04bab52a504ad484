"""Run `python -m <module>` in a fork of a warm interpreter: the libraries every stage imports
(prefect, mlflow, numpy, scipy, torch, ...) are loaded once, not in each of a pipeline's stages.

A stage spends 3-5 s importing before it does any work, several times its own orchestration.
The first stage that finds no warm host starts one in the background and runs in-process;
later stages connect to it over a Unix socket, hand over their stdin/stdout/stderr, working
folder, environment, arguments and resource limits, and the host forks a child that runs the
module exactly as `python -m` would. The child imports the project's own packages fresh from the
caller's folder (none of them is loaded in the host), so an edited stage runs its new code.

This module is the caller's side and stays standard-library only (tasks/core/private.py and
messages.py are too): it is what `python -m stages` loads before it knows whether to fork or to run
here. Caller and host exchange framed JSON messages (tasks/core/messages.py), the caller's
descriptors passed with its request. The caller forwards SIGINT, SIGTERM and SIGHUP to the child
and job control (Ctrl-Z, fg) to its process group, and exits with its status; if the caller dies,
the host terminates the child; if the host dies, the kernel kills the child and the caller fails
(on_lost tells the stage's bookkeeping).

On a shared machine the host's folder, socket and files are the user's alone: the folder is
$XDG_RUNTIME_DIR/papers-warm, else $TMPDIR/papers-warm-<uid>, used only when lstat shows it is a
real folder of ours with mode 0700 (else the stage runs cold and says why); files are created
O_EXCL | O_NOFOLLOW; both ends check the other's uid (SO_PEERCRED); the host runs the warm-host
code of the checkout that started it and its key names that code's digest.

Hosts are keyed by everything fixed when a library is imported or a process starts (the
interpreter, its installed packages, the environment variables libraries read on import, the
hard resource limits, the niceness, the CPU affinity, the cgroup, the groups), so a changed
environment gets its own host; the caller's soft limits are set in each child. An idle host exits
after IDLE_EXIT_S. PAPERS_WARM=0 turns hosting off.
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
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from tasks.core import messages
from tasks.core.private import FILE_MODE, check_private, current_umask, private_folder, read_private, replace_file

IDLE_EXIT_S = 900
# Read by libraries when they are imported (not when called), so a host loaded under other values cannot serve.
IMPORT_TIME_ENV = ("PYTHON", "NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "KMP_", "TORCH_", "PYTORCH_", "CUDA_", "HF_",
                   "TRANSFORMERS_", "TOKENIZERS_", "DASK_", "PREFECT_LOGGING_", "MPL", "LANG", "LC_")
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MAX_MESSAGE = 1 << 20  # a request carries the caller's environment; more is no caller of ours
MAX_SOCKET_PATH = 108  # sun_path, with its terminating zero
LIMITS = {name: getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")}
# The warm-host code itself: a host runs the code of the checkout whose caller started it, and serves only
# callers with the same code (the host is started from that checkout's folder, see _start_host).
CHECKOUT = Path(__file__).resolve().parents[1]
HOST_CODE = (CHECKOUT / "stages" / "warm.py", CHECKOUT / "stages" / "warm_host.py", CHECKOUT / "tasks" / "core" / "private.py",
             CHECKOUT / "tasks" / "core" / "messages.py")


def enabled() -> bool:
    return os.environ.get("PAPERS_WARM", "1") != "0" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def in_warm_child() -> bool:
    """True in the process a host forked for a caller (not in its subprocesses, which have other pids)."""
    return os.environ.get("PAPERS_WARM_CHILD") == str(os.getpid())


def caller_pid() -> int:
    """The process that was started to run this module: the caller when a host forked this one, else this one."""
    return int(os.environ["PAPERS_WARM_CALLER"]) if in_warm_child() else os.getpid()


def host_folder() -> Path:
    """$XDG_RUNTIME_DIR/papers-warm (the user's own runtime folder) when set, else a per-user folder in the
    temporary folder; used only once private_folder has checked it (ours, 0700, not a symlink)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return Path(runtime) / "papers-warm"
    return Path(tempfile.gettempdir()) / f"papers-warm-{os.geteuid()}"


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
        "code": hashlib.sha256(b"".join(path.read_bytes() for path in HOST_CODE)).hexdigest(),
        "env": sorted((k, v) for k, v in environ.items() if k.startswith(IMPORT_TIME_ENV)),
        "memory_limit": resource.getrlimit(resource.RLIMIT_AS),
        # A child may lower its soft limits to the caller's (it does), never raise a hard limit above its host's.
        "hard_limits": {name: resource.getrlimit(number)[1] for name, number in sorted(LIMITS.items())},
        "nice": os.getpriority(os.PRIO_PROCESS, 0),  # a child cannot be less nice than its host without privileges
        # Read when libraries start their thread pools (torch's intra-op threads follow the affinity), and
        # what bounds the whole process tree: a child runs on the caller's cores, in the caller's cgroup.
        "affinity": sorted(os.sched_getaffinity(0)),
        "cgroup": _read("/proc/self/cgroup"),
        "groups": [os.getegid(), *sorted(os.getgroups())],
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:20]


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def current_limits() -> dict[str, tuple[int, int]]:
    """Every resource limit of this process (`ulimit -a`), which a warm child takes on."""
    return {name: resource.getrlimit(number) for name, number in LIMITS.items()}


def paths(key: str) -> dict[str, Path]:
    folder = host_folder()
    return {kind: folder / f"{key}.{kind}" for kind in ("sock", "lock", "json", "log")}


def open_private(path: Path, flags: int) -> int:
    """A descriptor of our own file at `path`, created 0600 when missing; never through a symlink."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        check_private(path, kind="file")
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC)


def peer_uid(connection: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket, as the kernel says (SO_PEERCRED)."""
    pid, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def send_with_fds(connection: socket.socket, message: dict, fds: list[int]) -> None:
    """One framed message with descriptors passed beside it (SCM_RIGHTS, carried by its first bytes)."""
    data = messages.frame(message)
    sent = socket.send_fds(connection, [data], fds)
    connection.sendall(data[sent:])


def receive_with_fds(connection: socket.socket, max_fds: int) -> tuple[dict | None, list[int]]:
    """One framed message (None at the end of the stream) and the descriptors that came with it; when the
    frame is bad (messages.MessageError) or the read fails, those descriptors are closed again."""
    fds: list[int] = []

    def read(size: int) -> bytes:
        data, received, _, _ = socket.recv_fds(connection, size, max_fds)
        fds.extend(received)
        return data

    try:
        return messages.read_message(read, MAX_MESSAGE), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# Started from the caller's checkout (its warm-host code, which the key names), without the interpreter's usual
# first sys.path entry (-P): the host imports nothing from the folder it starts in.
HOST_PROGRAM = "import sys; sys.path.insert(0, sys.argv[1]); from stages.warm_host import main; sys.exit(main(sys.argv[2:]))"


def open_lock(key: str) -> int:
    return open_private(paths(key)["lock"], os.O_RDWR)


def _start_host(key: str) -> None:
    """Start a host for `key` in the background unless one is starting (it holds the lock while alive)."""
    lock = open_lock(key)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # a host holds it: starting or serving
    finally:
        os.close(lock)
    log = open_private(paths(key)["log"], os.O_WRONLY | os.O_APPEND)
    try:
        subprocess.Popen([sys.executable, "-P", "-c", HOST_PROGRAM, str(CHECKOUT), key], cwd="/",
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
    finally:
        os.close(log)


def _connect(key: str) -> socket.socket | None:
    """A connection to the host of `key`, once the kernel shows that it runs as this user (a socket of
    another account would receive the caller's environment, tokens included, and its terminal)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(paths(key)["sock"]))
    except OSError:
        connection.close()
        return None
    pid, uid = peer_uid(connection)
    if uid != os.geteuid():
        connection.close()
        warn(f"the warm host socket {paths(key)['sock']} is served by uid {uid} (pid {pid}), not by this user: "
             "refused; running in a fresh interpreter")
        return None
    return connection


def run_in_host(module: str, args: list[str], fds: tuple[int, ...] = (0, 1, 2), spawn: dict | None = None,
                on_lost: Callable[[int], None] | None = None) -> int | None:
    """Run `python -m module *args` in a fork of the warm host; its exit status, or None when no host
    serves (one is then started for the next caller, and this one should run in-process).

    fds: this process's descriptors the child gets under the same numbers; spawn: instead of a module,
    multiprocessing's spawn_main(**spawn) (a pool worker, see spawn_launcher); on_lost(child pid): called
    once the child is gone when the host ended under it (the child dies with its host)."""
    if not enabled() or in_warm_child():
        return None
    key = host_key()
    try:
        private_folder(host_folder())
        if len(os.fsencode(paths(key)["sock"])) >= MAX_SOCKET_PATH:
            raise OSError(f"its socket path {paths(key)['sock']} is longer than a Unix socket's limit "
                          f"({MAX_SOCKET_PATH - 1} bytes); set XDG_RUNTIME_DIR or TMPDIR to a shorter folder")
    except OSError as unsafe:
        warn(f"warm host off: {unsafe}; running in a fresh interpreter")
        return None
    connection = _connect(key)
    if connection is None:
        _start_host(key)
        return None
    with connection:
        request = {"module": module, "args": list(args), "cwd": os.getcwd(), "env": dict(os.environ), "pid": os.getpid(),
                   "umask": current_umask(), "fds": list(fds), "spawn": spawn, "limits": current_limits()}
        try:
            send_with_fds(connection, request, list(fds))
            started = messages.receive(connection, MAX_MESSAGE)
        except OSError:
            return None  # the host went away before it forked: nothing ran yet
        if started is None or "pid" not in started:
            return None
        child = started["pid"]
        previous = forward_signals(child)
        try:
            ended = messages.receive(connection, MAX_MESSAGE)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if ended is None:
        print(f"error: the warm host ended while running `python -m {module}` (pid {child}), which ended with it; "
              f"the host's log: {paths(key)['log']}", file=sys.stderr, flush=True)
        if on_lost is not None:
            wait_gone(child)
            on_lost(child)
        return 1
    return int(ended["exit"])


def forward_signals(child: int) -> dict:
    """Pass SIGINT, SIGTERM and SIGHUP on to the child, and job control to its process group: Ctrl-Z stops
    the child's work with the caller, `fg`/`bg` resumes it. Returns the handlers to put back."""
    def suspend(signum, frame) -> None:
        _forward(child, signal.SIGTSTP, group=True)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stops here, as the default action would, until SIGCONT
        signal.signal(signal.SIGTSTP, suspend)
        _forward(child, signal.SIGCONT, group=True)

    previous = {signum: signal.signal(signum, lambda signum, frame: _forward(child, signum)) for signum in FORWARDED_SIGNALS}
    previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
    previous[signal.SIGCONT] = signal.signal(signal.SIGCONT, lambda signum, frame: _forward(child, signum, group=True))
    return previous


def _forward(pid: int, signum: int, group: bool = False) -> None:
    """The signal to the child (or its process group: it leads one, see warm_host.become_caller)."""
    try:
        os.killpg(pid, signum) if group else os.kill(pid, signum)
    except ProcessLookupError:
        pass


def wait_gone(pid: int, timeout: float = 10.0) -> None:
    """Until process `pid` has ended (the kernel kills a warm child with its host: warm_host.die_with_host)."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


SPAWN_ARGUMENT = re.compile(r"(tracker_fd|pipe_handle)=(\d+)")


def launcher_path(key: str) -> Path:
    return host_folder() / f"{key}.spawn"


def write_spawn_launcher(key: str) -> Path:
    """The executable multiprocessing's spawn start method runs in a host's children (multiprocessing.set_executable):
    a pool worker then starts as a fork of the host, not as a fresh interpreter. It runs under -P, so its own
    folder is not on sys.path, and imports the warm-host code of the host's checkout."""
    path = launcher_path(key)
    replace_file(path, f"#!{sys.executable} -P\nimport sys\nsys.path.insert(0, {str(CHECKOUT)!r})\n"
                       "from stages.warm import spawn_launcher\nsys.exit(spawn_launcher(sys.argv[1:]))\n".encode(), mode=0o700)
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
    """Stop every warm host of this interpreter (`papers server stop`); how many were running. The pid to stop is
    the one the kernel gives for the process serving a socket of ours (SO_PEERCRED), never one read from a file."""
    try:
        check_private(host_folder())
    except OSError:
        return 0  # no folder, or not ours: no host of ours can serve from it
    stopped = 0
    for socket_path in host_folder().glob("*.sock"):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(str(socket_path))
            pid, uid = peer_uid(connection)
            facts = json.loads(read_private(socket_path.with_suffix(".json")))
        except (OSError, ValueError):
            continue
        finally:
            connection.close()
        if uid == os.geteuid() and facts.get("pid") == pid and facts.get("interpreter") == interpreter():
            os.kill(pid, signal.SIGTERM)
            stopped += 1
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
