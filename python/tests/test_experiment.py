"""bandit_node.sim.experiment against the real bandit-lab binary."""

import os

import pytest

from bandit_node.sim import SimulationError, experiment, frame, rows


def test_tiny_samba_grid(bandit_lab_bin, tmp_path):
    out = experiment("samba", tmp_path / "samba", binary=bandit_lab_bin, runs=1, budget=40, k=[3],
                     paillier_bits=512, workers=1)
    m = out["manifest"]
    assert m["experiment"] == "samba" and m["options"]
    assert "--budget" in m["command"] and "40" in m["command"]
    assert all(os.path.exists(f) for f in out["files"]), out["files"]
    runs = rows(os.path.join(out["dir"], "samba_runs.csv"))
    assert runs and all(r["exact"] in ("true", True, 1) for r in runs), runs[:2]
    data = [f for f in out["files"] if f.endswith(".data.csv")]
    assert data, out["files"]
    assert rows(data[0])
    pytest.importorskip("pandas")
    assert len(frame(os.path.join(out["dir"], "samba_runs.csv"))) == len(runs)


def test_refused_options_raise(bandit_lab_bin, tmp_path):
    with pytest.raises(SimulationError) as e:
        experiment("samba", tmp_path / "x", binary=bandit_lab_bin, runs=-1)
    assert "runs" in str(e.value)
