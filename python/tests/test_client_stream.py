"""The event stream, pages of sessions and DataFrames, against real daemons."""

import time
import urllib.request

import pytest

from bandit_node.client import Client, _sse, result_table


def _ping(client, count=3, who=("node1", "node2")):
    return client.start({"protocol": "ping", "roles": {"participant": list(who)}, "params": {"count": count}})


def test_events_follow_a_session_to_its_end(node1):
    last = [e["id"] for e in node1.events(since=0, timeout=1)]
    start = last[-1] if last else 0
    s = _ping(node1)
    states = []
    for ev in node1.events(since=start, timeout=60):
        if ev["event"] == "session" and ev["data"].get("id") == s["id"]:
            states.append(ev["data"]["state"])
            if ev["data"]["state"] in ("completed", "aborted"):
                break
    assert states and states[-1] == "completed", states
    assert "running" in states, states


def test_events_resume_after_a_dropped_connection(node1, monkeypatch):
    start = max([e["id"] for e in node1.events(since=0, timeout=1)] or [0])
    first, second = _ping(node1), _ping(node1)
    for s in (first, second):
        node1.wait(s["id"], timeout=60)
    # Drop the connection after every second event: the client must reopen
    # it after the last id it saw and lose nothing, repeat nothing.
    opened = []
    real = urllib.request.urlopen

    def flaky(req, *a, **kw):
        r = real(req, *a, **kw)
        if "/v0/events" in req.full_url:
            opened.append(req.full_url)
            lines, events = [], 0
            for raw in r:
                lines.append(raw)
                if raw in (b"\n", b"\r\n"):
                    events += 1
                    if events == 2:
                        break
            r.close()
            return _Lines(lines)
        return r

    monkeypatch.setattr(urllib.request, "urlopen", flaky)
    ids = [e["id"] for e in node1.events(since=start, timeout=3) if e["id"] is not None]
    assert len(opened) >= 2, opened
    assert ids == sorted(set(ids)), ids
    monkeypatch.setattr(urllib.request, "urlopen", real)
    want = [e["id"] for e in node1.events(since=start, timeout=1)]
    assert ids[: len(want)] == want


class _Lines:
    """A response of the given lines, then EOF."""

    def __init__(self, lines):
        self.lines = lines

    def __iter__(self):
        return iter(self.lines)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_sse_parser():
    body = [b": ping\n", b"\n", b"id: 7\n", b"event: peer\n", b'data: {"name": "node2"}\n', b"\n",
            b"event: lost\n", b'data: {"after": 3}\n', b"\n"]
    assert list(_sse(body)) == [{"id": 7, "event": "peer", "data": {"name": "node2"}},
                                {"id": None, "event": "lost", "data": {"after": 3}}]


def test_sessions_in_pages(node1):
    for s in [_ping(node1, 2) for _ in range(3)]:
        node1.wait(s["id"], timeout=60)
    every = node1.sessions()
    assert len(every) >= 3
    page = node1.sessions(limit=2)
    assert [s["id"] for s in page] == [s["id"] for s in every[:2]]
    nxt = node1.sessions(limit=2, before=page[-1]["id"])
    assert [s["id"] for s in nxt] == [s["id"] for s in every[2:4]]
    assert [s["id"] for s in node1.all_sessions(page=2)] == [s["id"] for s in every]


def test_frames(node1):
    pd = pytest.importorskip("pandas")
    s = _ping(node1, 3, ("node1", "node2", "node3"))
    node1.wait(s["id"], timeout=60)
    df = node1.sessions_frame()
    assert s["id"] in set(df["id"]) and "progress_step" in df.columns
    assert str(df["created"].dtype).startswith("datetime64")
    pairs = node1.result_frame(s["id"])
    assert len(pairs) == 6 and set(pairs.columns) >= {"from", "to", "median_us"}
    assert (pairs["median_us"] > 0).all()
    curve = result_table(pd, "pfcb", {"regret_curve": [1.0, 2.5], "regret_curve_every": 100})
    assert list(curve["round"]) == [100, 200] and list(curve["regret"]) == [1.0, 2.5]


def test_frames_need_pandas(node1, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *a, **kw):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="python3-pandas"):
        node1.sessions_frame()
