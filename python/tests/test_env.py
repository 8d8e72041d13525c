"""bandit_node.env: the harness, and the exec protocol as a real process speaks it."""

import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import bandit_node
from bandit_node.env import Environment, ProtocolError, replay

HELLO = {"hello": "bandit-node/environment", "version": 1}


def full_env():
    env = Environment()

    @env.pull
    def pull(q):
        return 0.5 if len(q.arms) == 1 else [a / 10 for a in q.arms]

    @env.context
    def context(q):
        return [0.1, -0.2, q.step / 100]

    @env.rewards
    def rewards(q):
        return [0, 1, 0]

    @env.procure
    def procure(q):
        return [min(1.0, qty / 10) for qty in q.quantities]

    return env


@pytest.mark.parametrize("request_, answer", [
    ({"id": 1, "kind": "pull", "step": 0, "arm": 4, "arms": [4]}, {"id": 1, "reward": 0.5}),
    ({"id": 2, "kind": "pull", "step": 3, "arms": [0, 2, 5]}, {"id": 2, "rewards": [0.0, 0.2, 0.5]}),
    ({"id": 3, "kind": "context", "step": 5}, {"id": 3, "x": [0.1, -0.2, 0.05]}),
    ({"id": 4, "kind": "rewards", "step": 5}, {"id": 4, "rewards": [0, 1, 0]}),
    ({"id": 5, "kind": "procure", "step": 2, "producers": [0, 3], "quantities": [10, 5]},
     {"id": 5, "qualities": [1.0, 0.5]}),
    # Fields a later revision of version 1 may add are ignored.
    ({"id": 6, "kind": "rewards", "step": 6, "new_field": True}, {"id": 6, "rewards": [0, 1, 0]}),
])
def test_each_kind(request_, answer):
    assert replay(full_env(), [request_]) == [answer]


def test_hello_facts_reach_the_function():
    env = Environment()
    started = []
    env.start(started.append)

    @env.pull
    def pull(q):
        return q.index + q.step

    got = replay(env, [{"id": 1, "kind": "pull", "step": 7, "arm": 2, "arms": [2]}],
                 hello={"session": "ab", "protocol": "samba", "role": "data_owner", "index": 2})
    assert got == [{"id": 1, "reward": 9}]
    assert started[0]["session"] == "ab" and started[0]["index"] == 2


@pytest.mark.parametrize("value, want", [
    (float("nan"), "not a finite number"),
    (math.inf, "not a finite number"),
    ("1", "not a number"),
    (True, "not a number"),
    ([1, 2], "2 values; want 1"),
    (None, "not a number"),
])
def test_bad_pull_values_are_error_answers(value, want):
    env = Environment()
    env.pull(lambda q: value)
    (a,) = replay(env, [{"id": 9, "kind": "pull", "step": 1, "arm": 0, "arms": [0]}])
    assert set(a) == {"id", "error"} and a["id"] == 9
    assert want in a["error"], a


def test_wrong_counts_are_error_answers():
    env = Environment()
    env.pull(lambda q: 1)
    env.procure(lambda q: [0.5])
    env.context(lambda q: [])
    got = replay(env, [{"id": 1, "kind": "pull", "step": 0, "arms": [0, 1]},
                       {"id": 2, "kind": "procure", "step": 0, "producers": [0, 1], "quantities": [1, 1]},
                       {"id": 3, "kind": "context", "step": 0}])
    assert [set(a) for a in got] == [{"id", "error"}] * 3, got
    assert "a list of 2 rewards" in got[0]["error"]
    assert "1 values; want 2" in got[1]["error"]
    assert "empty" in got[2]["error"]


def test_exception_and_unknown_kind(capsys):
    env = Environment()

    @env.pull
    def pull(q):
        raise KeyError("movie_12")

    got = replay(env, [{"id": 1, "kind": "pull", "step": 4, "arm": 0, "arms": [0]},
                       {"id": 2, "kind": "context", "step": 4}])
    assert got[0] == {"id": 1, "error": "pull at step 4: KeyError: 'movie_12'"}
    assert got[1] == {"id": 2, "error": "this program answers pull, not a context query"}
    assert "Traceback" in capsys.readouterr().err


def test_wrong_hello_is_refused():
    env = full_env()
    with pytest.raises(ProtocolError, match="refused the hello"):
        replay(env, [], hello={"version": 2})
    env.start(lambda h: (_ for _ in ()).throw(LookupError("no database")))
    with pytest.raises(ProtocolError, match="refused the hello"):
        replay(env, [])


