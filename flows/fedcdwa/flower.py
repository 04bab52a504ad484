"""The same client and server functions on Flower 1.32.1's deployment runtime (the `flower` engine): a ServerApp
whose main loop is engine.federate with a transport of Flower Messages, and a ClientApp that answers them with
the run's method's client_update / personalize (methods.METHODS). flower_app/ is the Flower App (its
pyproject.toml names these two); run_flower() starts a SuperLink and one SuperNode per client on 127.0.0.1
(tasks/federated/flower_deployment.py), submits the app with `flwr run`, and reads the result the ServerApp writes.

Locally the Fleet and Control APIs speak TLS with per-run certificates. Across machines, flower_job.py writes the
App, the job and the connection (TLS by default: Flower's messages carry the model and the clients' updates) with
the commands to run. TLS authenticates the SuperLink, not its clients: keep its ports reachable from the
federation's machines only. The server-step gate's request is an `evaluate.validate` message (a named action)."""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from tasks.core.device import single_torch_thread
from tasks.federated.local import ClientData
from tasks.federated.messages import Message

from .config import FedConfig
from .data import Federation
from .client import score_candidates
from .engine import PERSONALIZE, TRAIN, VALIDATE, federate, result_record
from .methods import METHODS
from .model import run_model

APP_DIR = Path(__file__).parent / "flower_app"
STATE_KEY = "fedcdwa"
POLL_S = 0.05  # Grid.send_and_receive sleeps 3 s between pulls; a round here takes well under that
MESSAGE_TYPES = {TRAIN: "train", VALIDATE: f"evaluate.{VALIDATE}", PERSONALIZE: "evaluate"}
CLIENT_ARRAYS = ("x_train", "y_train", "x_test", "y_test", "x_val", "y_val")  # a client's .npz, ClientData's order


# ---------------------------------------------------------------- records <-> flat ndarray dicts

SCALAR = "scalar:"  # 0-d arrays come back from Flower's message store without their shape; sent as [1] and marked


def to_record(message: Message):
    from flwr.app import Array, ArrayRecord

    record = ArrayRecord()
    for key, value in message.items():
        value = np.asarray(value)
        record[SCALAR + key if value.ndim == 0 else key] = Array(np.ascontiguousarray(value.reshape(-1) if value.ndim == 0
                                                                                      else value))
    return record


def from_record(record) -> Message:
    return {key.removeprefix(SCALAR): record[key].numpy().reshape(()) if key.startswith(SCALAR) else record[key].numpy()
            for key in record.keys()}


# ---------------------------------------------------------------- ClientApp

