import pytest

from tasks.core.device import single_torch_thread


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Small tensors, stepped one generation at a time: a second thread only waits on a loaded machine."""
    single_torch_thread()
