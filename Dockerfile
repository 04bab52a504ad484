# The project's image: the pinned lock in a venv, the project at /app, run as the non-root user `papers`.
#   make image                      CPU torch, base and pip sources chosen for this machine (stages/container.py)
#   podman build -t papers:cpu .    the same from the official python image and PyPI (a machine with a registry)
#   --build-arg TORCH=cu128         the CUDA torch wheel instead (tag it papers:cu128)
#   --build-arg BASE=localhost/papers-base:bookworm    no registry: Debian's python3 (`make base-image`)
# BASE needs python3.11 with its venv module and apt (Debian bookworm): both choices above have them.
ARG BASE=docker.io/library/python:3.11.7-slim-bookworm
FROM ${BASE}

# Where pip finds the lock's wheels. The defaults are a normal user's (PyPI plus PyTorch's CPU index); a machine
# whose pip reads a local wheel folder or index passes them here and mounts them read-only into the build.
# TORCH_INDEX empty: torch from PIP_SOURCES alone (a machine that cannot reach PyTorch's index).
ARG TORCH=cpu
ARG TORCH_INDEX=https://download.pytorch.org/whl/${TORCH}
ARG PIP_SOURCES=

ENV LANG=C.UTF-8 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT=180 \
    DO_NOT_TRACK=true \
    MLFLOW_DISABLE_TELEMETRY=true \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    DVC_NO_ANALYTICS=1 \
    PAPERS_ROOT=/app \
    PAPERS_WARM=0 \
    PATH=/opt/venv/bin:$PATH

RUN apt-get update \
    && apt-get install -y --no-install-recommends git=1:2.39.* make=4.3-* \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --shell /bin/bash papers

# The dependency layer: rebuilt only when the lock or a pip source changes, not when the code does.
COPY requirements.lock /tmp/requirements.lock
# PIP_SOURCES is pip options (`--find-links DIR --extra-index-url URL ...`): split on purpose.
# hadolint ignore=SC2086
RUN python3 -m venv /opt/venv \
    && pip install ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} $PIP_SOURCES -r /tmp/requirements.lock \
    && python -c "import sys, torch; print('torch', torch.__version__); sys.exit(not torch.__version__.endswith('+${TORCH}'))"

# The commit the image was built from (declared here: a new commit must not rebuild the dependency layer).
ARG SOURCE_COMMIT=unknown
WORKDIR /app
COPY --chown=papers:papers . .
# `papers` on PATH (the code stays in /app, owned by the user who runs it); /app a git repository so DVC and
# the claims' provenance work as in a checkout (one commit, dated 2000-01-01 so that the same files and source commit
# give the same hash).
RUN pip install --no-deps --no-build-isolation -e . \
    && python -m tasks.sync.aot \
    && chown -R papers:papers /app
USER 1000:1000
RUN git init -q \
    && git add -A \
    && GIT_AUTHOR_DATE=2000-01-01T00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00Z git -c user.name=papers -c user.email=papers@localhost \
       commit -qm "papers image of ${SOURCE_COMMIT}"

LABEL org.opencontainers.image.title="papers" \
      org.opencontainers.image.revision="${SOURCE_COMMIT}"
CMD ["papers", "list"]
