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
  // Which scope: a cancel of a session no node has answers 403 to the
  // read-only token and 404 to the operator's, and changes nothing.
  try { await api("POST", "/v0/sessions/console-scope-probe/cancel"); state.operator = true; }
  catch (e) { state.operator = e.status !== 403; }
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
const pages = { node: pageNode, partners: pagePartners, sessions: pageSessions, standing: pageStanding, session: pageSession };
async function route(quiet) {
  if (!state.token) return showLogin();
  const [name, arg] = (location.hash.slice(1) || "node").split("/");
  const page = pages[name] || pageNode;
  for (const a of document.querySelectorAll("#nav a")) a.toggleAttribute("aria-current", a.dataset.page === name || (name === "session" && a.dataset.page === "sessions"));
  if (a11yFocus(quiet)) {}
  try {
    const html = await page(arg ? decodeURIComponent(arg) : "");
    const keep = document.activeElement && document.activeElement.id;
    $("#page").innerHTML = html;
    if (keep && quiet && document.getElementById(keep)) document.getElementById(keep).focus();
    wire();
  } catch (e) {
    if (e.status === 401) return showLogin("That token was refused (401): check api.token_file or api.read_token_file.");
    $("#page").innerHTML = `<div class="card"><h1>Could not load this page</h1><p class="error">${esc(e.message)}</p></div>`;
  }
  if (!quiet) $("#main").focus({ preventScroll: true });
}
function a11yFocus() { return false; }

