"""bandit_node.client against real daemons (the testnet fixture)."""

import pytest

from bandit_node.client import BanditError, Client


def test_ping_from_dict(node1):
    spec = {"protocol": "ping", "roles": {"participant": ["node1", "node2", "node3"]}, "params": {"count": 3}}
    s = node1.start(spec)
    assert s["state"] in ("proposed", "running"), s
    seen = []
    s = node1.wait(s["id"], timeout=60, progress=seen.append)
    assert s["state"] == "completed", s
    assert seen and seen[-1]["state"] == "completed"
    res = node1.result(s["id"])
    assert res["session"]["id"] == s["id"]
    matrix = res["result"]["median_us"]
    assert len(matrix) == 3 and all(len(row) == 3 for row in matrix)
    assert all(matrix[i][j] > 0 for i in range(3) for j in range(3) if i != j), matrix
    assert any(x["id"] == s["id"] for x in node1.sessions())
    logs = node1.logs(s["id"])
    assert logs["lines"] and logs["next"] >= len(logs["lines"])
    assert node1.logs(s["id"], since=logs["next"])["lines"] == []


def test_ping_from_toml(node1):
    s = node1.start('protocol = "ping"\n[roles]\nparticipant = ["node1", "node2"]\n[params]\ncount = 2\n')
    assert node1.wait(s["id"], timeout=60)["state"] == "completed"


def test_node_and_peers(node1):
    n = node1.node()
    assert n["name"] == "node1" and "ping" in n["protocols"]
    peers = {p["name"]: p for p in node1.peers()}
    assert set(peers) == {"node2", "node3", "node4", "node5"}
    assert all(p["connected"] for p in peers.values()), peers
    assert node1.standing() == []
    assert node1.scope() == "operator"
    ping = {p["protocol"]: p for p in node1.policy()["protocols"]}["ping"]
    assert ping["enabled"] and ping["roles"][0]["learns"], ping
    refused = node1.refused_peers()
    assert refused["refused"] == [] and 'name = "node1"' in refused["peer_card"], refused
    with pytest.raises(BanditError) as e:
        node1.add_peer('[[peers]]\nname = "node2"\npeer_id = "%s"\n' % peers["node2"]["peer_id"])
    assert e.value.status == 409 and e.value.code == "peer.exists", e.value.body


def test_errors_carry_status_code_and_field(node1):
    with pytest.raises(BanditError) as e:
        node1.start({"protocol": "ping", "roles": {"participant": ["node1", "node2"]}, "params": {"cont": 3}})
    assert e.value.status == 400
    assert e.value.code == "spec.unknown_key" and e.value.field == "params.cont", e.value.body
    assert "cont" in e.value.message
    with pytest.raises(BanditError) as e:
        node1.session("00000000000000ff")
    assert e.value.status == 404 and e.value.code == "session.not_found"
    with pytest.raises(BanditError) as e:
        node1.cancel("00000000000000ff")
    assert e.value.status == 404


def test_wrong_token_and_no_daemon(node1):
    with pytest.raises(BanditError) as e:
        Client(node1.base, token="wrong").node()
    assert e.value.status == 401 and e.value.code == "unauthorized"
    with pytest.raises(BanditError) as e:
        Client("127.0.0.1:9", token="x", timeout=5).node()
    assert e.value.status is None and "cannot reach" in str(e.value)


def test_wait_times_out(node1):
    s = node1.start({"protocol": "ping", "roles": {"participant": ["node1", "node2"]}, "params": {"count": 100000}})
    with pytest.raises(TimeoutError):
        node1.wait(s["id"], timeout=0.3)
    node1.cancel(s["id"])
    assert node1.wait(s["id"], timeout=60)["state"] == "aborted"


def test_readme_client_example(testnet):
    """The README's client example, run as a script beside the testnet's node1/."""
    import os
    import re
    import subprocess
    import sys

    import bandit_node

    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    with open(readme) as f:
        example = re.search(r"## Start a session.*?```python\n(.*?)```", f.read(), re.S).group(1)
    assert len(example.splitlines()) <= 10
    pypath = os.path.dirname(os.path.dirname(os.path.abspath(bandit_node.__file__)))
    out = subprocess.run([sys.executable, "-c", example], cwd=testnet / "net", capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=pypath))
    assert out.returncode == 0, out.stderr
    last = out.stdout.splitlines()[-1]
    assert last.startswith("completed [["), out.stdout
