// bandit-node console: every datum comes from the /v0 control API with the
// token the operator typed, kept in this tab's sessionStorage only.
const $ = (s, el = document) => el.querySelector(s);
const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const state = { token: sessionStorage.getItem("bandit-token") || "", operator: false, node: null, sessions: [], abort: null };

async function api(method, path, body) {
  const res = await fetch(path, {
    method, cache: "no-store",
    headers: { Authorization: "Bearer " + state.token, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) {
    const err = new Error((data && data.detail) || res.status + " " + res.statusText);
    err.status = res.status;
    throw err;
  }
  return data;
}

function toast(msg) {
  const t = $("#toast");
  t.textContent = msg;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (t.textContent = ""), 6000);
}

const ago = (t) => {
  if (!t) return "—";
  const s = Math.round((Date.now() - new Date(t)) / 1000);
  const a = Math.abs(s), f = a < 90 ? a + " s" : a < 5400 ? Math.round(a / 60) + " min" : a < 172800 ? Math.round(a / 3600) + " h" : Math.round(a / 86400) + " d";
  return s >= 0 ? f + " ago" : "in " + f;
};
const when = (t) => (t ? `<time datetime="${esc(t)}" title="${esc(new Date(t).toISOString())}">${esc(ago(t))}</time>` : "—");
const badge = (cls, text) => `<span class="badge ${cls}">${esc(text)}</span>`;
const stateBadge = (s) => badge({ completed: "ok", running: "info", proposed: "info", accepted: "info", aborted: "bad", failed: "bad", cancelled: "warn" }[s] || "info", s);
const active = (s) => !["completed", "aborted", "failed", "cancelled", "rejected"].includes(s.state);

// ---- sign in ----
async function signIn(token) {
  state.token = token;
  state.node = await api("GET", "/v0/node");
  // The API tells the token its scope; the console offers the operator's
  // actions only to the operator token (the API refuses them to the other).
  state.operator = (await api("GET", "/v0/auth/scope")).scope === "operator";
  sessionStorage.setItem("bandit-token", token);
  $("#login").hidden = true;
  $("#nav").hidden = false;
  $("#logout").hidden = false;
  $("#node-name").textContent = state.node.name;
  $("#scope").textContent = state.operator ? "operator" : "read-only";
  $("#scope").className = "pill " + (state.operator ? "warn" : "");
  document.body.dataset.scope = state.operator ? "operator" : "read";
  listen();
  route();
}

function showLogin(msg) {
  state.token = "";
  sessionStorage.removeItem("bandit-token");
  if (state.abort) state.abort.abort();
  $("#nav").hidden = true;
  $("#logout").hidden = true;
  $("#scope").textContent = "";
  $("#live").textContent = "";
  $("#page").innerHTML = "";
  $("#login").hidden = false;
  $("#login-error").textContent = msg || "";
  $("#token").focus();
}

// ---- live events: fetch() streaming, so the token goes in a header ----
async function listen() {
  if (state.abort) state.abort.abort();
  const ctl = new AbortController();
  state.abort = ctl;
  let last = "";
  for (let attempt = 0; !ctl.signal.aborted; attempt++) {
    try {
      const res = await fetch("/v0/events", { headers: { Authorization: "Bearer " + state.token, ...(last ? { "Last-Event-ID": last } : {}) }, signal: ctl.signal, cache: "no-store" });
      if (!res.ok) throw new Error("events: " + res.status);
      setLive(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let kind = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) last = line.slice(4);
            else if (line.startsWith("event: ")) kind = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (data) onEvent(kind, data);
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return;
    }
    setLive(false);
    await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** Math.min(attempt, 4), 15000)));
  }
}
function setLive(on) {
  const l = $("#live");
  l.textContent = on ? "live" : "reconnecting…";
  l.className = "pill " + (on ? "ok" : "bad");
}

let refreshTimer = null;
function onEvent(kind, data) {
  let ev = {};
  try { ev = JSON.parse(data); } catch { return; }
  if (kind === "progress" && ev.id) {
    for (const el of document.querySelectorAll(`[data-progress="${CSS.escape(ev.id)}"]`)) el.outerHTML = progressCell({ id: ev.id, state: "running", progress: ev.progress, started: el.dataset.started });
    return;
  }
  // Anything else may change what the page shows: redraw it, at most
  // twice a second.
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => route(true), 500);
}

// ---- pages ----
const pages = { node: pageNode, partners: pagePartners, sessions: pageSessions, standing: pageStanding, session: pageSession, policy: pagePolicy };
let routeSeq = 0;
async function route(quiet) {
  if (!state.token) return showLogin();
  // A page drawn after a later one was asked for would cover it: only the
  // newest request's answer is drawn.
  const seq = ++routeSeq;
  const [name, arg] = (location.hash.slice(1) || "node").split("/");
  const page = pages[name] || pageNode;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.page === name || (name === "session" && a.dataset.page === "sessions")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  try {
    const html = await page(arg ? decodeURIComponent(arg) : "");
    if (seq !== routeSeq) return;
    // A redraw keeps what the operator typed and where the focus was.
    const typed = [...document.querySelectorAll("#page textarea[id], #page input[id]")].map((el) => [el.id, el.value]);
    const act = document.activeElement;
    const keep = act && (act.id ? "#" + CSS.escape(act.id) : ["peer", "refused", "session"].map((k) => act.dataset && act.dataset[k] !== undefined ? `[data-${k}="${CSS.escape(act.dataset[k])}"]` : "").find(Boolean));
    $("#page").innerHTML = html;
    if (quiet) {
      for (const [id, v] of typed) { const el = document.getElementById(id); if (el && !el.value) el.value = v; }
      const el = keep && document.querySelector("#page " + keep);
      if (el) el.focus({ preventScroll: true });
    }
    wire();
  } catch (e) {
    if (seq !== routeSeq) return;
    if (e.status === 401) return showLogin("That token was refused (401): check api.token_file or api.read_token_file.");
    $("#page").innerHTML = `<div class="card"><h1>Could not load this page</h1><p class="error">${esc(e.message)}</p></div>`;
  }
  if (!quiet) $("#main").focus({ preventScroll: true });
}

