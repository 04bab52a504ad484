"""Instances on disk: a seed gives the same file, byte for byte."""
from tasks.sync.generators import geometric
from tasks.sync.store import Instance, load_instance, save_instance


def test_same_seed_gives_byte_identical_instance_files(tmp_path):
    """DVC compares outputs by hash: regenerating with the same params must not look like new data."""
    for name in ("a", "b"):
        graph, truth = geometric(15, 0.5, 0.1, 0.1, seed=3)
        save_instance(tmp_path / f"{name}.npz", Instance(graph, truth, {"family": "geometric", "sigma": 0.1}))
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    assert load_instance(tmp_path / "a.npz").meta == {"family": "geometric", "sigma": 0.1}