def _client_app():
    from flwr.app import ConfigRecord, Context, Message as FlowerMessage, RecordDict
    from flwr.clientapp import ClientApp

    app = ClientApp()
    single_torch_thread()  # as run_inprocess: one thread, the same float32 sums

    def load(context: Context) -> tuple[int, ClientData]:
        k = int(context.node_config["client"])
        with np.load(str(context.node_config["data"])) as d:
            return k, ClientData(*(d[key] for key in CLIENT_ARRAYS))

    def reply(msg, arrays: Message, k: int):
        return FlowerMessage(RecordDict({"arrays": to_record(arrays), "meta": ConfigRecord({"client": k})}), reply_to=msg)

    @app.query()
    def query(msg, context: Context):
        return reply(msg, {}, int(context.node_config["client"]))

    def run_of(meta, data: ClientData):
        """The message's config, its method and the run's model factory."""
        cfg = FedConfig.model_validate_json(str(meta["config"]))
        return cfg, METHODS[cfg.method], run_model(cfg, data.x_train.shape[1], int(meta["n_classes"]), int(meta["seed"]))

    @app.train()
    def train(msg, context: Context):
        k, data = load(context)
        meta = msg.content["meta"]
        cfg, method, model = run_of(meta, data)
        state = from_record(context.state[STATE_KEY]) if STATE_KEY in context.state else {}
        if data.n_train == 0:
            return reply(msg, {"n": np.array(0, np.int64)}, k)
        out, state = method.client_update(cfg, from_record(msg.content["arrays"]), state, data, model=model,
                                          n_classes=int(meta["n_classes"]), seed=int(meta["seed"]),
                                          round_=int(meta["round"]), client=k)
        context.state[STATE_KEY] = to_record(state)
        return reply(msg, out, k)

    @app.evaluate(VALIDATE)
    def validate(msg, context: Context):
        k, data = load(context)
        meta = msg.content["meta"]
        _, _, model = run_of(meta, data)
        return reply(msg, score_candidates(from_record(msg.content["arrays"]), data, model=model), k)

    @app.evaluate()
    def evaluate(msg, context: Context):
        k, data = load(context)
        meta = msg.content["meta"]
        cfg, method, model = run_of(meta, data)
        arrays = from_record(msg.content["arrays"])
        state = from_record(context.state[STATE_KEY]) if STATE_KEY in context.state else {}
        test_x, test_y = arrays.pop("test_x", None), arrays.pop("test_y", None)
        out = method.personalize(cfg, arrays, state, data, model=model, seed=int(meta["seed"]), client=k,
                                 test_x=test_x, test_y=test_y)
        return reply(msg, {key: np.array(v, np.int64) for key, v in out.items()}, k)

    return app


# ---------------------------------------------------------------- ServerApp

def _exchange(grid, nodes: dict[int, int], cfg: FedConfig, seed: int, n_classes: int, federation: Federation,
              timeout_s: float):
    from flwr.app import ConfigRecord, Message as FlowerMessage, RecordDict

    def exchange(task: str, round_: int, message: Message, clients: list[int]) -> list[Message]:
        if task == PERSONALIZE and METHODS[cfg.method].own_models:  # their only global model: their own, on this set
            message = message | {"test_x": federation.test_x, "test_y": federation.test_y}
        meta = ConfigRecord({"config": cfg.model_dump_json(), "seed": seed, "round": round_, "n_classes": n_classes})
        # Before any reply every client takes part (full participation), and the message is the same for all:
        # send it to every SuperNode (one ClientApp start per node fewer than a query first).
        targets = [nodes[k] for k in clients] if nodes else sorted(grid.get_node_ids())
        out = [FlowerMessage(RecordDict({"arrays": to_record(message), "meta": meta}), dst_node_id=node,
                             message_type=MESSAGE_TYPES[task], group_id=str(round_)) for node in targets]
        replies = _collect(grid, out, timeout_s)
        nodes.update({k: m.metadata.src_node_id for k, m in replies.items()})
        return [from_record(replies[k].content["arrays"]) for k in clients]  # the in-process loop's order

    return exchange


def _collect(grid, messages: list, timeout_s: float) -> dict[int, object]:
    """Push, then pull every reply (polling every POLL_S); {client id: reply Message}."""
    ids = set(grid.push_messages(messages))
    replies = {}
    end = time.monotonic() + timeout_s
    while ids:
        if time.monotonic() > end:
            raise TimeoutError(f"{len(ids)} client replies missing after {timeout_s:g} s")
        for msg in grid.pull_messages(ids):
            ids.discard(msg.metadata.reply_to_message_id)
            if msg.has_error():
                raise RuntimeError(f"client error: {msg.error.reason}")
            replies[int(msg.content["meta"]["client"])] = msg
        if ids:
            time.sleep(POLL_S)
    return replies


