"""The `papers unidrag cfd` command: solver validation cases from the command line."""
from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from flows.unidrag import cli
from flows.unidrag.cli import cfd_app
from tasks.cfd import lbm_setup
from tasks.core.inputs import InputError


def test_cli_json_has_every_metric():
    result = CliRunner().invoke(cfd_app, ["cylinder", "--re", "20", "--diameter-cells", "6", "--steps", "300", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert set(document) >= {"cd_mean", "cd_max", "cl_max", "dp", "recirculation_length", "strouhal"}
    assert document["strouhal"] is None and np.isfinite(document["cd_mean"])


def test_cli_rejects_bad_options():
    result = CliRunner().invoke(cfd_app, ["cylinder", "--diameter-cells", "2"])  # `papers` prints it as one line, exit 2
    assert isinstance(result.exception, InputError) and "--diameter-cells" in str(result.exception)


def test_cfd_help_names_the_solver_choices():
    assert (cli.COLLISION_CHOICES, cli.DTYPE_CHOICES) == (lbm_setup.COLLISIONS, lbm_setup.DTYPES)
