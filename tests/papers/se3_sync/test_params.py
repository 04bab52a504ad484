"""The paper's own params rule, named like every other params error."""
import pytest

from flows.se3_sync.params import Params
from tasks.core.params import ParamsError, profile_values, validate
from tests.conftest import ROOT


def test_the_claims_need_dqgpm_and_eig():
    data = profile_values(ROOT, "se3_sync", "default") | {"methods": ["dqgpm", "chain"]}
    with pytest.raises(ParamsError) as raised:
        validate(Params, data, "se3_sync.default")
    assert raised.value.problems == ["se3_sync.default.methods: must include dqgpm and eig (the claims compare them), "
                                     "got ['dqgpm', 'chain']"]
