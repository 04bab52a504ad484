"""The warm host: load the libraries once, then fork one child per caller (see stages/warm.py).

`python -m stages.warm_host KEY` is started by the first caller that finds no host for KEY. It
holds KEY's lock for its lifetime (so only one starts), serves on KEY's socket, and exits after
IDLE_EXIT_S without callers, on SIGTERM (`papers server stop`), or once the installed packages
change (a newer host then serves). It never loads the project's own packages, and it stays one
thread (a fork copies only the calling thread).
"""
from __future__ import annotations

import atexit
import ctypes
import fcntl
import importlib
import json
import multiprocessing
import os
import random
import resource
import runpy
import selectors
import signal
import socket
import sys
import threading
import time
import traceback

from tasks.core import messages
from tasks.core.private import private_folder, replace_file

from .warm import (CHECKOUT, IDLE_EXIT_S, LIMITS, exit_code, host_folder, host_key, interpreter, launcher_path, open_lock,
                   paths, peer_uid, receive_with_fds, write_spawn_launcher)

# The third-party modules the task library imports (libraries missing from this environment are skipped).
PRELOAD = ("numpy", "scipy.sparse", "scipy.sparse.linalg", "scipy.sparse.csgraph", "scipy.spatial",
           "scipy.spatial.transform", "scipy.optimize", "scipy.interpolate", "scipy.stats", "pandas",
           "matplotlib.pyplot", "yaml", "pydantic", "psutil", "rich.console", "rich.table", "typer", "threadpoolctl",
           "networkx", "sklearn.metrics", "sklearn.model_selection", "sklearn.ensemble", "sklearn.datasets",
           "sklearn.linear_model", "torch", "torch.nn.functional", "lion_pytorch", "numba", "trimesh", "shapely",
           "pyscipopt", "qiskit", "prefect", "prefect.flow_engine", "prefect.task_engine", "prefect.futures",
           "prefect.task_runners", "prefect.cache_policies", "prefect.client.orchestration", "prefect_dask",
           "mlflow", "mlflow.tracking", "mlflow.entities", "mlflow.utils.mlflow_tags", "cma", "cvxpy", "ot", "pymanopt",
           "transformers", "peft", "setproctitle",
           "torch._dynamo")  # a torch optimizer's first step imports it (and sympy): 4-6 s per stage otherwise
PROJECT_PACKAGES = ("tasks", "flows", "stages", "benchmarks", "tests")
TICK_S = 0.2
MAX_FDS = 64  # stdin, stdout, stderr and what a spawned pool worker inherits
KILL_AFTER_S = 10.0  # a child whose caller died gets SIGTERM, then SIGKILL this much later


def preload() -> None:
    import matplotlib

    matplotlib.use("Agg")  # what a stage without a display gets; chosen before pyplot loads
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - a library that cannot load is the stage's problem, not the host's
            print(f"warm host: not preloaded {name}: {error}", file=sys.stderr, flush=True)


def forget_project_modules() -> None:
    """Drop the project's packages from sys.modules so the caller's own copy is imported."""
    for name in list(sys.modules):
        if name.split(".")[0] in PROJECT_PACKAGES:
            del sys.modules[name]
    importlib.invalidate_caches()