async function pageNode() {
  const n = (state.node = await api("GET", "/v0/node"));
  $("#node-name").textContent = n.name;
  const r = n.last_reload;
  const warn = (n.warnings || []).map((w) => `<li>${esc(w)}</li>`).join("");
  return `<h1>Node ${esc(n.name)}</h1><div class="grid">
  <div class="card"><h2>Health</h2><dl class="kv">
    <dt>Readiness</dt><dd id="ready">${n.ready ? badge("ok", "ready") : `${badge("bad", "not ready")}<div class="error">${esc(n.not_ready)}</div>`}</dd>
    <dt>Storage</dt><dd id="storage">${n.storage_problem ? `${badge("bad", "problem")}<div class="error">${esc(n.storage_problem)}</div>` : badge("ok", "takes its writes")}</dd>
    <dt>Up since</dt><dd>${n.started ? `${esc(new Date(n.started).toLocaleString())} <span class="muted">(${esc(duration(n.uptime_s))})</span>` : "—"}</dd>
  </dl></div>
  <div class="card"><h2>Environments</h2>${(n.environments || []).length ? `<ul class="plain" id="environments">${n.environments.map((e) => `<li data-env="${esc(e.key)}"><code>${esc(e.key)}</code> ${badge("info", e.source)}
      ${e.session ? `${e.warning || e.last_error || e.restarts ? badge("warn", e.restarts ? `${e.restarts} restart${e.restarts > 1 ? "s" : ""}` : "trouble") : badge("ok", "healthy")}
      <br><span class="muted">last used by <a class="mono" href="#session/${encodeURIComponent(e.session)}">${esc(e.session)}</a>, ended ${when(e.finished)}</span>
      ${e.last_error ? `<br><span class="error mono">${esc(e.last_error)}</span>` : ""}${e.warning ? `<br><span class="error">${esc(e.warning)}</span>` : ""}` : '<br><span class="muted">not used by any session kept</span>'}</li>`).join("")}</ul>`
    : '<p class="muted">Every role this node plays takes its simulated environment: no program, service or file of its own is set up.</p>'}</div>
  <div class="card"><h2>Identity</h2><dl class="kv">
    <dt>Name</dt><dd>${esc(n.name)}</dd>
    <dt>Peer ID</dt><dd class="mono">${esc(n.peer_id)}</dd>
    <dt>Version</dt><dd class="mono">${esc(n.version)}</dd>
    <dt>Protocols</dt><dd>${(n.protocols || []).map((p) => badge("info", p)).join(" ") || "—"}</dd>
  </dl></div>
  <div class="card"><h2>Listen addresses</h2><ul>${(n.addrs || []).map((a) => `<li class="mono">${esc(a)}</li>`).join("") || "<li>none</li>"}</ul></div>
  <div class="card"><h2>Configuration</h2><dl class="kv">
    <dt>Last reload</dt><dd>${r ? `${badge(r.result === "applied" || r.result === "ok" ? "ok" : r.result === "unchanged" ? "info" : "bad", r.result)} ${when(r.at)}` : "none since start"}</dd>
    ${r && r.reason ? `<dt>Why</dt><dd>${esc(r.reason)}</dd>` : ""}
    ${r && r.change ? `<dt>What changed</dt><dd>${esc(r.change)}</dd>` : ""}
  </dl>
  ${state.operator ? "" : '<p class="muted">Reloading needs the operator token.</p>'}
  <button type="button" id="reload" class="secondary" ${state.operator ? "" : "disabled"}>Reload config</button></div>
  <div class="card"><h2>Warnings</h2>${warn ? `<ul class="error">${warn}</ul>` : '<p class="muted">No configuration warnings.</p>'}</div>
  </div>`;
}

