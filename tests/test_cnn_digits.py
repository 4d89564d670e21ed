"""examples/cnn_digits.py at reduced size: the stax CNN (conv, max-pool, dense, adam) trains on the digits
(loss falls, accuracy well above chance after two short epochs) and the CLI prints its figures."""
import importlib.util
import pathlib

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "cnn_digits.py"


@pytest.fixture(scope="module")
def cnn():
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location("example_cnn_digits", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cnn_digits_short_training(cnn):
    data = cnn.load_data()
    assert data[0].shape == (1437, 8, 8, 1) and data[2].shape == (360, 8, 8, 1)
    logs = []
    h = cnn.train("cranax", epochs=2, width=8, data=data, log=logs.append)
    assert len(h["loss"]) == 2 and len(logs) == 2 and "test acc" in logs[0]
    assert h["loss"][-1] < 0.6 * h["loss"][0]
    assert h["final_accuracy"] > 0.8          # chance is 0.1
    assert h["steps"] == 2 * (1437 // 64) and h["compile_s"] > 0 and h["step_s"] > 0


def test_cnn_digits_cli(cnn, capsys):
    h = cnn.main(["--max-steps", "3", "--epochs", "1", "--width", "4"])
    out = capsys.readouterr().out
    assert h["steps"] == 3 and "compile time" in out and "steady step" in out and "time to 98%" in out