class Host:
    def __init__(self, key: str, environ: dict, lock):
        self.key, self.where, self.lock = key, paths(key), lock
        self.environ = environ  # as the host started: libraries may add variables while they load
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, socket.socket] = {}   # child pid -> its caller's connection
        self.orphans: dict[int, float] = {}             # child pid -> when its caller went away
        self.stopping = False
        self.last_active = time.monotonic()
        self.listener: socket.socket | None = None

    def serve(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        staged = self.where["sock"].with_suffix(f".sock.{os.getpid()}")
        staged.unlink(missing_ok=True)
        listener.bind(str(staged))
        os.chmod(staged, 0o600)
        listener.listen(64)
        os.replace(staged, self.where["sock"])  # callers see the socket only once it listens
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ)
        replace_file(self.where["json"], json.dumps({"pid": os.getpid(), "interpreter": interpreter(), "key": self.key,
                                                     "checkout": str(CHECKOUT)}).encode())
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        try:
            while not (self.stopping and not self.children):
                for event, _ in self.selector.select(TICK_S):
                    if event.fileobj is listener:
                        self.accept()
                    else:
                        self.caller_spoke(event.fileobj)
                self.reap()
                self.check_retirement()
        finally:
            self.retire()

    def check_retirement(self) -> None:
        idle = not self.children and time.monotonic() - self.last_active > IDLE_EXIT_S
        if idle or host_key(self.environ) != self.key:
            self.stopping = True
        if self.stopping:
            self.retire()

    def retire(self) -> None:
        """Stop taking callers (the socket goes), finish the running children."""
        if self.listener is not None:
            self.selector.unregister(self.listener)
            self.listener.close()
            self.listener = None
            for kind in ("sock", "json"):
                self.where[kind].unlink(missing_ok=True)
            fcntl.flock(self.lock, fcntl.LOCK_UN)  # a new host may start while this one finishes its children

    def accept(self) -> None:
        connection, _ = self.listener.accept()
        self.last_active = time.monotonic()
        pid, uid = peer_uid(connection)
        if uid != os.geteuid():  # the folder keeps others out; this holds even where it does not
            print(f"warm host: refused a caller of uid {uid} (pid {pid})", file=sys.stderr, flush=True)
            connection.close()
            return
        connection.settimeout(5)
        try:
            request, fds = receive_with_fds(connection, MAX_FDS)
        except (OSError, ValueError):
            connection.close()
            return
        if request is None or len(fds) != len(request.get("fds", ())) or len(fds) < 3:
            for fd in fds:
                os.close(fd)
            connection.close()
            return
        host = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                die_with_host(host)
                self.close_in_child()
                code = become_caller(request, fds, connection, self.key)
            except BaseException:  # noqa: BLE001 - whatever happens, the child must not return into the host loop
                traceback.print_exc()
                code = 1
            os._exit(code)
        for fd in fds:
            os.close(fd)
        connection.settimeout(None)
        try:
            messages.send(connection, {"pid": pid})
        except OSError:
            pass  # the caller is gone already: the next select sees it and stops the child
        self.children[pid] = connection
        self.selector.register(connection, selectors.EVENT_READ)

    def close_in_child(self) -> None:
        """A child keeps nothing of the host's: not its listener, lock or selector, nor other callers' connections."""
        for connection in self.children.values():
            connection.close()
        self.listener.close()
        self.selector.close()
        os.close(self.lock)

    def caller_spoke(self, connection: socket.socket) -> None:
        """A caller says nothing after its request, so readable means it went away: stop its child."""
        try:
            data = connection.recv(4096)
        except OSError:
            data = b""
        if data:
            return
        self.selector.unregister(connection)
        for pid, owner in self.children.items():
            if owner is connection and pid not in self.orphans:
                self.orphans[pid] = time.monotonic()
                _signal(pid, signal.SIGTERM)

    def reap(self) -> None:
        now = time.monotonic()
        for pid, since in list(self.orphans.items()):
            if now - since > KILL_AFTER_S:
                _signal(pid, signal.SIGKILL)
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            connection = self.children.pop(pid, None)
            self.orphans.pop(pid, None)
            self.last_active = now
            if connection is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            try:
                messages.send(connection, {"exit": code if code >= 0 else 128 - code})
            except OSError:
                pass
            if _registered(self.selector, connection):
                self.selector.unregister(connection)
            connection.close()