async function pagePartners() {
  const [peers, refused] = await Promise.all([api("GET", "/v0/peers"), api("GET", "/v0/peers/refused")]);
  const mine = (state.node && state.node.version) || "";
  // An agent string is "bandit-node/VERSION (REVISION)"; skew is flagged
  // only when both versions are known and differ.
  const ver = (agent) => { const m = /^bandit-node\/(\S+)/.exec(agent || ""); return m ? m[1] : ""; };
  const rows = peers.map((p) => {
    const known = ver(p.agent), v = known || p.agent || "";
    const skew = known && mine && known !== mine.split(" ")[0];
    return `<tr data-peer="${esc(p.name)}" tabindex="0" aria-label="${esc(p.name)}: ${p.connected ? "connected" : "not connected"}">
      <td data-label="Peer"><strong>${esc(p.name)}</strong><br><span class="mono muted">${esc(p.peer_id)}</span></td>
      <td data-label="State">${p.connected ? badge("ok", "connected") : badge("bad", "not connected")}</td>
      <td data-label="Path">${esc(p.conn || "—")}</td>
      <td data-label="Latency">${p.latency_us ? (p.latency_us / 1000).toFixed(1) + " ms" : "—"}</td>
      <td data-label="Version" class="mono">${v ? esc(v) : "—"} ${skew ? badge("warn", "differs from ours") : ""}</td>
      <td data-label="Last error">${p.last_error ? `<span class="error">${esc(p.last_error)}</span>` : ""}${p.reason ? `<br><span class="muted">${esc(p.reason)}</span>` : ""}${!p.last_error && !p.reason ? "—" : ""}</td></tr>`;
  }).join("");
  const ref = refused.refused.map((r) => `<tr data-refused="${esc(r.peer_id)}" tabindex="0" aria-label="refused peer ${esc(r.peer_id)}, ${r.count} attempts">
      <td data-label="Peer ID" class="mono">${esc(r.peer_id)}</td><td data-label="From" class="mono">${esc(r.addr || "—")}</td>
      <td data-label="Attempts">${esc(r.count)}</td><td data-label="First">${when(r.first)}</td><td data-label="Last">${when(r.last)}</td></tr>`).join("");
  return `<h1>Partners</h1><div class="card"><table class="stack" id="partners"><caption class="muted">Address-book peers as this node sees them now. Arrow keys move between rows.</caption>
    <thead><tr><th scope="col">Peer</th><th scope="col">State</th><th scope="col">Path</th><th scope="col">Latency</th><th scope="col">Version</th><th scope="col">Last error</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="6">The address book is empty.</td></tr>'}</tbody></table></div>
  <div class="card"><h2>Refused: not in the address book</h2>
    <p class="muted">Peers that tried to connect since the daemon started, once each (the 64 most recent). To let one in, its operator sends you its peer card (<code>bandit-node id --peer-card</code>), which you add below or with <code>bandit-node peers add</code>; send them this node's card in return.</p>
    <table class="stack" id="refused"><thead><tr><th scope="col">Peer ID</th><th scope="col">From</th><th scope="col">Attempts</th><th scope="col">First</th><th scope="col">Last</th></tr></thead>
    <tbody>${ref || '<tr><td colspan="5" class="muted">No peer was refused.</td></tr>'}</tbody></table></div>
  <div class="grid">
  <div class="card"><h2>This node's peer card</h2><p class="muted">Send it to a partner's operator, who adds it to their address book.</p>
    <pre class="log" id="own-card" tabindex="0">${esc(refused.peer_card)}</pre>
    <button type="button" class="secondary" id="copy-card">Copy the card</button></div>
  <div class="card"><h2>Add a partner's peer card</h2>${state.operator ? "" : '<p class="muted">Adding a peer needs the operator token.</p>'}
    <label for="card">Peer card (one <code>[[peers]]</code> block)</label><textarea id="card" spellcheck="false" ${state.operator ? "" : "disabled"}></textarea>
    <button type="button" id="add-card" ${state.operator ? "" : 'disabled title="needs the operator token"'}>Add to the address book and reload</button>
    <p id="add-card-result" role="status"></p></div></div>`;
}

async function pagePolicy() {
  const pol = await api("GET", "/v0/policy");
  const who = (p) => {
    const i = p.initiators || [];
    if (i.includes("*")) return "any partner in the address book, and this node";
    return i.length ? `${i.map(esc).join(", ")}, and this node` : "this node only";
  };
  const lim = (l) => `<li><code>${esc(l.key)}</code> ${l.bound === "max" ? "≤" : "≥"} <strong>${esc(l.value)}</strong>${l.default ? ` ${badge("info", "daemon default")}` : ""}${l.figure ? `<br><span class="muted">${esc(l.figure)}</span>` : ""}</li>`;
  const fam = (p) => {
    if (!p.enabled) return `<section class="card" data-protocol="${esc(p.protocol)}"><h2>${esc(p.protocol)} ${badge("bad", "declined")}</h2><p class="muted">No <code>[policy.${esc(p.protocol)}]</code> in the config: this node takes part in no ${esc(p.protocol)} session, its own included.</p></section>`;
    const roles = p.roles.map((r) => `<tr data-role="${esc(r.role)}">
      <td data-label="Role"><strong>${esc(r.role)}</strong><br><span class="muted">${esc(r.doc)}</span></td>
      <td data-label="Plays">${r.accepted ? (r.missing ? `${badge("warn", "not configured")}<div class="error">${esc(r.missing)}</div>` : badge("ok", "yes")) : badge("info", "no")}</td>
      <td data-label="Outcomes from">${r.accepted ? esc(r.environment) : "—"}</td>
      <td data-label="What it learns">${esc(r.learns)}</td></tr>`).join("");
    return `<section class="card" data-protocol="${esc(p.protocol)}"><h2>${esc(p.protocol)} ${badge("ok", "accepted")}</h2>
      <dl class="kv"><dt>Proposed by</dt><dd>${who(p)}</dd>
      <dt>Sessions</dt><dd>${p.any_session ? "any, started by hand or standing" : `only ${(p.sessions || []).map((s) => (s ? `standing <code>${esc(s)}</code>` : "those started by hand")).join(", ") || "none"}`}</dd>
      <dt>Limits</dt><dd>${p.limits && p.limits.length ? `<ul class="plain">${p.limits.map(lim).join("")}</ul>` : '<span class="muted">none beyond the protocol\'s own checks</span>'}</dd></dl>
      <table class="stack"><thead><tr><th scope="col">Role</th><th scope="col">Plays</th><th scope="col">Outcomes from</th><th scope="col">What it learns of the others' data</th></tr></thead><tbody>${roles}</tbody></table></section>`;
  };
  const on = pol.protocols.filter((p) => p.enabled), off = pol.protocols.filter((p) => !p.enabled);
  return `<h1>What this node accepts</h1>
  <p class="lead">${esc(pol.node)} takes part only in sessions its policy allows: a proposal outside it is declined with the reason, before any data moves. Only peers in its address book can connect at all (see <a href="#partners">Partners</a>). What each role learns assumes the papers' model: honest-but-curious parties that do not collude.</p>
  ${on.map(fam).join("")}${off.map(fam).join("")}`;
}