def test_request_without_id_stops_the_program():
    with pytest.raises(ProtocolError, match="stopped"):
        replay(full_env(), [{"kind": "pull", "step": 0, "arms": [0]}])


PROGRAM = textwrap.dedent("""
    import sys, time
    from bandit_node.env import Environment
    env = Environment()
    @env.pull
    def pull(q):
        print("pulled", q.arm)          # must go to stderr, not into the protocol
        if q.step == 99:
            time.sleep(60)
        return q.arm
    env.run()
""")


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    pypath = os.path.dirname(os.path.dirname(os.path.abspath(bandit_node.__file__)))
    env = dict(os.environ, PYTHONPATH=pypath)
    p = subprocess.Popen([sys.executable, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    yield p
    if p.poll() is None:
        p.kill()
    p.wait(timeout=10)
    for f in (p.stdin, p.stdout, p.stderr):
        f.close()


def ask(p, obj):
    """Write one line and read the answer: it arrives only if the program flushed."""
    p.stdin.write(json.dumps(obj) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def test_process_answers_each_line_and_exits_on_eof(program):
    assert ask(program, {**HELLO, "session": "s", "protocol": "samba", "role": "data_owner", "index": 0}) == HELLO
    for i in range(1, 4):
        assert ask(program, {"id": i, "kind": "pull", "step": i, "arm": i, "arms": [i]}) == {"id": i, "reward": i}
    program.stdin.close()
    assert program.wait(timeout=10) == 0
    assert program.stdout.read() == ""
    assert "pulled 3" in program.stderr.read()


def test_process_exits_cleanly_on_sigterm(program):
    assert ask(program, {**HELLO, "session": "s", "protocol": "samba", "role": "data_owner", "index": 0}) == HELLO
    program.stdin.write(json.dumps({"id": 1, "kind": "pull", "step": 99, "arm": 0, "arms": [0]}) + "\n")
    program.stdin.flush()
    # Wait for the function to have started (its print), then end the session.
    assert "pulled 0" in program.stderr.readline()
    program.send_signal(signal.SIGTERM)
    assert program.wait(timeout=10) == 0


def test_process_refuses_another_version(program):
    assert set(ask(program, {"hello": "bandit-node/environment", "version": 2})) == {"error"}
    assert program.wait(timeout=10) == 1


def test_http_protocol():
    import threading
    import urllib.request

    env = full_env()
    started = []
    env.start(started.append)
    srv = env.http_server(port=0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/bandit"
        for body, want in [
            ({"id": 1, "kind": "pull", "step": 0, "arm": 3, "arms": [3]}, {"id": 1, "reward": 0.5}),
            ({"id": 2, "kind": "procure", "step": 1, "producers": [0], "quantities": [5]}, {"id": 2, "qualities": [0.5]}),
        ]:
            req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
                "Content-Type": "application/json", "Bandit-Environment-Version": "1",
                "Bandit-Session": "3f2a", "Bandit-Role": "samba data_owner 3"})
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.status == 200
                assert json.loads(r.read()) == want
    finally:
        srv.shutdown()
        srv.server_close()
    assert started == [{**HELLO, "session": "3f2a", "protocol": "samba", "role": "data_owner", "index": 3}]


def test_readme_data_owner(tmp_path):
    """The README's data owner, run as the daemon runs it, and its replay example."""
    import re

    with open(os.path.join(os.path.dirname(__file__), "..", "README.md")) as f:
        text = f.read()
    owner = re.search(r"## A SAMBA data owner.*?```python\n(.*?)```", text, re.S).group(1)
    check = re.search(r"Test it without a daemon:.*?```python\n(.*?)```", text, re.S).group(1)
    assert len(owner.splitlines()) < 10
    path = tmp_path / "owner.py"
    path.write_text(owner)
    pypath = os.path.dirname(os.path.dirname(os.path.abspath(bandit_node.__file__)))
    p = subprocess.Popen([sys.executable, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=dict(os.environ, PYTHONPATH=pypath))
    try:
        assert ask(p, {**HELLO, "session": "s", "protocol": "samba", "role": "data_owner", "index": 1}) == HELLO
        assert ask(p, {"id": 1, "kind": "pull", "step": 1, "arm": 1, "arms": [1]})["reward"] in (0, 1)
        p.stdin.close()
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
        p.stdout.close()
    # The replay example, on the owner's functions without its run().
    ns = {}
    exec(owner.replace("env.run()", ""), ns)
    exec(check, ns)
