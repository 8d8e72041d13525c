"""Sessions on real daemons whose environments are written with bandit_node.env."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def test_owner_program_is_short():
    with open(os.path.join(HERE, "owner.py")) as f:
        assert len([line for line in f if line.strip()]) < 10


def test_samba_with_python_data_owners(node1, testnet):
    spec = {"protocol": "samba",
            "roles": {"data_customer": "node1", "controller": "node2", "comp": "node3",
                      "data_owner": ["node4", "node5"]},
            "params": {"algorithm": "ucb", "budget": 60}}
    s = node1.start(spec)
    s = node1.wait(s["id"], timeout=120)
    assert s["state"] == "completed", s
    result = node1.result(s["id"])["result"]
    # Each pull the daemons asked is one line in its owner's log; a pull
    # asked again after a restart keeps its last answer.
    pulls = {}
    for i in (4, 5):
        with open(testnet / f"owner{i}.log") as f:
            for line in f:
                index, step, reward = map(int, line.split())
                pulls[(index, step)] = reward
    assert len(pulls) == 60, sorted(pulls)
    assert sum(pulls.values()) == result["cumulative_reward"], result


def test_bai_with_python_http_agents(node1, agents):
    spec = {"protocol": "bai", "roles": {"coordinator": "node1", "agent": ["node4", "node5"]},
            "params": {"algorithm": "central", "arms": 3, "delta": 0.05}}
    s = node1.start(spec)
    s = node1.wait(s["id"], timeout=120)
    assert s["state"] == "completed", s
    result = node1.result(s["id"])["result"]
    assert result["best_arm"] == 0, result
    assert {index for index, _ in agents.pulls} == {0, 1}, "both agents' pulls reach the http environment"
