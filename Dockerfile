# The project's image: CPU by default; GPU with
#   docker build --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 -t papers:gpu .
FROM python:3.11.7-slim-bookworm

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DO_NOT_TRACK=true \
    MLFLOW_DISABLE_TELEMETRY=true \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    DVC_NO_ANALYTICS=1 \
    PAPERS_ROOT=/app

RUN apt-get update \
    && apt-get install -y --no-install-recommends git=1:2.39.* make=4.3-* \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.lock pyproject.toml ./
RUN pip install --extra-index-url "${TORCH_INDEX}" -r requirements.lock
COPY . .
RUN pip install --no-deps -e .

CMD ["papers", "list"]
