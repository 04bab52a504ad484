"""The project's image: build it with podman, run commands in it with buildah (`make image`, docs/containers.md).

    python3 -m stages.container base     a python3.11 base from Debian's mirror, for machines without a registry
    python3 -m stages.container build    build localhost/papers:cpu (or :cu128 with --torch cu128); time and size
    python3 -m stages.container run -- COMMAND...
                                         COMMAND in a fresh container of the image, removed afterwards

`run` needs no OCI runtime (`buildah run --isolation chroot`): it is how a Prefect process worker runs a flow inside
the image on machines whose runtime refuses `podman run` (prefect.yaml's `*-pipeline-image` deployments).
Standard library only, so the system python3 runs it from a checkout without the project's environment.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from tasks.core.private import create_file
from tasks.core.provenance import copy_project_files, git_commit, git_dirty

ROOT = Path(__file__).resolve().parents[1]
OFFICIAL_BASE = "docker.io/library/python:3.11.7-slim-bookworm"
LOCAL_BASE = "localhost/papers-base:bookworm"
REGISTRY_PROBE = "https://registry-1.docker.io/v2/"
TORCH_INDEX = "https://download.pytorch.org/whl/{torch}"
# Debian's python3 is 3.11 in bookworm; venv makes the image's environment, git and make come in the Dockerfile.
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
PROBE_TIMEOUT_S = 5


def image_name(torch: str) -> str:
    return f"localhost/papers:{torch}"


def answers(url: str) -> bool:
    """True when `url` gives any HTTP answer (a registry's 401 included) within PROBE_TIMEOUT_S."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=PROBE_TIMEOUT_S)
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False
    return True


def image_exists(image: str) -> bool:
    return subprocess.run(["podman", "image", "exists", image], capture_output=True).returncode == 0


def build_base(tag: str = LOCAL_BASE) -> str:
    """Debian bookworm (minbase + python3) from Debian's mirror with mmdebstrap, imported into podman as `tag`."""
    with tempfile.TemporaryDirectory(prefix="papers-base-") as folder:
        tarball = Path(folder) / "rootfs.tar"
        subprocess.run(["mmdebstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", "bookworm",
                        str(tarball)], check=True)
        subprocess.run(["podman", "import", "--change", "ENV LANG=C.UTF-8", "--change", 'CMD ["python3"]',
                        str(tarball), tag], check=True, stdout=subprocess.DEVNULL)
    return tag


def choose_base(base: str) -> str:
    """`auto`: the official python image where it is here or a registry answers, else the Debian-mirror base."""
    if base != "auto":
        return base
    if image_exists(OFFICIAL_BASE) or answers(REGISTRY_PROBE):
        return OFFICIAL_BASE
    print(f"no container registry answers: building on {LOCAL_BASE} (Debian's mirror)", file=sys.stderr)
    return LOCAL_BASE if image_exists(LOCAL_BASE) else build_base()


def pip_config(python: str = sys.executable) -> dict[str, str]:
    """The host's pip settings (`pip config list`: files, then PIP_* variables, which win), keyed without scope."""
    try:
        listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    files: dict[str, str] = {}
    variables: dict[str, str] = {}
    for line in listed.splitlines():
        if match := re.fullmatch(r"([^.]*)\.([\w-]+)='(.*)'", line.strip()):
            (variables if match[1] == ":env:" else files)[match[2]] = match[3]
    return {**files, **variables}


def local_folder(source: str) -> Path | None:
    """The folder to mount for a local pip source (a path or file:// URL); an index's `simple/` links to its
    parent's files, so a `.../simple` index mounts its parent. None for a remote source."""
    path = source.removeprefix("file://") if source.startswith("file://") else source if source.startswith("/") else None
    if path is None:
        return None
    folder = Path(path.rstrip("/"))
    return folder.parent if folder.name == "simple" else folder


def pip_sources(settings: dict[str, str]) -> tuple[list[str], list[Path]]:
    """pip options that make the image's pip read what the host's reads, and the local folders and files they need
    mounted (read-only, at the same path). A normal user's PyPI needs none: both come back empty."""
    options: list[str] = []
    if index := settings.get("index-url"):
        options += ["--index-url", index]
    options += [option for url in settings.get("extra-index-url", "").split() for option in ("--extra-index-url", url)]
    options += [option for link in settings.get("find-links", "").split() for option in ("--find-links", link)]
    folders = {local_folder(value) for value in options[1::2]} - {None}
    mounts = sorted(folder for folder in folders if folder.is_dir())
    # The host's CA bundle: a package mirror behind a TLS proxy is trusted through it, not through the image's.
    if (cert := settings.get("cert")) and Path(cert).is_file():
        options += ["--cert", cert]
        mounts.append(Path(cert))
    return options, mounts


def build_command(context: Path, tag: str, base: str, torch: str, torch_index: str | None, options: list[str],
                  mounts: list[Path], isolation: str, commit: str) -> list[str]:
    command = ["podman", "build", "--layers", f"--isolation={isolation}", "--tag", tag,
               "--build-arg", f"BASE={base}", "--build-arg", f"TORCH={torch}",
               "--build-arg", f"PIP_SOURCES={shlex.join(options)}", "--build-arg", f"SOURCE_COMMIT={commit}"]
    if torch_index is not None:
        command += ["--build-arg", f"TORCH_INDEX={torch_index}"]
    for mount in mounts:
        command += ["--volume", f"{mount}:{mount}:ro"]
    return [*command, str(context)]


def image_size(tag: str) -> int:
    done = subprocess.run(["podman", "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True, text=True,
                          check=True)
    return int(done.stdout.strip())


def build(torch: str = "cpu", base: str = "auto", tag: str | None = None, isolation: str = "chroot") -> dict:
    """Build the image from the work tree; returns its tag, base, seconds taken and size in bytes."""
    tag = tag or image_name(torch)
    base = choose_base(base)
    options, mounts = pip_sources(pip_config())
    index = TORCH_INDEX.format(torch=torch)
    # PyTorch's index unreachable (no internet but a package mirror): the wheel must come from the host's sources.
    torch_index = None if answers(index + "/") else ""
    if torch_index == "":
        print(f"{index} does not answer: torch comes from the host's pip sources", file=sys.stderr)
    commit = git_commit(ROOT) + ("-dirty" if git_dirty(ROOT) else "")
    started = time.perf_counter()
    # The context is what a clean clone holds: DVC's outputs, stores and environments stay out whatever
    # .dockerignore says.
    with tempfile.TemporaryDirectory(prefix="papers-context-") as folder:
        context = copy_project_files(ROOT, Path(folder))
        subprocess.run(build_command(context, tag, base, torch, torch_index, options, mounts, isolation, commit),
                       check=True)
    return {"image": tag, "base": base, "seconds": round(time.perf_counter() - started, 1), "bytes": image_size(tag)}


SECRET_MOUNT = "/run/papers/secrets.env"  # inside the container: the forwarded credentials, sourced before COMMAND


def forwarded_env(environ: dict[str, str]) -> list[str]:
    """The Prefect settings of the caller (a worker: API URL, flow run id, control port) as `--env` flags; a
    setting naming a host path (PREFECT_HOME) means nothing in the container and stays out, and a credential
    (see is_secret) travels in a file instead: every local account reads a process's arguments in `ps`."""
    return [f"--env={key}={value}" for key, value in sorted(environ.items())
            if key.startswith("PREFECT_") and not value.startswith("/") and not is_secret(key)]


def is_secret(key: str) -> bool:
    return key.startswith("PREFECT_") and key.endswith("AUTH_STRING")


def secrets_file(environ: dict[str, str], folder: Path) -> Path | None:
    """The caller's credentials (PREFECT_API_AUTH_STRING: the local server's login) as shell assignments in a
    0600 file of the 0700 `folder`, or None when there are none."""
    lines = [f"{key}={shlex.quote(value)}\n" for key, value in sorted(environ.items()) if is_secret(key)]
    if not lines:
        return None
    path = folder / "secrets.env"
    create_file(path, "".join(lines).encode())
    return path


def with_secrets(command: list[str]) -> list[str]:
    """COMMAND started by a shell that first exports the mounted credentials (SECRET_MOUNT)."""
    return ["sh", "-c", f'set -a; . {SECRET_MOUNT}; set +a; exec "$@"', "sh", *command]


def run(image: str, command: list[str], env: list[str] = (), volumes: list[str] = (), profile: str | None = None,
        environ: dict[str, str] | None = None) -> int:
    """COMMAND in a fresh working container of `image` (chroot isolation, the host's network), removed afterwards;
    `profile` switches params.yaml's profile first. Returns COMMAND's exit status."""
    environ = os.environ if environ is None else environ
    container = f"papers-run-{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="papers-run-") as private:  # mkdtemp: 0700, ours alone
        secrets = secrets_file(environ, Path(private))
        mounts = [f"{secrets}:{SECRET_MOUNT}:ro"] if secrets else []
        subprocess.run(["buildah", "from", "--pull-never", "--name", container, image], check=True, stdout=subprocess.DEVNULL)
        flags = ["--isolation=chroot", "--network=host", *forwarded_env(environ),
                 *(f"--env={pair}" for pair in env), *(f"--volume={volume}" for volume in [*volumes, *mounts])]
        try:
            if profile is not None:
                subprocess.run(["buildah", "run", *flags, container, "--", "sed", "-i", f"s/^profile:.*/profile: {profile}/",
                                "params.yaml"], check=True)
            return subprocess.run(["buildah", "run", *flags, container, "--",
                                   *(with_secrets(command) if secrets else command)]).returncode
        finally:
            subprocess.run(["buildah", "rm", container], capture_output=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m stages.container", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    base = commands.add_parser("base", help="build the Debian-mirror base image")
    base.add_argument("--tag", default=LOCAL_BASE)
    image = commands.add_parser("build", help="build the project's image")
    image.add_argument("--torch", default="cpu", help="cpu, or a CUDA wheel tag of PyTorch's index (cu128)")
    image.add_argument("--base", default="auto", help=f"auto, {OFFICIAL_BASE}, {LOCAL_BASE} or any python3.11 image")
    image.add_argument("--tag", help="default localhost/papers:TORCH")
    image.add_argument("--isolation", default="chroot", choices=("chroot", "oci", "rootless"),
                       help="chroot needs no OCI runtime (this kind of machine); oci where `podman run` works")
    inside = commands.add_parser("run", help="run COMMAND in a fresh container of the image")
    inside.add_argument("--image", default=image_name("cpu"))
    inside.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    inside.add_argument("--volume", action="append", default=[], metavar="HOST:CONTAINER[:ro]")
    inside.add_argument("--profile", choices=("smoke", "default", "full"), help="params.yaml's profile in the container")
    inside.add_argument("argv", nargs="+", metavar="COMMAND")
    args = parser.parse_args(argv)
    missing = [tool for tool in {"base": ["mmdebstrap", "podman"], "build": ["podman"], "run": ["buildah"]}[args.command]
               if shutil.which(tool) is None]
    if missing:
        print(f"error: {args.command} needs {' and '.join(missing)} (Debian: apt-get install {' '.join(missing)})",
              file=sys.stderr)
        return 2
    try:
        if args.command == "base":
            print(build_base(args.tag))
        elif args.command == "build":
            built = build(args.torch, args.base, args.tag, args.isolation)
            print(f"built {built['image']} on {built['base']} in {built['seconds']:.0f} s: {built['bytes'] / 1e9:.2f} GB")
        else:
            return run(args.image, args.argv, args.env, args.volume, args.profile)
    except subprocess.CalledProcessError as error:  # the tool printed why above
        print(f"error: {shlex.join(error.cmd[:2])} failed (exit {error.returncode})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