function duration(s) {
  s = Math.round(s || 0);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min ${s % 60} s` : `${s} s`;
}

function pct(p) { return p && p.total > 0 ? Math.min(100, Math.round((100 * p.step) / p.total)) : 0; }
function progressCell(s) {
  const p = s.progress || {}, v = s.state === "completed" ? 100 : pct(p);
  let eta = "";
  if (active(s) && s.started && p.step > 0 && p.total > p.step) {
    const el = (Date.now() - new Date(s.started)) / 1000;
    eta = " · ETA " + Math.max(1, Math.round((el / p.step) * (p.total - p.step))) + " s";
  }
  return `<div data-progress="${esc(s.id)}" data-started="${esc(s.started || "")}"><div class="bar ${v >= 100 ? "done" : ""}" role="progressbar" aria-label="progress of ${esc(s.id)}" aria-valuemin="0" aria-valuemax="100" aria-valuenow="${v}"><span style="width:${v}%"></span></div><span class="pcttext">${v} %</span><span class="muted">${p.total ? ` · ${p.step}/${p.total}` : ""}${eta}</span></div>`;
}
const roles = (r) => Object.entries(r || {}).map(([role, orgs]) => `${esc(role)}: ${orgs.map(esc).join(", ")}`).join("<br>");

async function pageSessions() {
  const ss = (state.sessions = await api("GET", "/v0/sessions"));
  const row = (s) => `<tr data-session="${esc(s.id)}" data-state="${esc(s.state)}">
    <td data-label="Session"><a href="#session/${encodeURIComponent(s.id)}" class="mono">${esc(s.id)}</a>${s.name ? `<br><span class="muted">${esc(s.name)}</span>` : ""}</td>
    <td data-label="Protocol">${esc(s.protocol)}</td><td data-label="Roles" class="hide-narrow">${roles(s.roles)}</td>
    <td data-label="State">${stateBadge(s.state)}${s.reason ? `<br><span class="muted">${esc(s.reason)}</span>` : ""}</td>
    <td data-label="Progress">${progressCell(s)}</td><td data-label="Created">${when(s.created)}</td>
    <td data-label="">${active(s) ? `<button type="button" class="danger cancel" data-id="${esc(s.id)}" ${state.operator ? "" : 'disabled title="needs the operator token"'} aria-label="Cancel session ${esc(s.id)}">Cancel</button>` : ""}</td></tr>`;
  const head = `<thead><tr><th scope="col">Session</th><th scope="col">Protocol</th><th scope="col" class="hide-narrow">Roles</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Created</th><th scope="col"><span class="hide-narrow">Action</span></th></tr></thead>`;
  const act = ss.filter(active), done = ss.filter((s) => !active(s));
  return `<h1>Sessions</h1>
  <div class="card"><h2>Active</h2><table class="stack">${head}<tbody>${act.map(row).join("") || '<tr><td colspan="7" class="muted">No session is running.</td></tr>'}</tbody></table></div>
  <div class="card"><h2>Recent</h2><table class="stack">${head}<tbody>${done.slice(0, 50).map(row).join("") || '<tr><td colspan="7" class="muted">None yet.</td></tr>'}</tbody></table></div>
  <div class="card"><h2>Start a session</h2>${state.operator ? "" : '<p class="muted">Starting sessions needs the operator token.</p>'}
  <label for="spec">Spec (TOML, as <code>bandit-node start</code> takes)</label><textarea id="spec" ${state.operator ? "" : "disabled"}></textarea>
  <button type="button" id="start" ${state.operator ? "" : "disabled"}>Start</button></div>`;
}

async function pageSession(id) {
  const s = await api("GET", "/v0/sessions/" + encodeURIComponent(id));
  const rec = s.state === "completed" ? await api("GET", "/v0/sessions/" + encodeURIComponent(id) + "/result").catch(() => ({})) : {};
  const logs = await api("GET", "/v0/sessions/" + encodeURIComponent(id) + "/logs").catch(() => ({ lines: [] }));
  const charts = rec.result || rec.local ? renderResult(s.protocol, rec) : "";
  const envs = Object.entries(s.environments || {}).map(([party, e]) => `<tr><td data-label="Party">${esc(party)}</td><td data-label="Source">${esc(e.source)}</td>
    <td data-label="Queries">${esc(e.queries)}${e.unanswered ? ` (${esc(e.unanswered)} unanswered)` : ""}</td><td data-label="Time">${(+e.seconds).toFixed(2)} s, longest ${(+e.max_ms).toFixed(1)} ms</td>
    <td data-label="Restarts">${esc(e.restarts || 0)}${e.last_error ? `<br><span class="error mono">${esc(e.last_error)}</span>` : ""}</td>
    <td data-label="Warning">${e.warning ? `<span class="error">${esc(e.warning)}</span>` : "—"}</td></tr>`).join("");
  return `<p><a href="#sessions">← Sessions</a></p><h1>Session <span class="mono">${esc(s.id)}</span></h1>
  <div class="grid"><div class="card"><dl class="kv">
    <dt>Protocol</dt><dd>${esc(s.protocol)}</dd><dt>State</dt><dd>${stateBadge(s.state)}</dd>
    ${s.reason ? `<dt>Reason</dt><dd>${esc(s.reason)}</dd>` : ""}${s.detail ? `<dt>Detail</dt><dd>${esc(s.detail)}</dd>` : ""}
    <dt>Initiator</dt><dd>${esc(s.initiator)}${s.initiated_here ? " (this node)" : ""}</dd>
    <dt>Roles</dt><dd>${roles(s.roles)}</dd><dt>Progress</dt><dd>${progressCell(s)}</dd>
    <dt>Created</dt><dd>${when(s.created)}</dd><dt>Finished</dt><dd>${when(s.finished)}</dd>
  </dl>${active(s) ? `<button type="button" class="danger cancel" data-id="${esc(s.id)}" ${state.operator ? "" : "disabled"}>Cancel session</button>` : ""}</div>
  <div class="card"><h2>Log tail</h2><pre class="log" tabindex="0">${esc((logs.lines || []).slice(-60).join("\n")) || "no lines kept"}</pre></div></div>
  ${envs ? `<div class="card"><h2>This organization's environments</h2><table class="stack"><thead><tr><th scope="col">Party</th><th scope="col">Source</th><th scope="col">Queries</th><th scope="col">Time</th><th scope="col">Restarts, last stderr line</th><th scope="col">Warning</th></tr></thead><tbody>${envs}</tbody></table></div>` : ""}
  <div class="card"><h2>Result</h2>${rec.result || rec.local ? charts || '<p class="muted">The result has no series to chart.</p>' : '<p class="muted">No result yet.</p>'}
  <p><button type="button" class="secondary" id="raw" data-id="${esc(s.id)}">Download raw JSON</button></p></div>`;
}

async function pageStanding() {
  const st = await api("GET", "/v0/standing");
  const rows = st.map((s) => `<tr><td data-label="Name"><strong>${esc(s.name)}</strong></td><td data-label="Protocol">${esc(s.protocol)}</td><td data-label="Schedule" class="mono">${esc(s.schedule)}</td>
    <td data-label="Next due">${when(s.next_due)}</td><td data-label="Last run">${s.last ? `${stateBadge(s.last.state)} ${when(s.last.finished)}${s.last.reason ? `<br><span class="muted">${esc(s.last.reason)}</span>` : ""}` : "—"}</td>
    <td data-label="Retries">${s.retries ? `${s.retries} · next ${when(s.retry_at)}` : "—"}</td><td data-label="Running">${s.active ? `<a class="mono" href="#session/${encodeURIComponent(s.active)}">${esc(s.active)}</a>` : "—"}</td></tr>`).join("");
  return `<h1>Standing sessions</h1><div class="card"><table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Protocol</th><th scope="col">Schedule</th><th scope="col">Next due</th><th scope="col">Last run</th><th scope="col">Retries</th><th scope="col">Running</th></tr></thead>
  <tbody>${rows || '<tr><td colspan="7" class="muted">No standing sessions are configured.</td></tr>'}</tbody></table></div>`;
}

// ---- results: each family's result drawn from what it carries ----
const num = (v) => typeof v === "number" && isFinite(v);
const fmt = (v) => (!num(v) ? String(v ?? "—") : v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 0.01) ? v.toExponential(2) : +v.toFixed(Math.abs(v) >= 100 ? 0 : 3));
const stat = (label, v) => `<div class="stat"><span class="muted">${esc(label)}</span><b>${esc(v)}</b></div>`;
const fig = (caption, svg, note) => `<figure><figcaption>${esc(caption)}</figcaption>${svg}${note ? `<p class="legend">${esc(note)}</p>` : ""}</figure>`;
const numbers = (v) => Array.isArray(v) && v.length > 0 && v.every(num);

// renderResult draws a session's result for its family: the initiator's
// combined result, then this node's own parties' private results. Only
// what the result carries is drawn; a family without a drawing of its own
// gets every numeric series and square matrix it has.
function renderResult(protocol, rec) {
  const r = rec.result, out = [];
  if (r) out.push((familyCharts[protocol] || genericCharts)(r));
  for (const [party, v] of Object.entries(rec.local || {})) {
    const bars = Object.entries(v || {}).filter(([, x]) => numbers(x)).map(([k, x]) => fig(`${party}: ${k}`, barChart(x, x.map((_, i) => String(i)), { label: `${party} ${k}` })));
    const scalars = Object.entries(v || {}).filter(([, x]) => num(x) || typeof x === "boolean").map(([k, x]) => stat(k.replaceAll("_", " "), num(x) ? fmt(x) : String(x)));
    if (bars.length || scalars.length) out.push(`<h3>${esc(party)} <span class="muted">(this organization's own)</span></h3>${scalars.join("")}${bars.length ? `<div class="charts">${bars.join("")}</div>` : ""}`);
  }
  return out.join("");
}

