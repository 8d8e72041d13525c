"""Write a bandit-node environment in a few lines.

An environment answers a role's queries: a SAMBA data owner's pulls, a BAI
agent's pulls, a P-FCB agent's procurements, an mpccb party's contexts or
rewards. The daemon starts the program once per role and session and speaks
the exec protocol, version 1 (docs/environments.md), on its stdin and stdout;
this module speaks it for you:

    import random
    from bandit_node.env import Environment

    env = Environment()

    @env.pull
    def pull(q):                      # q.arm, q.arms, q.step, q.index, ...
        return 1 if random.random() < 0.6 else 0

    env.run()

A pull of one arm may return a number (sent as "reward") or a list of one;
a pull of several arms, a context, a rewards query and a procurement return
a list (sent as "rewards", "x", "rewards", "qualities"). An exception in a
function is answered as an error, which aborts the session with its text
(kept in this organization's own record, never sent to a peer); the
traceback goes to stderr, whose last lines the daemon quotes locally.

Environment.run writes each answer as one strict JSON line and flushes it,
sends what the functions print() to stderr (stdout is the protocol's), and
exits cleanly on end of input and on SIGTERM. Environment.serve_http
answers the same functions as an http environment. replay() answers
requests without a daemon, through the same code, for unit tests.
"""

import http.server
import io
import json
import math
import signal
import sys
import traceback

HELLO = "bandit-node/environment"
VERSION = 1
KINDS = ("pull", "context", "rewards", "procure")
MAX_LINE = 1 << 20  # the daemon refuses longer lines


class Request:
    """One query from the daemon, with the hello's session facts.

    Fields: id, kind, step, arm (a pull of one arm; else None), arms (pull),
    producers and quantities (procure); session, protocol, role and index
    (the party's index within its role: a SAMBA data owner's arm) from the
    hello; raw, the request as decoded.
    """

    __slots__ = ("id", "kind", "step", "arm", "arms", "producers", "quantities",
                 "session", "protocol", "role", "index", "raw")

    def __init__(self, raw, hello):
        self.raw = raw
        self.id = raw["id"]
        self.kind = raw.get("kind")
        self.step = raw.get("step")
        self.arms = raw.get("arms")
        self.arm = raw.get("arm")
        self.producers = raw.get("producers")
        self.quantities = raw.get("quantities")
        self.session = hello.get("session")
        self.protocol = hello.get("protocol")
        self.role = hello.get("role")
        self.index = hello.get("index", 0)

    def __repr__(self):
        return f"Request({self.raw!r})"


