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

    def sessions(self, name=None):
        """Every session this node knows, newest first (without specs); name: a standing session's runs."""
        return self._call("GET", "/v0/sessions", {"name": name} if name else None)

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

    def _call(self, method, path, query=None, body=None, ctype=None):
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        req = urllib.request.Request(url, data=body, method=method)
        req.add_header("Authorization", "Bearer " + self._token)
        req.add_header("Accept", "application/json")
        if ctype:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as r:
                data = r.read()
        except urllib.error.HTTPError as e:
            raise _error(e.code, e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise BanditError(None, f"cannot reach the daemon at {self.base}: {reason}") from e
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            raise BanditError(200, f"{method} {path}: the answer is not JSON: {data[:200]!r}") from None


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


def _seg(s):
    return urllib.parse.quote(str(s), safe="")
