"""Run `bandit-node simulate` from Python and get its result back.

Standard library only. A spec is a dict (written to a temporary TOML file)
or the path of a spec file; the result is the dict `simulate --json`
prints, the shape of a real session's result (`session result --json`):

    from bandit_node.sim import simulate

    r = simulate({"protocol": "samba",
                  "params": {"algorithm": "ucb", "budget": 2000},
                  "simulation": {"arms": [0.6, 0.5, 0.4], "seed": 1}})
    r["result"]["cumulative_reward"]       # the family's result
    r["session"]["state"]                  # "completed"
    r["simulation"]["elapsed_seconds"]     # what the simulator measured

A [simulation.local.<role>] table has the simulator ask your own program
for that role, as a daemon would (docs/environments.md), so a data owner's
program is tried before it joins a session:

    spec["simulation"]["local"] = {"data_owner": {
        "source": "exec", "command": [sys.executable, "owner.py"]}}

The binary is `binary`, else $BANDIT_NODE_BIN, else `bandit-node` on PATH.

The papers' experiments run in the lab's own binary, `bandit-lab`
($BANDIT_LAB_BIN or PATH); experiment() returns what it wrote, and rows()
and frame() read its CSV outputs (every figure's data is NAME.data.csv):

    from bandit_node.sim import experiment, frame

    out = experiment("samba", "out/samba", runs=1, budget=2000, k=[3, 10])
    out["manifest"]["build"]["revision"]
    frame(out["dir"] + "/samba_reward.data.csv")    # a series column, then the plotted x, y and its interval
"""

import json
import math
import os
import shutil
import subprocess
import tempfile

from .client import BanditError

__all__ = ["simulate", "experiment", "rows", "frame", "find_binary", "to_toml", "SimulationError"]


class SimulationError(BanditError):
    """`bandit-node simulate` failed: message is its error, in its words.

    status is None; code and field are the error's class and the spec's
    key at fault when the binary says (spec.unknown_key, params.budget).
    """

    def __str__(self):
        code = f" ({self.code})" if self.code else ""
        return f"simulate{code}: {self.message}"


def find_binary(binary=None, name="bandit-node"):
    """The path of the bandit-node (or bandit-lab) binary to run."""
    if binary:
        return binary
    env = os.environ.get("BANDIT_LAB_BIN" if name == "bandit-lab" else "BANDIT_NODE_BIN")
    if env:
        return env
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"{name} is not on PATH; pass binary= or set "
        + ("$BANDIT_LAB_BIN" if name == "bandit-lab" else "$BANDIT_NODE_BIN")
    )


def simulate(spec, seed=None, binary=None, timeout=3600, cwd=None):
    """Simulate a session of spec (a dict or a spec file's path).

    seed overrides the spec's simulation.seed; timeout (seconds) bounds the
    run (subprocess.TimeoutExpired past it). A dict's relative paths (a
    [simulation.local] table's command, file) are taken from cwd, default
    the current directory; a file's from its own directory, as the binary
    does. Returns the dict of `simulate --json`; raises SimulationError
    with the binary's message when the spec is refused or the run fails.
    """
    args = [find_binary(binary), "simulate"]
    tmp = None
    try:
        if isinstance(spec, dict):
            tmp = tempfile.NamedTemporaryFile(
                "w", suffix=".toml", prefix="bandit-spec-", dir=cwd or os.getcwd(), delete=False, encoding="utf-8"
            )
            with tmp:
                tmp.write(to_toml(spec))
            args.append(tmp.name)
        else:
            args.append(os.fspath(spec))
        args.append("--json")
        if seed is not None:
            args += ["--seed", str(int(seed))]
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
    if p.returncode != 0:
        raise _error(p)
    return json.loads(p.stdout)


def experiment(name, out_dir, binary=None, timeout=24 * 3600, progress=False, **options):
    """Run `bandit-lab experiment NAME --out OUT_DIR` with options as flags; return what it wrote.

    Each option becomes a flag: runs=3 → --runs 3, paillier_bits=512 →
    --paillier-bits 512, a list → comma-separated (k=[3, 10] → --k 3,10),
    True → the bare flag, False/None → left out. progress=False passes
    --quiet. Returns {"dir", "manifest" (manifest.json as a dict), "files"
    (the paths it lists), "stdout"}; raises SimulationError with the
    lab's message when it fails.
    """
    args = [find_binary(binary, "bandit-lab"), "experiment", str(name), "--out", os.fspath(out_dir)]
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    if not progress:
        args.append("--quiet")
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        msg = p.stderr.strip() or p.stdout.strip() or f"exit status {p.returncode}"
        raise SimulationError(None, msg.removeprefix("bandit-lab: "), body=msg)
    path = os.path.join(os.fspath(out_dir), "manifest.json")
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    files = [os.path.join(os.fspath(out_dir), f["name"]) if isinstance(f, dict) else f for f in manifest.get("files", [])]
    return {"dir": os.fspath(out_dir), "manifest": manifest, "files": files, "stdout": p.stdout}


def rows(path):
    """An experiment's CSV output as a list of dicts, numbers as float where they read as one."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def frame(path):
    """An experiment's CSV output as a pandas DataFrame (needs pandas: apt-get install python3-pandas)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("frame() needs pandas: apt-get install python3-pandas (or pip install pandas); rows() needs nothing") from None
    return pandas.read_csv(path)


def _number(v):
    if v is None:
        return v
    try:
        f = float(v)
    except ValueError:
        return v
    if f.is_integer() and v.lstrip("-").isdigit():
        return int(v)
    return f


def _error(p):
    """The SimulationError of a failed run: its --json error on stdout, or stderr."""
    try:
        e = json.loads(p.stdout)
        return SimulationError(None, e.get("detail") or e.get("error") or p.stderr.strip(),
                               code=e.get("code"), field=e.get("field") or None, body=e)
    except (ValueError, AttributeError):
        msg = p.stderr.strip() or p.stdout.strip() or f"exit status {p.returncode}"
        return SimulationError(None, msg.removeprefix("bandit-node: "), body=msg)


def to_toml(spec):
    """A spec dict as TOML text: scalars, lists and nested tables (dicts).

    Raises TypeError for a value TOML cannot hold (None, a NaN, an object).
    """
    lines = []
    _table(lines, [], spec)
    return "\n".join(lines) + "\n"


def _table(lines, path, d):
    plain = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
    tables = [(k, v) for k, v in d.items() if isinstance(v, dict)]
    if path and (plain or not tables):
        lines.append("[" + ".".join(_key(k) for k in path) + "]")
    for k, v in plain:
        lines.append(f"{_key(k)} = {_value(v, '.'.join(map(str, path + [k])))}")
    for k, v in tables:
        _table(lines, path + [k], v)


def _key(k):
    k = str(k)
    if k and all(c.isalnum() and c.isascii() or c in "_-" for c in k):
        return k
    return _string(k)


def _string(s):
    out = ['"']
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise TypeError(f"{where}: {v} is not a finite number, which a spec needs")
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x, f'{where}.{k}')}" for k, x in v.items()) + "}"
    raise TypeError(f"{where}: {type(v).__name__} {v!r} cannot be written in a spec")