class Environment:
    """The functions that answer a role's queries, one per kind.

    Register them with the decorators pull, context, rewards and procure
    (each function takes a Request), and optionally start (it takes the
    hello as a dict, runs once before the first query, and may raise to
    refuse the session). Then call run().
    """

    def __init__(self):
        self._handlers = {}
        self._start = None

    def pull(self, fn):
        """Register fn(q) answering pulls: a number or a list, one per arm in q.arms."""
        return self._register("pull", fn)

    def context(self, fn):
        """Register fn(q) answering contexts: x, this party's columns of the context."""
        return self._register("context", fn)

    def rewards(self, fn):
        """Register fn(q) answering rewards queries: one reward per arm, arm 0 first."""
        return self._register("rewards", fn)

    def procure(self, fn):
        """Register fn(q) answering procurements: one quality in [0, 1] per producer."""
        return self._register("procure", fn)

    def start(self, fn):
        """Register fn(hello) called once after the daemon's hello; raise to refuse."""
        self._start = fn
        return fn

    def _register(self, kind, fn):
        if not callable(fn):
            raise TypeError(f"@{kind} decorates a function, not {fn!r}")
        self._handlers[kind] = fn
        return fn

    def answer(self, raw, hello):
        """The answer object to one decoded request, as the daemon must read it."""
        qid = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(qid, int) or isinstance(qid, bool) or qid < 0:
            raise ProtocolError(f"a request without a whole-number id: {_clip(raw)}")
        kind = raw.get("kind")
        fn = self._handlers.get(kind)
        if fn is None:
            have = ", ".join(sorted(self._handlers)) or "nothing"
            return {"id": qid, "error": f"this program answers {have}, not a {kind} query"}
        q = Request(raw, hello)
        try:
            value = fn(q)
        except Exception as e:  # the function's own failure: the session's error answer
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            return {"id": qid, "error": f"{kind} at step {q.step}: {type(e).__name__}: {e}"}
        try:
            return {"id": qid, **_answer_fields(q, value)}
        except (TypeError, ValueError) as e:
            msg = f"{kind} at step {q.step}: the function {getattr(fn, '__name__', '?')} returned {e}"
            _log(msg)
            return {"id": qid, "error": msg}

    def serve(self, inp, out):
        """Speak the exec protocol on the text streams inp and out until inp ends.

        Returns the exit status: 0 at the end of input, 1 if the daemon's
        hello is not one this module speaks or start refused the session.
        """
        line = inp.readline()
        if not line:
            return 0
        try:
            hello = json.loads(line)
            if not isinstance(hello, dict):
                raise ValueError("not an object")
        except ValueError:
            _log(f"the first line is not the daemon's hello: {_clip(line)}")
            return 1
        if hello.get("hello") != HELLO or hello.get("version") != VERSION:
            _send(out, {"error": f"this program speaks version {VERSION} of {HELLO}, not {_clip(line)}"})
            return 1
        if self._start is not None:
            try:
                self._start(hello)
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                _send(out, {"error": f"{type(e).__name__}: {e}"})
                return 1
        _send(out, {"hello": HELLO, "version": VERSION})
        while True:
            line = inp.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError:
                _log(f"a request that is not JSON: {_clip(line)}")
                return 1
            try:
                _send(out, self.answer(raw, hello))
            except ProtocolError as e:
                _log(str(e))
                return 1

    def run(self):
        """Serve the daemon on stdin and stdout, then exit the process.

        print() in the functions goes to stderr while it runs. Exits 0 on
        end of input or SIGTERM (the daemon's ways to end the session).
        """
        proto_out = sys.stdout
        sys.stdout = sys.stderr
        signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            status = self.serve(sys.stdin, proto_out)
        except (BrokenPipeError, KeyboardInterrupt):
            status = 0
        finally:
            sys.stdout = proto_out
        sys.exit(status)


    def http_server(self, host="127.0.0.1", port=8080):
        """An HTTP server answering the http protocol, version 1, with these functions.

        Each query is a POST of its request object; the answer is the body
        of a 200 response (docs/environments.md, the http protocol). Point
        the role's url at it and call serve_forever() on the server (or
        shutdown() from another thread). The daemon reaches plain http on a
        loopback address only. start is called with the first request's
        session facts, once per session.
        """
        return _HTTPServer((host, port), _handler_class(self))

    def serve_http(self, host="127.0.0.1", port=8080):
        """Serve the http protocol until interrupted (see http_server)."""
        srv = self.http_server(host, port)
        _log(f"serving the http protocol on http://{host}:{srv.server_address[1]}/")
        try:
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            srv.server_close()


class ProtocolError(Exception):
    """A request this module cannot answer: the program stops."""