async function pageNode() {
  const n = (state.node = await api("GET", "/v0/node"));
  $("#node-name").textContent = n.name;
  const r = n.last_reload;
  const warn = (n.warnings || []).map((w) => `<li>${esc(w)}</li>`).join("");
  return `<h1>Node ${esc(n.name)}</h1><div class="grid">
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
  const peers = await api("GET", "/v0/peers");
  const mine = (state.node && state.node.version) || "";
  const ver = (agent) => (agent || "").replace(/^bandit-node\//, "");
  const rows = peers.map((p) => {
    const v = ver(p.agent);
    const skew = v && mine && !v.includes(mine) && !mine.includes(v);
    return `<tr data-peer="${esc(p.name)}">
      <td><strong>${esc(p.name)}</strong><br><span class="mono muted">${esc(p.peer_id)}</span></td>
      <td>${p.connected ? badge("ok", "connected") : badge("bad", "not connected")}</td>
      <td>${esc(p.conn || "—")}</td>
      <td>${p.latency_us ? (p.latency_us / 1000).toFixed(1) + " ms" : "—"}</td>
      <td class="mono">${v ? esc(v) : "—"} ${skew ? badge("warn", "differs from ours") : ""}</td>
      <td>${p.last_error ? `<span class="error">${esc(p.last_error)}</span>` : ""}${p.reason ? `<br><span class="muted">${esc(p.reason)}</span>` : ""}</td></tr>`;
  }).join("");
  return `<h1>Partners</h1><div class="card tablewrap"><table><caption class="muted" style="text-align:left">Address-book peers as this node sees them now.</caption>
    <thead><tr><th scope="col">Peer</th><th scope="col">State</th><th scope="col">Path</th><th scope="col">Latency</th><th scope="col">Version</th><th scope="col">Last error</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="6">The address book is empty.</td></tr>'}</tbody></table></div>`;
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
    <td><a href="#session/${encodeURIComponent(s.id)}" class="mono">${esc(s.id)}</a>${s.name ? `<br><span class="muted">${esc(s.name)}</span>` : ""}</td>
    <td>${esc(s.protocol)}</td><td class="hide-narrow">${roles(s.roles)}</td>
    <td>${stateBadge(s.state)}${s.reason ? `<br><span class="muted">${esc(s.reason)}</span>` : ""}</td>
    <td>${progressCell(s)}</td><td>${when(s.created)}</td>
    <td>${active(s) ? `<button type="button" class="danger cancel" data-id="${esc(s.id)}" ${state.operator ? "" : 'disabled title="needs the operator token"'} aria-label="Cancel session ${esc(s.id)}">Cancel</button>` : ""}</td></tr>`;
  const head = `<thead><tr><th scope="col">Session</th><th scope="col">Protocol</th><th scope="col" class="hide-narrow">Roles</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Created</th><th scope="col"><span class="hide-narrow">Action</span></th></tr></thead>`;
  const act = ss.filter(active), done = ss.filter((s) => !active(s));
  return `<h1>Sessions</h1>
  <div class="card tablewrap"><h2>Active</h2><table>${head}<tbody>${act.map(row).join("") || '<tr><td colspan="7" class="muted">No session is running.</td></tr>'}</tbody></table></div>
  <div class="card tablewrap"><h2>Recent</h2><table>${head}<tbody>${done.slice(0, 50).map(row).join("") || '<tr><td colspan="7" class="muted">None yet.</td></tr>'}</tbody></table></div>
  <div class="card"><h2>Start a session</h2>${state.operator ? "" : '<p class="muted">Starting sessions needs the operator token.</p>'}
  <label for="spec">Spec (TOML, as <code>bandit-node start</code> takes)</label><textarea id="spec" ${state.operator ? "" : "disabled"}></textarea>
  <button type="button" id="start" ${state.operator ? "" : "disabled"}>Start</button></div>`;
}

async function pageSession(id) {
  const s = await api("GET", "/v0/sessions/" + encodeURIComponent(id));
  const rec = s.state === "completed" ? await api("GET", "/v0/sessions/" + encodeURIComponent(id) + "/result").catch(() => ({})) : {};
  const logs = await api("GET", "/v0/sessions/" + encodeURIComponent(id) + "/logs").catch(() => ({ lines: [] }));
  const charts = rec.result ? renderCharts(rec.result) : "";
  return `<p><a href="#sessions">← Sessions</a></p><h1>Session <span class="mono">${esc(s.id)}</span></h1>
  <div class="grid"><div class="card"><dl class="kv">
    <dt>Protocol</dt><dd>${esc(s.protocol)}</dd><dt>State</dt><dd>${stateBadge(s.state)}</dd>
    ${s.reason ? `<dt>Reason</dt><dd>${esc(s.reason)}</dd>` : ""}${s.detail ? `<dt>Detail</dt><dd>${esc(s.detail)}</dd>` : ""}
    <dt>Initiator</dt><dd>${esc(s.initiator)}${s.initiated_here ? " (this node)" : ""}</dd>
    <dt>Roles</dt><dd>${roles(s.roles)}</dd><dt>Progress</dt><dd>${progressCell(s)}</dd>
    <dt>Created</dt><dd>${when(s.created)}</dd><dt>Finished</dt><dd>${when(s.finished)}</dd>
  </dl>${active(s) ? `<button type="button" class="danger cancel" data-id="${esc(s.id)}" ${state.operator ? "" : "disabled"}>Cancel session</button>` : ""}</div>
  <div class="card"><h2>Log tail</h2><pre class="log" tabindex="0">${esc((logs.lines || []).slice(-60).join("\n")) || "no lines kept"}</pre></div></div>
  <div class="card"><h2>Result</h2>${rec.result ? charts || '<p class="muted">The result has no series to chart.</p>' : '<p class="muted">No result yet.</p>'}
  <p><button type="button" class="secondary" id="raw" data-id="${esc(s.id)}">Download raw JSON</button></p></div>`;
}

async function pageStanding() {
  const st = await api("GET", "/v0/standing");
  const rows = st.map((s) => `<tr><td><strong>${esc(s.name)}</strong></td><td>${esc(s.protocol)}</td><td class="mono">${esc(s.schedule)}</td>
    <td>${when(s.next_due)}</td><td>${s.last ? `${stateBadge(s.last.state)} ${when(s.last.finished)}${s.last.reason ? `<br><span class="muted">${esc(s.last.reason)}</span>` : ""}` : "—"}</td>
    <td>${s.retries ? `${s.retries} · next ${when(s.retry_at)}` : "—"}</td><td>${s.active ? `<a class="mono" href="#session/${encodeURIComponent(s.active)}">${esc(s.active)}</a>` : "—"}</td></tr>`).join("");
  return `<h1>Standing sessions</h1><div class="card tablewrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Protocol</th><th scope="col">Schedule</th><th scope="col">Next due</th><th scope="col">Last run</th><th scope="col">Retries</th><th scope="col">Running</th></tr></thead>
  <tbody>${rows || '<tr><td colspan="7" class="muted">No standing sessions are configured.</td></tr>'}</tbody></table></div>`;
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
  return found.length ? `<div class="charts">${found.map((f) => `<figure><figcaption>${esc(f.path)}</figcaption>${f.kind === "line" ? lineChart(f.data, f.path) : heatMap(f.data, f.path)}</figure>`).join("")}</div>` : "";
}
function lineChart(ys, label) {
  const W = 360, H = 180, L = 44, B = 22;
  let lo = Math.min(...ys), hi = Math.max(...ys);
  if (hi === lo) { hi += 1; lo -= 1; }
  const x = (i) => L + ((W - L - 8) * i) / (ys.length - 1), y = (v) => 8 + ((H - B - 8) * (hi - v)) / (hi - lo);
  const pts = ys.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const fmt = (v) => (Math.abs(v) >= 1000 || (Math.abs(v) < 0.01 && v !== 0) ? v.toExponential(1) : +v.toFixed(2));
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(label)}: ${ys.length} points from ${fmt(ys[0])} to ${fmt(ys[ys.length - 1])}">
  <line x1="${L}" y1="${H - B}" x2="${W - 8}" y2="${H - B}" stroke="#9aa5b3"/><line x1="${L}" y1="8" x2="${L}" y2="${H - B}" stroke="#9aa5b3"/>
  <text x="${L - 4}" y="14" text-anchor="end">${fmt(hi)}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">${fmt(lo)}</text>
  <text x="${L}" y="${H - 6}">0</text><text x="${W - 8}" y="${H - 6}" text-anchor="end">${ys.length - 1}</text>
  <polyline fill="none" stroke="#0b5cad" stroke-width="2" points="${pts}"/></svg>`;
}
function heatMap(m, label) {
  const n = m.length, C = Math.max(14, Math.min(32, Math.floor(240 / n))), P = 30;
  const vals = m.flat().filter((v) => typeof v === "number");
  const lo = Math.min(...vals), hi = Math.max(...vals) || 1;
  const col = (v) => { if (typeof v !== "number") return "#eee"; const t = hi === lo ? 0.5 : (v - lo) / (hi - lo); return `hsl(${210 - 200 * t},70%,${85 - 40 * t}%)`; };
  let cells = "";
  m.forEach((r, i) => r.forEach((v, j) => { cells += `<rect x="${P + j * C}" y="${P + i * C}" width="${C - 1}" height="${C - 1}" fill="${col(v)}"><title>${i}→${j}: ${v ?? "none"}</title></rect>`; }));
  const labels = m.map((_, i) => `<text x="${P + i * C + C / 2}" y="${P - 6}" text-anchor="middle">${i}</text><text x="${P - 6}" y="${P + i * C + C / 2 + 4}" text-anchor="end">${i}</text>`).join("");
  return `<svg viewBox="0 0 ${P + n * C + 4} ${P + n * C + 20}" width="${P + n * C + 4}" style="max-width:100%" role="img" aria-label="${esc(label)}: ${n} by ${n} matrix, ${+lo.toFixed(3)} to ${+hi.toFixed(3)}">${labels}${cells}<text x="${P}" y="${P + n * C + 16}">low ${+lo.toFixed(3)} → high ${+hi.toFixed(3)}</text></svg>`;
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
setInterval(() => { if (state.token && /^#?(node|partners|standing)?$/.test(location.hash.slice(1))) route(true); }, 30000);