const familyCharts = {
  ping(r) {
    const names = r.participants || [];
    const ms = (m) => m.map((row) => row.map((v) => (num(v) ? v / 1000 : v)));
    return `${stat("round trips per pair", r.count)}<div class="charts">
      ${numbers((r.median_us || [])[0]) ? fig("Median round-trip time (ms), row → column", heatMap(ms(r.median_us), "median round-trip ms", names)) : ""}
      ${numbers((r.p99_us || [])[0]) ? fig("p99 round-trip time (ms), row → column", heatMap(ms(r.p99_us), "p99 round-trip ms", names)) : ""}</div>`;
  },
  samba(r) {
    const k = r.k || (r.pulls || []).length;
    let h = stat("cumulative reward", fmt(r.cumulative_reward)) + stat("budget", fmt(r.budget)) + stat("reward per pull", num(r.cumulative_reward) && r.budget ? fmt(r.cumulative_reward / r.budget) : "—") + stat("algorithm", r.algorithm) + stat("data owners", k);
    if (num(r.batch) && r.batch > 1) h += stat("batch", fmt(r.batch) + (num(r.batch_growth) && r.batch_growth > 1 ? " ×" + fmt(r.batch_growth) + " a batch" : ""));
    if (num(r.reference_cumulative_reward)) h += stat("plaintext reference", fmt(r.reference_cumulative_reward));
    const c = [fig("Cumulative reward within the budget", barChart([r.cumulative_reward, r.budget - r.cumulative_reward], ["reward", "no reward"], { label: "cumulative reward of the budget", highlight: 0 }))];
    if (numbers(r.pulls)) c.push(fig("Pulls per data owner (arm)", barChart(r.pulls, r.pulls.map((_, i) => "owner " + i), { label: "pulls per arm", highlight: r.pulls.indexOf(Math.max(...r.pulls)) })));
    if (numbers(r.arms)) c.push(fig("Arm means (the simulated environments')", barChart(r.arms, r.arms.map((_, i) => "owner " + i), { label: "arm means" })));
    return `${h}<div class="charts">${c.join("")}</div>${r.leakage ? `<p class="legend">Leakage: ${esc(r.leakage)}</p>` : ""}`;
  },
  bai(r) {
    const order = Array.isArray(r.elimination_order) ? r.elimination_order : [];
    let h = stat("best arm", r.best_arm) + stat("sample complexity", fmt(r.sample_complexity)) + stat("arms", r.k) + stat("agents", r.agents) + stat("algorithm", r.algorithm);
    if (typeof r.correct === "boolean") h += stat("correct", r.correct ? "yes" : "no");
    const c = [];
    if (order.length) c.push(fig("Elimination history: arms in the order they were eliminated, the best arm last", eliminationChart(order, r.best_arm, r.k)));
    if (numbers(r.arms)) c.push(fig("Arm means (the simulated environments'), best arm highlighted", barChart(r.arms, r.arms.map((_, i) => "arm " + i), { label: "arm means", highlight: r.best_arm })));
    return `${h}<div class="charts">${c.join("")}</div>${r.privacy ? `<p class="legend">Privacy: ${esc(r.privacy)}</p>` : ""}`;
  },
  pfcb(r) {
    let h = stat("regret per agent", fmt(r.regret_per_agent)) + stat("constraint violations", fmt(r.constraint_violations)) + stat("ε total (per value)", fmt(r.epsilon_total)) + stat("agents", r.agents) + stat("rounds", fmt(r.rounds));
    const c = [];
    if (numbers(r.regret_curve)) c.push(fig("Regret curve: average cumulative regret per agent", lineChart(r.regret_curve, { label: "regret", dx: r.regret_curve_every || 1, x0: r.regret_curve_every || 1, xlabel: "round" })));
    if (numbers(r.regret_agents)) c.push(fig("Regret per agent", barChart(r.regret_agents, r.regret_agents.map((_, i) => "agent " + i), { label: "regret per agent" })));
    else if (numbers(r.revenue_agents)) c.push(fig("Revenue per agent", barChart(r.revenue_agents, r.revenue_agents.map((_, i) => "agent " + i), { label: "revenue per agent" })));
    if (numbers(r.epsilon_per_round)) c.push(fig("ε spent per communication round", barChart(r.epsilon_per_round, r.epsilon_per_round.map((_, i) => "t=" + ((r.communication_rounds || [])[i] ?? i)), { label: "epsilon per communication round" })));
    return `${h}<div class="charts">${c.join("")}</div>${r.privacy ? `<p class="legend">Privacy: ${esc(r.privacy)}</p>` : ""}`;
  },
  mpccb(r) {
    let h = stat("average reward", fmt(r.average_reward)) + stat("arm agreement", num(r.arm_agreement) ? (100 * r.arm_agreement).toFixed(1) + " %" : "—") + stat("decision agreement", num(r.decision_agreement) ? (100 * r.decision_agreement).toFixed(1) + " %" : "—") + stat("dp η", fmt(r.dp_eta)) + stat("steps", fmt(r.steps));
    if (num(r.batch) && r.batch > 1) h += stat("batch", fmt(r.batch));
    const refs = [];
    if (num(r.reference_average_reward)) refs.push({ y: r.reference_average_reward, label: "plaintext reference" });
    if (num(r.best_fixed_arm_reward)) refs.push({ y: r.best_fixed_arm_reward, label: "best fixed arm" });
    const c = [];
    if (numbers(r.reward_curve)) c.push(fig("Reward curve: average reward so far", lineChart(r.reward_curve, { label: "average reward", dx: r.checkpoint_every || 1, x0: r.checkpoint_every || 1, xlabel: "step", refs })));
    if (num(r.arm_agreement)) c.push(fig("Agreement with the plaintext reference", barChart([r.arm_agreement, r.decision_agreement].filter(num), ["arms", "decisions"].slice(0, [r.arm_agreement, r.decision_agreement].filter(num).length), { label: "agreement", max: 1 })));
    return `${h}<div class="charts">${c.join("")}</div>${Array.isArray(r.learns) ? `<p class="legend">What each role learns: ${r.learns.map(esc).join("; ")}</p>` : ""}`;
  },
};