def _server_app():
    from flwr.app import Message as FlowerMessage, RecordDict
    from flwr.serverapp import ServerApp

    app = ServerApp()
    single_torch_thread()

    @app.main()
    def main(grid, context):
        job_path = Path(str(context.run_config["job"]))
        job = json.loads(job_path.read_text())
        cfg, seed, n_clients = FedConfig.model_validate(job["config"]), int(job["seed"]), int(job["n_clients"])
        with np.load(job_path.parent / job["test"]) as d:
            federation = Federation([], d["x"], d["y"], int(job["n_classes"]))
        end = time.monotonic() + job["timeout_s"]
        while len(list(grid.get_node_ids())) < n_clients:
            if time.monotonic() > end:
                raise TimeoutError(f"fewer than {n_clients} SuperNodes connected")
            time.sleep(POLL_S)
        nodes: dict[int, int] = {}  # client -> its SuperNode, learnt from the first replies
        if cfg.participation < 1:  # round 0 already addresses single clients: ask every SuperNode which it holds
            asked = [FlowerMessage(RecordDict({}), dst_node_id=node, message_type="query")
                     for node in sorted(grid.get_node_ids())]
            nodes |= {k: m.metadata.src_node_id for k, m in _collect(grid, asked, job["timeout_s"]).items()}
        result = federate(cfg, federation, seed, _exchange(grid, nodes, cfg, seed, federation.n_classes, federation,
                                                           job["timeout_s"]), n_clients)
        out = job_path.parent / job["out"]
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result_record(result)))
        tmp.rename(out)  # appears whole: the caller waits for it

    return app


def client_arrays(data: ClientData) -> dict[str, np.ndarray]:
    """A client's .npz content (its validation split empty where it holds none)."""
    empty = (np.zeros((0, data.x_train.shape[1]), np.float32), np.zeros(0, np.int64))
    val = (data.x_val, data.y_val) if data.y_val is not None else empty
    return dict(zip(CLIENT_ARRAYS, (data.x_train, data.y_train, data.x_test, data.y_test, *val)))


def job_document(cfg: FedConfig, federation: Federation, seed: int, timeout_s: float) -> dict:
    """job.json: the run's config, seed and counts; test.npz and result.json beside it (paths relative to it, so the
    server's folder can move to the SuperLink's machine)."""
    return {"config": cfg.model_dump(), "seed": seed, "n_clients": len(federation.clients),
            "n_classes": federation.n_classes, "test": "test.npz", "out": "result.json", "timeout_s": timeout_s}


def prepare_job(cfg: FedConfig, federation: Federation, seed: int, folder: Path, timeout_s: float = 300) -> tuple[Path, list[dict]]:
    """The files of one local Flower run in `folder`: client_K.npz per client (its train, local test and validation
    arrays), test.npz (the server's global test set) and job.json. Returns job.json's path and each SuperNode's
    --node-config."""
    folder.mkdir(parents=True, exist_ok=True)
    nodes = []
    for k, c in enumerate(federation.clients):
        path = folder / f"client_{k}.npz"
        np.savez(path, **client_arrays(c))
        nodes.append({"client": k, "data": str(path)})
    np.savez(folder / "test.npz", x=federation.test_x, y=federation.test_y)
    (folder / "job.json").write_text(json.dumps(job_document(cfg, federation, seed, timeout_s)))
    return folder / "job.json", nodes


def run_flower(cfg: FedConfig, federation: Federation, seed: int, workdir: Path | None = None,
               timeout_s: float = 300) -> dict:
    """One run on a local Flower deployment: len(federation.clients) SuperNodes; the ServerApp's result record."""
    from tasks.federated.flower_deployment import local_deployment, wait_for

    with tempfile.TemporaryDirectory(prefix="fedcdwa-flower-") as scratch:
        work = Path(workdir or scratch)
        job, nodes = prepare_job(cfg, federation, seed, work, timeout_s)
        out = work / "result.json"
        with local_deployment(work / "deployment", nodes) as deployment:
            run_id = deployment.submit(APP_DIR, {"job": str(job)})
            try:
                wait_for(out, timeout_s)
            except TimeoutError as error:
                raise TimeoutError(f"{error}\n{deployment.run_log(run_id)}\n{deployment.logs()}") from None
        return json.loads(out.read_text())