def _registered(selector: selectors.BaseSelector, connection: socket.socket) -> bool:
    try:
        selector.get_key(connection)
        return True
    except KeyError:
        return False


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def become_caller(request: dict, fds: list[int], connection: socket.socket, key: str) -> int:
    """In the forked child: take on the caller's descriptors, folder, environment and arguments, run
    the module as `python -m` would, and end the way an interpreter ends (threads joined, atexit run)."""
    connection.close()
    os.setpgid(0, 0)  # its own process group, which the caller stops and continues as a whole (Ctrl-Z)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGTSTP, signal.SIGCONT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    take_descriptors(fds, request["fds"])
    take_limits(request["limits"])
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["PAPERS_WARM_CHILD"] = str(os.getpid())
    os.environ["PAPERS_WARM_CALLER"] = str(request["pid"])
    name_after(request)
    sys.stdout.reconfigure(line_buffering=os.isatty(1))
    forget_project_modules()
    sys.path[0] = request["cwd"]  # as `python -m` from the caller's folder
    if "prefect.context" in sys.modules:  # Prefect reads its settings on import; these are the caller's
        sys.modules["prefect.context"].refresh_global_settings_context()
    reseed()
    multiprocessing.set_executable(str(launcher_path(key)))  # pool workers start as forks too
    sys.argv = ["-c" if request.get("spawn") else "-m", *request["args"]]  # as the interpreter sets them
    code = 0
    try:
        if request.get("spawn"):
            from multiprocessing.spawn import spawn_main

            spawn_main(**request["spawn"])
        else:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        code = exit_code(exit_.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:  # noqa: BLE001 - reported as the interpreter would, with the same status
        traceback.print_exc()
        code = 1
    threading._shutdown()  # noqa: SLF001 - what interpreter exit does first: join non-daemon threads
    atexit._run_exitfuncs()  # noqa: SLF001
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


def die_with_host(host: int) -> None:
    """The kernel kills this child when the host ends (PR_SET_PDEATHSIG): a child running on without its
    host would finish a stage DVC has already recorded as failed."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != host:  # the host ended before the request took effect
        os._exit(1)


PR_SET_PDEATHSIG = 1


def take_limits(limits: dict[str, list[int]]) -> None:
    """The caller's resource limits (`ulimit -f`, `-t`, `-n`, ...): soft and hard, never above the host's hard
    limits, which the host key makes equal to the caller's."""
    for name, (soft, hard) in limits.items():
        if name in LIMITS:
            resource.setrlimit(LIMITS[name], (soft, hard))


def raise_soft_limits() -> None:
    """The host's soft limits up to its hard ones: it must outlive a first caller's `ulimit -S -t` and park
    descriptors above a low `ulimit -S -n`; each child then takes its own caller's (take_limits). The memory
    limit stays: libraries size themselves by it on import, so it is part of the key as it is."""
    for name, number in LIMITS.items():
        if name != "RLIMIT_AS":
            soft, hard = resource.getrlimit(number)
            if soft != hard:
                resource.setrlimit(number, (hard, hard))


def reseed() -> None:
    """Fresh global RNG states, as a new interpreter has: a fork would otherwise share the host's."""
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()


def name_after(request: dict) -> None:
    """`ps` shows the child as the command it runs (`python -m stages <paper> solve`), marked warm."""
    if "setproctitle" not in sys.modules:
        return
    command = "python (pool worker)" if request.get("spawn") else f"python -m {request['module']}"
    sys.modules["setproctitle"].setproctitle(" ".join([command, *request["args"], f"[warm, caller {request['pid']}]"]))


def take_descriptors(received: list[int], targets: list[int]) -> None:
    """Give each received descriptor its number in the caller (first out of the way: a target may be
    another received descriptor's current number)."""
    parked = [fcntl.fcntl(fd, fcntl.F_DUPFD, PARKED_FROM) for fd in received]
    for fd in received:
        os.close(fd)
    for fd, target in zip(parked, targets):
        os.dup2(fd, target)
        os.close(fd)


PARKED_FROM = 512


def main(argv: list[str]) -> int:
    key = argv[0]
    try:
        private_folder(host_folder())
    except OSError as unsafe:
        print(f"warm host: not started: {unsafe}", file=sys.stderr, flush=True)
        return 1
    lock = open_lock(key)  # held, not closed, for the host's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another host for this key is starting or serving
    raise_soft_limits()
    environ = dict(os.environ)
    if host_key(environ) != key:
        print("warm host: not started: this environment or warm-host code is not the caller's", file=sys.stderr, flush=True)
        return 0
    write_spawn_launcher(key)
    forget_project_modules()
    preload()
    if "setproctitle" in sys.modules:
        sys.modules["setproctitle"].setproctitle(f"python -m stages.warm_host {key} [warm host of {CHECKOUT}]")
    Host(key, environ, lock).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