function genericCharts(result) {
  const c = renderCharts(result);
  return c;
}

// ---- charts: every numeric series and matrix of a result, as inline SVG ----
function renderCharts(result) {
  const found = [];
  (function walk(v, path) {
    if (found.length >= 8 || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      if (v.length >= 2 && v.every((x) => typeof x === "number")) return found.push({ path, kind: "line", data: v });
      if (v.length >= 2 && v.every((r) => Array.isArray(r) && r.length === v.length && r.every((x) => typeof x === "number" || x === null))) return found.push({ path, kind: "heat", data: v });
      v.slice(0, 4).forEach((x, i) => walk(x, path + "[" + i + "]"));
      return;
    }
    for (const [k, x] of Object.entries(v)) walk(x, path ? path + "." + k : k);
  })(result, "");
  return found.length ? `<div class="charts">${found.map((f) => `<figure><figcaption>${esc(f.path)}</figcaption>${f.kind === "line" ? lineChart(f.data, { label: f.path }) : heatMap(f.data, f.path)}</figure>`).join("")}</div>` : "";
}
// lineChart draws ys at x = x0 + i·dx, with horizontal reference lines refs.
function lineChart(ys, o = {}) {
  const W = 360, H = 190, L = 52, B = 30, dx = o.dx || 1, x0 = o.x0 || 0, refs = o.refs || [];
  let lo = Math.min(...ys, ...refs.map((r) => r.y)), hi = Math.max(...ys, ...refs.map((r) => r.y));
  if (hi === lo) { hi += 1; lo -= 1; }
  const n = Math.max(ys.length - 1, 1);
  const x = (i) => L + ((W - L - 8) * i) / n, y = (v) => 8 + ((H - B - 8) * (hi - v)) / (hi - lo);
  const pts = ys.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const ref = refs.map((r, k) => `<line x1="${L}" x2="${W - 8}" y1="${y(r.y).toFixed(1)}" y2="${y(r.y).toFixed(1)}" stroke="${["#1f7a3a", "#9a6200"][k % 2]}" stroke-dasharray="4 3"/><text x="${W - 10}" y="${(y(r.y) - 3).toFixed(1)}" text-anchor="end" fill="${["#1f7a3a", "#9a6200"][k % 2]}">${esc(r.label)} ${fmt(r.y)}</text>`).join("");
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(o.label || "series")}: ${ys.length} points from ${fmt(ys[0])} to ${fmt(ys[ys.length - 1])}${refs.map((r) => `; ${r.label} ${fmt(r.y)}`).join("")}">
  <line x1="${L}" y1="${H - B}" x2="${W - 8}" y2="${H - B}" stroke="#9aa5b3"/><line x1="${L}" y1="8" x2="${L}" y2="${H - B}" stroke="#9aa5b3"/>
  <text x="${L - 4}" y="14" text-anchor="end">${fmt(hi)}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">${fmt(lo)}</text>
  <text x="${L}" y="${H - B + 14}">${fmt(x0)}</text><text x="${W - 8}" y="${H - B + 14}" text-anchor="end">${fmt(x0 + dx * (ys.length - 1))}</text>
  ${o.xlabel ? `<text x="${(L + W) / 2}" y="${H - 3}" text-anchor="middle">${esc(o.xlabel)}</text>` : ""}
  ${ref}<polyline fill="none" stroke="#0b5cad" stroke-width="2" points="${pts}"/></svg>`;
}
// barChart draws one bar a value, labelled, the bar highlight in green.
function barChart(vals, labels, o = {}) {
  const n = vals.length, W = 360, L = 70, row = n > 12 ? 12 : 18, H = n * row + 10;
  const hi = o.max || Math.max(...vals.map(Math.abs), 1e-12);
  const bars = vals.map((v, i) => {
    const w = Math.max(0, ((W - L - 60) * Math.abs(v)) / hi);
    return `<text x="${L - 6}" y="${6 + i * row + row * 0.7}" text-anchor="end">${esc(labels[i])}</text><rect x="${L}" y="${6 + i * row + 2}" width="${w.toFixed(1)}" height="${row - 4}" fill="${i === o.highlight ? "#1f7a3a" : "#0b5cad"}"><title>${esc(labels[i])}: ${fmt(v)}</title></rect><text x="${(L + w + 4).toFixed(1)}" y="${6 + i * row + row * 0.7}">${fmt(v)}</text>`;
  }).join("");
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(o.label || "bars")}: ${vals.map((v, i) => `${labels[i]} ${fmt(v)}`).slice(0, 16).join(", ")}">${bars}</svg>`;
}
// eliminationChart draws BAI's elimination history: each arm at the
// position it was eliminated, the best arm last.
function eliminationChart(order, best, k) {
  const seq = [...order, ...(num(best) && best >= 0 && !order.includes(best) ? [best] : [])], n = seq.length;
  const W = 360, C = Math.max(24, Math.min(40, Math.floor((W - 20) / Math.max(n, 1)))), H = 78;
  const cells = seq.map((a, i) => {
    const isBest = i === n - 1 && a === best;
    return `<rect x="${10 + i * C}" y="20" width="${C - 4}" height="${C - 4}" rx="4" fill="${isBest ? "#1f7a3a" : "#e3e8ee"}" stroke="${isBest ? "#1f7a3a" : "#9aa5b3"}"><title>${isBest ? "best arm" : "eliminated #" + (i + 1)}: arm ${a}</title></rect><text x="${10 + i * C + (C - 4) / 2}" y="${20 + (C - 4) / 2 + 4}" text-anchor="middle" fill="${isBest ? "#fff" : "#1b2430"}">${esc(a)}</text><text x="${10 + i * C + (C - 4) / 2}" y="14" text-anchor="middle">${isBest ? "best" : i + 1}</text>`;
  }).join("");
  return `<svg viewBox="0 0 ${Math.max(W, 20 + n * C)} ${H}" width="100%" role="img" aria-label="eliminated in order: ${order.join(", ")}; best arm ${esc(best)}${k ? ` of ${k}` : ""}">${cells}</svg>`;
}
function heatMap(m, label, names) {
  const n = m.length, C = Math.max(14, Math.min(32, Math.floor(240 / n))), P = names ? 62 : 30;
  const vals = m.flat().filter((v) => typeof v === "number");
  const lo = Math.min(...vals), hi = Math.max(...vals) || 1;
  const col = (v) => { if (typeof v !== "number") return "#eee"; const t = hi === lo ? 0.5 : (v - lo) / (hi - lo); return `hsl(${210 - 200 * t},70%,${85 - 40 * t}%)`; };
  let cells = "";
  m.forEach((r, i) => r.forEach((v, j) => { cells += `<rect x="${P + j * C}" y="${P + i * C}" width="${C - 1}" height="${C - 1}" fill="${col(v)}"><title>${esc(names && names[i] ? names[i] : i)} → ${esc(names && names[j] ? names[j] : j)}: ${typeof v === "number" ? fmt(v) : "none"}</title></rect>`; }));
  const nm = (i) => (names && names[i] ? names[i] : String(i));
  const labels = m.map((_, i) => `<text x="${P + i * C + C / 2}" y="${P - 6}" text-anchor="start" transform="rotate(-45 ${P + i * C + C / 2} ${P - 6})">${esc(nm(i).slice(0, 8))}</text><text x="${P - 6}" y="${P + i * C + C / 2 + 4}" text-anchor="end">${esc(nm(i).slice(0, 8))}</text>`).join("");
  return `<svg viewBox="0 0 ${P + n * C + 40} ${P + n * C + 20}" width="${P + n * C + 40}" style="max-width:100%" role="img" aria-label="${esc(label)}: ${n} by ${n} matrix, ${+lo.toFixed(3)} to ${+hi.toFixed(3)}">${labels}${cells}<text x="${P}" y="${P + n * C + 16}">low ${+lo.toFixed(3)} → high ${+hi.toFixed(3)}</text></svg>`;
}

