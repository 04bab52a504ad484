"""The Flower App's components: flows/fedcdwa/flower.py builds them (the project checkout is on PYTHONPATH)."""
from flows.fedcdwa.flower import _client_app, _server_app

server_app = _server_app()
client_app = _client_app()
