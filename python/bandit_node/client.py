"""The control API of a bandit-node daemon (/v0, docs/api.md), from Python.

Standard library only (urllib). Every call returns the daemon's JSON as
dicts and lists; every error raises BanditError.

    from bandit_node.client import Client

    c = Client.from_config("node1/config.toml")   # or Client("127.0.0.1:5601", token_file="api.token")
    s = c.start({"protocol": "ping", "roles": {"participant": ["node1", "node2"]},
                 "params": {"count": 5}})
    s = c.wait(s["id"], timeout=60, progress=lambda s: print(s["progress"]))
    print(c.result(s["id"])["result"]["median_us"])
"""

import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover
    tomllib = None

ENDED = ("completed", "aborted")


class BanditError(Exception):
    """An error from the daemon, or from reaching it.

    status: the HTTP status (None if the daemon could not be reached);
    message: the daemon's words (the body's error or detail); code: the
    error's stable class when the daemon gives one (spec.unknown_key,
    session.not_found, …), else None; field: the spec's key at fault, if
    any; body: the decoded body (or its text).
    """

    def __init__(self, status, message, code=None, field=None, body=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.field = field
        self.body = body

    def __str__(self):
        where = f"HTTP {self.status}" if self.status is not None else "unreachable"
        code = f" ({self.code})" if self.code else ""
        return f"{where}{code}: {self.message}"


class Client:
    """A daemon's control API at address ("127.0.0.1:5601" or a URL).

    token or token_file gives the bearer token (api.token_file of the
    daemon's config, or api.read_token_file for read-only use); timeout is
    each request's, in seconds; ssl_context is for a daemon that serves the
    API over TLS (an https:// address).
    """

    def __init__(self, address, token=None, token_file=None, timeout=30, ssl_context=None):
        if (token is None) == (token_file is None):
            raise ValueError("give the API token, as token or as token_file (not both)")
        if token_file is not None:
            with open(token_file, encoding="utf-8") as f:
                token = f.read()
        token = token.strip()
        if not token:
            raise ValueError("the API token is empty")
        if "://" not in address:
            address = "http://" + address
        self.base = address.rstrip("/")
        self._token = token
        self.timeout = timeout
        self._ssl = ssl_context

    @classmethod
    def from_config(cls, path, **kw):
        """A client of the daemon whose config.toml is at path (api.listen, api.token_file)."""
        if tomllib is None:  # pragma: no cover
            raise RuntimeError("from_config needs Python 3.11's tomllib; give the address and token_file")
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
        conf_dir = os.path.dirname(os.path.abspath(path))
        data_dir = os.path.join(conf_dir, cfg.get("node", {}).get("data_dir", "."))
        api = cfg.get("api", {})
        if "listen" not in api:
            raise ValueError(f"{path}: no api.listen")
        scheme = "https" if api.get("cert_file") else "http"
        token_file = os.path.join(data_dir, api.get("token_file", "api.token"))
        if scheme == "https" and "ssl_context" not in kw:
            ca = os.path.join(data_dir, api.get("ca_file", api["cert_file"]))
            kw["ssl_context"] = ssl.create_default_context(cafile=ca)
        return cls(f"{scheme}://{api['listen']}", token_file=token_file, **kw)

    # The routes.

    def node(self):
        """This node: name, peer_id, addrs, protocols, version, warnings."""
        return self._call("GET", "/v0/node")

    def peers(self):
        """The address book's peers with their connection state."""
        return self._call("GET", "/v0/peers")

    def scope(self):
        """The scope of this client's token: "read" or "operator"."""
        return self._call("GET", "/v0/auth/scope")["scope"]

    def policy(self):
        """What this node accepts: per protocol, its roles, initiators, limits and what each role learns."""
        return self._call("GET", "/v0/policy")

    def refused_peers(self):
        """The peers the node refused for not being in its address book, and its own peer card."""
        return self._call("GET", "/v0/peers/refused")

    def add_peer(self, card):
        """Add a partner's peer card (one [[peers]] block, text) to the config and reload it."""
        return self._call("POST", "/v0/peers", body=card.encode(), ctype="application/toml")

    def sessions(self, name=None, limit=None, before=None):
        """Sessions this node knows, newest first (without specs); name: a standing session's runs.

        Without limit, every one. With limit (1 to 1000), one page of at
        most limit, starting after session before (None: the newest); the
        page's last session's id is the next page's before. all_sessions
        walks every page.
        """
        return self._call("GET", "/v0/sessions", {"name": name, "limit": limit, "before": before})

    def all_sessions(self, name=None, page=100):
        """Every session, newest first, fetched a page of page at a time (a generator)."""
        query = {"name": name, "limit": page}
        while query is not None:
            items, headers = self._call("GET", "/v0/sessions", query, with_headers=True)
            yield from items
            query = _next_page(headers.get("Link"))

    def sessions_frame(self, name=None):
        """Every session as a pandas DataFrame: one row each, progress flattened (progress_step, …)."""
        pd = _pandas()
        rows = []
        for s in self.all_sessions(name):
            row = {k: v for k, v in s.items() if not isinstance(v, (dict, list))}
            for k, v in (s.get("progress") or {}).items():
                row["progress_" + k] = v
            rows.append(row)
        df = pd.DataFrame(rows)
        for col in ("created", "started", "finished", "updated"):
            if col in df:
                df[col] = pd.to_datetime(df[col], utc=True, errors="coerce")
        return df

    def result_frame(self, id):
        """A session's result as a tidy pandas DataFrame, for the families whose result is a table or a curve.

        ping: one row per ordered pair (from, to) with its latency
        statistics; pfcb: the regret curve (round, regret); mpccb: the
        reward curve (step, average_reward so far); samba and bai: one row of
        the result's numbers.
        """
        pd = _pandas()
        rec = self.result(id)
        return result_table(pd, rec.get("session", {}).get("protocol"), rec.get("result") or {})

    def events(self, since=None, timeout=None, read_timeout=60):
        """The node's events (GET /v0/events) as dicts {"id", "event", "data"}, a generator.

        since=None starts with the next event; since=0 with every event the
        node still keeps; since=N after event N. A dropped connection is
        reopened after the last event seen. A "lost" event (id None) says
        events were missed: read the state again. Stops after timeout
        seconds (None: never) or when the caller stops iterating.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        last = since
        failures = 0
        while deadline is None or time.monotonic() < deadline:
            left = None if deadline is None else max(0.05, deadline - time.monotonic())
            query = {} if last is None else {"since": last}
            url = self.base + "/v0/events" + ("?" + urllib.parse.urlencode(query) if query else "")
            req = urllib.request.Request(url, method="GET")
            req.add_header("Authorization", "Bearer " + self._token)
            req.add_header("Accept", "text/event-stream")
            wait = read_timeout if left is None else min(read_timeout, left)
            try:
                with urllib.request.urlopen(req, timeout=wait, context=self._ssl) as r:
                    failures = 0
                    for ev in _sse(r):
                        if ev["id"] is not None:
                            last = ev["id"]
                        yield ev
                        if deadline is not None and time.monotonic() >= deadline:
                            return
            except urllib.error.HTTPError as e:
                raise _error(e.code, e.read()) from None
            except (TimeoutError, OSError, urllib.error.URLError) as e:
                if deadline is not None and time.monotonic() >= deadline:
                    return
                failures += 1
                if failures > 5:
                    raise BanditError(None, f"the event stream of {self.base} keeps failing: {e}") from e
                time.sleep(min(2.0, 0.1 * 2 ** failures))

    def session(self, id):
        """One session: state, progress, roles, reason, …"""
        return self._call("GET", "/v0/sessions/" + _seg(id))

    def result(self, id):
        """A session's result ({"session", "result", "local"})."""
        return self._call("GET", f"/v0/sessions/{_seg(id)}/result")

    def logs(self, id, since=0):
        """The log lines kept of a session from line since ({"lines", "next", …})."""
        return self._call("GET", f"/v0/sessions/{_seg(id)}/logs", {"since": since})

    def standing(self):
        """The standing sessions with their schedule and last run."""
        return self._call("GET", "/v0/standing")

    def start(self, spec):
        """Propose a session; spec is a dict (sent as JSON) or a spec's TOML text. Returns the session."""
        if isinstance(spec, dict):
            body, ctype = json.dumps(spec, allow_nan=False).encode(), "application/json"
        elif isinstance(spec, (str, bytes)):
            body = spec.encode() if isinstance(spec, str) else spec
            ctype = "application/toml"
        else:
            raise TypeError(f"a spec is a dict or TOML text, not {type(spec).__name__}")
        return self._call("POST", "/v0/sessions", body=body, ctype=ctype)

    def start_file(self, path):
        """Propose a session from a spec file (TOML)."""
        with open(path, "rb") as f:
            return self.start(f.read())

    def cancel(self, id):
        """Abort an active session."""
        return self._call("POST", f"/v0/sessions/{_seg(id)}/cancel")

    def wait(self, id, timeout=600, progress=None, interval=0.25):
        """Poll a session until it is completed or aborted; returns it.

        progress(session) is called whenever its state or progress changes.
        Raises TimeoutError after timeout seconds; the session goes on.
        """
        deadline = time.monotonic() + timeout
        seen = None
        while True:
            s = self.session(id)
            now = (s.get("state"), json.dumps(s.get("progress"), sort_keys=True))
            if progress is not None and now != seen:
                progress(s)
            seen = now
            if s.get("state") in ENDED:
                return s
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"session {id} is still {s.get('state')} after {timeout} s")
            time.sleep(min(interval, left))

    # The transport.

    def _call(self, method, path, query=None, body=None, ctype=None, with_headers=False):
        url = self.base + path
        query = {k: v for k, v in (query or {}).items() if v is not None}
        if query:
            url += "?" + urllib.parse.urlencode(query)
        req = urllib.request.Request(url, data=body, method=method)
        req.add_header("Authorization", "Bearer " + self._token)
        req.add_header("Accept", "application/json")
        if ctype:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as r:
                data = r.read()
                headers = r.headers
        except urllib.error.HTTPError as e:
            raise _error(e.code, e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise BanditError(None, f"cannot reach the daemon at {self.base}: {reason}") from e
        if not data:
            value = None
        else:
            try:
                value = json.loads(data)
            except ValueError:
                raise BanditError(200, f"{method} {path}: the answer is not JSON: {data[:200]!r}") from None
        return (value, headers) if with_headers else value


def _error(status, data):
    """The BanditError for an error answer's status and body."""
    try:
        body = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", "replace").strip()
        return BanditError(status, text[:500] or f"HTTP {status}", body=text)
    if not isinstance(body, dict):
        return BanditError(status, str(body)[:500], body=body)
    err = body.get("error")
    if isinstance(err, dict):  # {"error": {"code", "field", "message"}}
        return BanditError(status, err.get("message") or err.get("detail") or json.dumps(err),
                           code=err.get("code"), field=err.get("field"), body=body)
    msg = err if isinstance(err, str) and err else body.get("detail") or json.dumps(body)[:500]
    return BanditError(status, msg, code=body.get("code"), field=body.get("field"), body=body)


def _next_page(link):
    """The query of a Link header's rel="next" target, or None."""
    if not link:
        return None
    for part in link.split(","):
        target, _, params = part.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            target = target.strip().lstrip("<").rstrip(">")
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
            return {k: v[0] for k, v in q.items()}
    return None


def _sse(stream):
    """The events of a text/event-stream body: dicts {"id", "event", "data"} (data decoded from JSON)."""
    ev = {"id": None, "event": "message", "data": []}
    for raw in stream:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if ev["data"]:
                text = "\n".join(ev["data"])
                try:
                    data = json.loads(text)
                except ValueError:
                    data = text
                yield {"id": ev["id"], "event": ev["event"], "data": data}
            ev = {"id": None, "event": "message", "data": []}
            continue
        if line.startswith(":"):
            continue  # a comment: the stream's keep-alive
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            ev["id"] = int(value) if value.isdigit() else value
        elif field == "event":
            ev["event"] = value
        elif field == "data":
            ev["data"].append(value)


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("this needs pandas: apt-get install python3-pandas (or pip install pandas)") from None
    return pandas


def result_table(pd, protocol, result):
    """A family's result as a tidy DataFrame (see Client.result_frame)."""
    if protocol == "ping" and isinstance(result.get("participants"), list):
        names = result["participants"]
        rows = []
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                if i == j:
                    continue
                row = {"from": a, "to": b}
                for key in ("min_us", "median_us", "p99_us", "max_us"):
                    m = result.get(key) or []
                    row[key] = m[i][j] if i < len(m) and j < len(m[i]) else None
                rows.append(row)
        return pd.DataFrame(rows)
    if isinstance(result.get("regret_curve"), list) and result["regret_curve"]:
        every = result.get("regret_curve_every") or 1
        curve = result["regret_curve"]
        return pd.DataFrame({"round": [every * (i + 1) for i in range(len(curve))], "regret": curve})
    if isinstance(result.get("reward_curve"), list) and result["reward_curve"]:
        curve = result["reward_curve"]
        every = result.get("checkpoint_every") or 1
        return pd.DataFrame({"step": [every * (i + 1) for i in range(len(curve))], "average_reward": curve})
    return pd.DataFrame([{k: v for k, v in result.items() if not isinstance(v, (dict, list))}])


def _seg(s):
    return urllib.parse.quote(str(s), safe="")