// ---- actions (operator token only; the API answers 403 to the read-only one) ----
function wire() {
  for (const b of document.querySelectorAll("button.cancel")) b.onclick = async () => {
    if (!confirm("Cancel session " + b.dataset.id + "? Every party stops it.")) return;
    try { await api("POST", "/v0/sessions/" + encodeURIComponent(b.dataset.id) + "/cancel"); toast("Cancelled " + b.dataset.id); route(true); }
    catch (e) { toast("Cancel refused: " + e.message); }
  };
  const rl = $("#reload");
  if (rl) rl.onclick = async () => {
    try { const c = await api("POST", "/v0/config/reload"); toast("Config reloaded" + (c && Object.keys(c).length ? ": " + Object.keys(c).join(", ") + " changed" : ", nothing changed")); route(true); }
    catch (e) { toast("Reload refused: " + e.message); route(true); }
  };
  const st = $("#start");
  if (st) st.onclick = async () => {
    try { const r = await api("POST", "/v0/sessions", $("#spec").value); toast("Started " + (r.id || "")); route(true); }
    catch (e) { toast("Start refused: " + e.message); }
  };
  const copy = $("#copy-card");
  if (copy) copy.onclick = async () => {
    try { await navigator.clipboard.writeText($("#own-card").textContent); toast("The peer card is copied."); }
    catch { getSelection().selectAllChildren($("#own-card")); toast("Selected: copy it with Ctrl+C."); }
  };
  const add = $("#add-card");
  if (add) add.onclick = async () => {
    const out = $("#add-card-result");
    out.className = "";
    out.textContent = "adding…";
    try {
      const r = await api("POST", "/v0/peers", $("#card").value);
      $("#card").value = "";
      out.textContent = `Added ${r.name} (${r.peer_id}); the config is reloaded.`;
      toast("Added " + r.name);
      route(true);
    } catch (e) { out.className = "error"; out.textContent = e.message; }
  };
  // Arrow keys move between the focusable rows of a table.
  for (const tb of document.querySelectorAll("table.stack tbody")) tb.onkeydown = (e) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key) || !e.target.matches("tr[tabindex]")) return;
    const rows = [...tb.querySelectorAll("tr[tabindex]")], i = rows.indexOf(e.target);
    const j = e.key === "Home" ? 0 : e.key === "End" ? rows.length - 1 : Math.max(0, Math.min(rows.length - 1, i + (e.key === "ArrowDown" ? 1 : -1)));
    rows[j].focus();
    e.preventDefault();
  };
  const raw = $("#raw");
  if (raw) raw.onclick = async () => {
    const rec = await api("GET", "/v0/sessions/" + encodeURIComponent(raw.dataset.id) + "/result");
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([JSON.stringify(rec, null, 2)], { type: "application/json" }));
    a.download = raw.dataset.id + ".json";
    a.click();
    URL.revokeObjectURL(a.href);
  };
}

$("#login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try { await signIn($("#token").value.trim()); $("#token").value = ""; }
  catch (err) { showLogin(err.status === 401 ? "That token was refused (401)." : "Could not reach the node: " + err.message); }
});
$("#logout").addEventListener("click", () => showLogin());
window.addEventListener("hashchange", () => route());
if (state.token) signIn(state.token).catch(() => showLogin("The saved token no longer works; sign in again.")); else showLogin();
setInterval(() => { if (state.token && /^(node|partners|standing|policy)?$/.test(location.hash.slice(1))) route(true); }, 30000);
