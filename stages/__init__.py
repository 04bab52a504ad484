"""Process entry of every DVC stage, the `papers` CLI, and each paper's dvc.yaml/params.yaml."""
