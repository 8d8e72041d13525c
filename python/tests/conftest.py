"""Fixtures: the real bandit-node binary and a testnet of real daemons.

The binary is $BANDIT_NODE_BIN, or built from this repository with go (the
toolchain go.mod names). The testnet is testnet/up.sh's: 5 daemons on
loopback (node1 data customer, node2 controller, node3 comp, node4 and node5
SAMBA data owners whose environment is tests/owner.py, an exec program
written with bandit_node.env, and BAI agents whose environment is an http
server of bandit_node.env in this process), ports from $BANDIT_PYTHON_TEST_BASE_PORT
(default 27300: nodes on 27301-27305, APIs on 27801-27805, the http
environment on 27700), taken down by
testnet/down.sh when the tests end.
"""

import os
import shutil
import subprocess
import sys
import threading

import pytest

import bandit_node
from bandit_node.client import Client
from bandit_node.env import Environment

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
NODES = 5


@pytest.fixture(scope="session")
def bandit_node_bin(tmp_path_factory):
    """The path of a bandit-node binary."""
    given = os.environ.get("BANDIT_NODE_BIN")
    if given:
        return given
    if shutil.which("go") is None:
        pytest.skip("go is not installed and BANDIT_NODE_BIN is not set")
    out = str(tmp_path_factory.mktemp("bin") / "bandit-node")
    env = dict(os.environ, GOTOOLCHAIN="go1.27.3")
    subprocess.run(["go", "build", "-o", out, "./cmd/bandit-node"], cwd=ROOT, env=env, check=True, timeout=600)
    return out


@pytest.fixture(scope="session")
def bandit_lab_bin(tmp_path_factory):
    """The path of a bandit-lab binary (the papers' experiments)."""
    given = os.environ.get("BANDIT_LAB_BIN")
    if given:
        return given
    if shutil.which("go") is None:
        pytest.skip("go is not installed and BANDIT_LAB_BIN is not set")
    out = str(tmp_path_factory.mktemp("labbin") / "bandit-lab")
    env = dict(os.environ, GOTOOLCHAIN="go1.27.3")
    subprocess.run(["go", "build", "-o", out, "./cmd/bandit-lab"], cwd=ROOT, env=env, check=True, timeout=600)
    return out


@pytest.fixture(scope="session")
def testnet(bandit_node_bin, agents, tmp_path_factory):
    """The testnet's directory: node1 … node5, each with its config.toml."""
    d = tmp_path_factory.mktemp("testnet")
    locals_dir = d / "locals"
    locals_dir.mkdir()
    # The owner program must import this bandit_node, installed or not.
    pypath = os.path.dirname(os.path.dirname(os.path.abspath(bandit_node.__file__)))
    base = base_port()
    for i in (4, 5):
        (locals_dir / f"node{i}.toml").write_text(
            "[local.samba.data_owner]\n"
            'source = "exec"\n'
            f"command = {_toml_list([sys.executable, os.path.join(HERE, 'owner.py'), str(d / f'owner{i}.log')])}\n"
            f"env = {{ PYTHONPATH = {_toml_str(pypath)} }}\n"
            'request_timeout = "10s"\n'
            "[local.bai.agent]\n"
            'source = "http"\n'
            f'url = "http://127.0.0.1:{base + 400}/bandit"\n'
            "rate = 2000\n")
    env = dict(os.environ,
               BANDIT_TESTNET_BIN=bandit_node_bin,
               BANDIT_TESTNET_LOCAL=str(locals_dir),
               BANDIT_TESTNET_BASE_PORT=str(base))
    net = d / "net"
    up = subprocess.run(["bash", os.path.join(ROOT, "testnet", "up.sh"), str(NODES), str(net)],
                        env=env, capture_output=True, text=True, timeout=180)
    if up.returncode != 0:
        subprocess.run(["bash", os.path.join(ROOT, "testnet", "down.sh"), str(net)], capture_output=True, timeout=60)
        pytest.fail(f"testnet/up.sh failed:\n{up.stderr}")
    try:
        yield d
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "testnet", "down.sh"), str(net)],
                       capture_output=True, timeout=60)


@pytest.fixture
def node1(testnet):
    """A client of node1's control API."""
    return Client.from_config(str(testnet / "net" / "node1" / "config.toml"))


def base_port():
    return int(os.environ.get("BANDIT_PYTHON_TEST_BASE_PORT", "27300"))


@pytest.fixture(scope="session")
def agents():
    """BAI agents' http environment, served by bandit_node.env: arm 0 always
    rewards 1, every other arm 0. Its pulls, by (role index, step), are in
    the server's pulls dict."""
    env = Environment()
    pulls = {}

    @env.pull
    def pull(q):
        pulls[(q.index, q.step)] = list(q.arms)
        return [1.0 if a == 0 else 0.0 for a in q.arms]

    srv = env.http_server(port=base_port() + 400)
    srv.pulls = pulls
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_list(xs):
    return "[" + ", ".join(_toml_str(x) for x in xs) + "]"


def pytest_report_header(config):
    return f"bandit_node: {os.path.dirname(os.path.abspath(bandit_node.__file__))}"