def replay(env, requests, hello=None):
    """Answer requests with env as the daemon would see it, without a daemon.

    requests: dicts as the daemon writes them ({"id": 1, "kind": "pull",
    "step": 0, "arm": 0, "arms": [0]}) or their JSON lines; hello: the
    daemon's hello fields to add (session, protocol, role, index). Returns
    the program's answers to the requests as dicts, decoded from the exact
    lines the program would write. Raises ProtocolError if the program
    refuses the hello or stops early.
    """
    h = {"hello": HELLO, "version": VERSION, "session": "0000000000000000",
         "protocol": "", "role": "", "index": 0}
    h.update(hello or {})
    lines = [json.dumps(h)]
    for r in requests:
        lines.append(r if isinstance(r, str) else json.dumps(r))
    out = io.StringIO()
    status = env.serve(io.StringIO("".join(line.rstrip("\n") + "\n" for line in lines)), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    if not answers or answers[0] != {"hello": HELLO, "version": VERSION}:
        raise ProtocolError(f"the program refused the hello: {answers[:1]}")
    if status != 0 or len(answers) != len(lines):
        raise ProtocolError(f"the program stopped (status {status}) after {len(answers) - 1} of {len(lines) - 1} answers")
    return answers[1:]


def _answer_fields(q, value):
    """The answer's one field for q's kind, from what its function returned."""
    if q.kind == "pull":
        arms = q.arms or []
        if not _is_list(value):
            if len(arms) != 1:
                raise ValueError(f"a pull of {len(arms)} arms needs a list of {len(arms)} rewards, not one number")
            return {"reward": _finite(value, "reward")}
        return {"rewards": _numbers(value, "rewards", len(arms))}
    if q.kind == "context":
        return {"x": _numbers(value, "x")}
    if q.kind == "rewards":
        return {"rewards": _numbers(value, "rewards")}
    if q.kind == "procure":
        return {"qualities": _numbers(value, "qualities", len(q.producers or []))}
    raise ValueError(f"unknown query kind {q.kind!r}")


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_list(v):
    return hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict))


def _finite(v, name):
    if not _is_number(v):
        if isinstance(v, (str, bytes, bool)) or not hasattr(v, "__float__"):
            raise TypeError(f"{name}: {v!r} is not a number")
        v = float(v)  # numpy scalars, Decimal, Fraction
    if not math.isfinite(v):
        raise ValueError(f"{name}: {v!r} is not a finite number")
    return v


def _numbers(value, name, want=None):
    if not _is_list(value):
        raise TypeError(f"{name}: give a list of numbers, not {_clip(value)}")
    xs = [_finite(v, name) for v in value]
    if want is not None and len(xs) != want:
        raise ValueError(f"{name}: {len(xs)} values; want {want}")
    if not xs:
        raise ValueError(f"{name}: an empty list")
    return xs


def _send(out, obj):
    line = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    if len(line) >= MAX_LINE:
        obj = {"id": obj.get("id"), "error": f"an answer of {len(line)} bytes; the daemon reads at most {MAX_LINE}"}
        line = json.dumps(obj, separators=(",", ":"))
    out.write(line + "\n")
    out.flush()


def _log(msg):
    print("bandit_node.env: " + msg, file=sys.stderr, flush=True)


def _clip(v):
    s = v.strip() if isinstance(v, str) else repr(v)
    return repr(s[:80] + ("…" if len(s) > 80 else ""))


def _exit_on_signal(signum, frame):
    raise SystemExit(0)


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


def _handler_class(env):
    """The request handler of env's http server: one query per POST."""
    started = set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            if self.headers.get("Bandit-Environment-Version", "1") != str(VERSION):
                return self._reply(400, {"error": f"this service speaks version {VERSION} of the http protocol"})
            try:
                n = int(self.headers.get("Content-Length", "0"))
                if not 0 < n <= MAX_LINE:
                    raise ValueError(f"a body of {n} bytes")
                raw = json.loads(self.rfile.read(n))
            except ValueError as e:
                return self._reply(400, {"error": f"not a request: {e}"})
            hello = _hello_from_headers(self.headers)
            try:
                key = (hello["session"], hello["role"], hello["index"])
                if env._start is not None and key not in started:
                    env._start(hello)
                    started.add(key)
                self._reply(200, env.answer(raw, hello))
            except ProtocolError as e:
                self._reply(400, {"error": str(e)})
            except Exception as e:  # start refused the session
                traceback.print_exc(file=sys.stderr)
                self._reply(200, {"id": raw.get("id") if isinstance(raw, dict) else None,
                                  "error": f"{type(e).__name__}: {e}"})

        def _reply(self, status, obj):
            body = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # stderr, not stdout; quiet on success
            pass

    return Handler


def _hello_from_headers(headers):
    """The hello's facts from the http protocol's headers (Bandit-Role: "samba data_owner 3")."""
    parts = headers.get("Bandit-Role", "").split()
    index = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else 0
    return {"hello": HELLO, "version": VERSION, "session": headers.get("Bandit-Session", ""),
            "protocol": parts[0] if parts else "", "role": parts[1] if len(parts) > 1 else "", "index": index}
