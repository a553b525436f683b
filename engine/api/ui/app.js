// fixpoint dashboard: the environment as a graph of services (boxes) and
// relations (lines), units coloured by phase, kept live with the same
// blocking queries the command line uses: it follows the status summary
// (GET /v1/status?summary=1&index=N&generation=G&wait=D), whose size does
// not grow with the units, and reads the full status once per change only
// for environments small enough to draw unit by unit.
// Plain JavaScript, no build step, no dependencies.
//
// URL: /ui/?wait=30s&full=1000#unit=web/0&token=T
//   wait   how long one blocking query may wait (default 30s)
//   full   the most units drawn one by one (default 1000, as `fixpoint
//          wait` prints its table); a larger environment is drawn by
//          service, with its units counted by phase
//   unit   the unit whose panel is open
//   token  the operator token, kept in localStorage and dropped from the URL
'use strict';

const query = new URLSearchParams(location.search);
const WAIT = query.get('wait') || '30s';
const FULL = Number(query.get('full') || 1000);
const PAUSE = 500; // ms between two blocking queries: bursts become one redraw
// The summary is one walk of the units on the leader: a large environment
// is asked less often, as `fixpoint wait` does (100 ms per 10,000 units).
const paceFor = (sum) => Math.max(PAUSE, sum ? 100 * Math.floor(sum.phases.units / 10000) : 0);

const hashParams = new URLSearchParams(location.hash.slice(1));
let token = hashParams.get('token') || localStorage.getItem('fixpoint.token') || '';
if (hashParams.has('token')) {
  localStorage.setItem('fixpoint.token', token);
  hashParams.delete('token');
  history.replaceState(null, '', location.pathname + location.search + (hashParams.toString() ? '#' + hashParams : ''));
}
let selected = hashParams.get('unit') || '';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class HTTPError extends Error {
  constructor(status, msg) { super(msg); this.status = status; }
}

async function api(path) {
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  const res = await fetch(path, { headers, cache: 'no-store' });
  const text = await res.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { error: text }; }
  if (!res.ok) throw new HTTPError(res.status, (body && body.error) || res.statusText);
  return body;
}

// ---- state ---------------------------------------------------------------

let status = null; // the full status, or the summary of a large environment
let relations = [];
let updates = 0;
let detail = null; // GET /v1/units/UNIT of the selected unit
const PHASES = ['settled', 'reconciling', 'pending', 'error'];

function unitLess(a, b) {
  const [sa, na] = a.split('/');
  const [sb, nb] = b.split('/');
  return sa === sb ? Number(na) - Number(nb) : (sa < sb ? -1 : 1);
}

// ---- layout --------------------------------------------------------------

const UNIT = 30, GAP = 6, PER_ROW = 7, BOX_W = 16 + PER_ROW * (UNIT + GAP) + 10;
const COL_GAP = 150, ROW_GAP = 40, MARGIN = 30, HEAD = 52;

// Columns follow the relations: a service that requires another sits left
// of it, so dependencies read left to right.
function layout(services, rowsOf, rels) {
  const names = Object.keys(services).sort();
  const level = Object.fromEntries(names.map((n) => [n, 0]));
  const edges = [];
  for (const r of rels) {
    const req = r.endpoints.find((e) => e.role === 'requires');
    const prov = r.endpoints.find((e) => e.role === 'provides');
    if (req && prov && req.service !== prov.service && level[req.service] !== undefined && level[prov.service] !== undefined) {
      edges.push([req.service, prov.service]);
    }
  }
  for (let i = 0; i < names.length; i++) {
    let moved = false;
    for (const [from, to] of edges) {
      if (level[to] < level[from] + 1 && level[from] + 1 < names.length) { level[to] = level[from] + 1; moved = true; }
    }
    if (!moved) break;
  }
  const cols = [];
  for (const n of names) (cols[level[n]] ||= []).push(n);
  const boxes = {};
  const heights = [];
  cols.forEach((col, c) => {
    let y = 0;
    for (const n of col || []) {
      const rows = rowsOf(n);
      const peers = rels.some((r) => r.endpoints.length === 1 && r.endpoints[0].service === n);
      const h = HEAD + rows * (UNIT + GAP) + (peers ? 16 : 0) + 8;
      boxes[n] = { x: MARGIN + c * (BOX_W + COL_GAP), y, w: BOX_W, h };
      y += h + ROW_GAP;
    }
    heights[c] = y - ROW_GAP;
  });
  const height = Math.max(0, ...heights);
  // Centre each column vertically.
  cols.forEach((col, c) => {
    const off = (height - heights[c]) / 2 + MARGIN;
    for (const n of col || []) boxes[n].y += off;
  });
  const width = MARGIN * 2 + cols.length * BOX_W + Math.max(0, cols.length - 1) * COL_GAP;
  return { boxes, width: Math.max(width, 320), height: height + MARGIN * 2 };
}

// ---- rendering -----------------------------------------------------------

function render() {
  if (!status) return;
  const st = status;
  document.body.dataset.index = st.index;
  document.body.dataset.converged = st.converged;
  document.body.dataset.updates = updates;
  $('env').textContent = st.environment || '(unnamed)';
  const summary = $('summary');
  const errors = st.phases ? st.phases.error : Object.values(st.units || {}).filter((u) => u.phase === 'error').length;
  summary.textContent = st.summary || (Object.keys(st.units || {}).length ? '' : `no units at index ${st.index}`);
  summary.className = 'summary ' + (st.converged ? 'converged' : errors ? 'error' : 'pending');
  $('index').textContent = 'index ' + st.index;
  document.title = `${st.environment || 'fixpoint'}: ${st.summary || ''}`;

  const services = st.services || {};
  const counted = !st.units; // a summary: units counted by service
  document.body.dataset.mode = counted ? 'counts' : 'units';
  const byService = {};
  for (const [name, u] of Object.entries(st.units || {})) (byService[u.service] ||= []).push(name);
  for (const list of Object.values(byService)) list.sort(unitLess);
  const rels = relations.filter((r) => r.endpoints.every((e) => services[e.service]));
  const rowsOf = (n) => counted ? 1 : Math.max(1, Math.ceil((byService[n] || []).length / PER_ROW));
  const { boxes, width, height } = layout(services, rowsOf, rels);
  renderAttention(counted ? st : null);

  const msg = $('message');
  msg.hidden = Object.keys(services).length > 0;
  msg.textContent = 'No services yet: apply an environment (fixpoint apply -f env.cue).';

  const out = [];
  // Relations first, under the boxes.
  for (const r of rels) {
    if (r.endpoints.length !== 2) continue;
    const [a, b] = r.endpoints;
    const A = boxes[a.service], B = boxes[b.service];
    if (!A || !B) continue;
    let x1, x2;
    if (A.x + A.w < B.x) { x1 = A.x + A.w; x2 = B.x; }
    else if (B.x + B.w < A.x) { x1 = A.x; x2 = B.x + B.w; }
    else { x1 = A.x + A.w; x2 = B.x + B.w; }
    const y1 = A.y + A.h / 2, y2 = B.y + B.h / 2;
    const dx = x1 === A.x + A.w && x2 === B.x + B.w ? 60 : (x2 - x1) / 2;
    const path = `M${x1},${y1} C${x1 + dx},${y1} ${x2 - (x2 > x1 ? dx : -dx)},${y2} ${x2},${y2}`;
    const label = `${a.name} ⇄ ${b.name} · ${r.interface}`;
    const mx = (x1 + x2) / 2 + (x1 === A.x + A.w && x2 === B.x + B.w ? 45 : 0), my = (y1 + y2) / 2;
    out.push(`<g class="relation-group" data-relation="${esc(r.key)}" data-id="${r.id}">` +
      `<path class="relation ${esc(r.life)}" d="${path}"><title>${esc(r.key)} (${esc(r.scope)}, ${esc(r.life)})</title></path>` +
      `<rect class="rel-label-bg" x="${mx - label.length * 3.2}" y="${my - 16}" width="${label.length * 6.4}" height="14" rx="3"></rect>` +
      `<text class="rel-label" x="${mx}" y="${my - 5}" text-anchor="middle">${esc(label)}</text></g>`);
  }
  for (const name of Object.keys(boxes).sort()) {
    const s = services[name], b = boxes[name];
    if (counted) {
      out.push(countedBox(name, s, b, rels));
      continue;
    }
    const list = byService[name] || [];
    const hasError = list.some((u) => st.units[u].phase === 'error');
    const peers = rels.filter((r) => r.endpoints.length === 1 && r.endpoints[0].service === name).map((r) => r.endpoints[0].name);
    const counts = {};
    for (const u of list) counts[st.units[u].phase] = (counts[st.units[u].phase] || 0) + 1;
    const sub = `${(s.charm || '').slice(0, 8)} · ${list.length}/${s.units} units` + (s.leader ? ` · leader ${s.leader}` : '');
    out.push(`<g class="service ${esc(s.life)}${hasError ? ' has-error' : ''}" data-service="${esc(name)}" transform="translate(${b.x},${b.y})">` +
      `<rect class="svc-box" width="${b.w}" height="${b.h}" rx="10"></rect>` +
      `<text class="svc-name" x="14" y="22">${esc(name)}</text>` +
      `<text class="svc-sub" x="14" y="40">${esc(sub)}</text>`);
    list.forEach((u, i) => {
      const us = st.units[u];
      const x = 14 + (i % PER_ROW) * (UNIT + GAP), y = HEAD + Math.floor(i / PER_ROW) * (UNIT + GAP);
      const cls = ['unit', 'phase-' + us.phase];
      if (us.leader) cls.push('leader');
      if (us.agent === 'lost') cls.push('lost');
      else if (us.status && us.status.state === 'blocked') cls.push('blocked');
      if (u === selected) cls.push('selected');
      const detail = us.phase === 'error' ? us.error : [us.status && us.status.state, us.status && us.status.message].filter(Boolean).join(': ');
      out.push(`<g class="${cls.join(' ')}" data-unit="${esc(u)}" data-phase="${esc(us.phase)}" transform="translate(${x},${y})" tabindex="0">` +
        `<title>${esc(u)}${us.leader ? ' (leader)' : ''} — ${esc(us.phase)}${detail ? '\n' + esc(detail) : ''}${us.reason ? '\n' + esc(us.reason) : ''}</title>` +
        `<rect width="${UNIT}" height="${UNIT}" rx="6"></rect>` +
        `<text x="${UNIT / 2}" y="${UNIT / 2 + 4}" text-anchor="middle">${esc(u.split('/')[1])}</text></g>`);
    });
    if (peers.length) {
      const py = HEAD + Math.max(1, Math.ceil(list.length / PER_ROW)) * (UNIT + GAP) + 8;
      out.push(`<text class="svc-peer" x="14" y="${py}">peers: ${esc(peers.join(', '))}</text>`);
    }
    out.push('</g>');
  }
  const svg = $('graph');
  // Grow a small graph to the room there is, up to 1.6 times.
  const room = $('graph-wrap').clientWidth - 60;
  const scale = Math.max(1, Math.min(1.6, room / width));
  svg.setAttribute('width', Math.round(width * scale));
  svg.setAttribute('height', Math.round(height * scale));
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.innerHTML = out.join('');
}

// countedBox is a service of a large environment: a bar of its units by
// phase (the summary's counts), instead of a square per unit.
function countedBox(name, c, b, rels) {
  const peers = rels.filter((r) => r.endpoints.length === 1 && r.endpoints[0].service === name).map((r) => r.endpoints[0].name);
  const sub = `${c.units} unit${c.units === 1 ? '' : 's'}` + (c.leader ? ` · leader ${c.leader}` : '') + (c.lost ? ` · ${c.lost} lost` : '') + (c.blocked ? ` · ${c.blocked} blocked` : '');
  const out = [`<g class="service${c.error ? ' has-error' : ''}" data-service="${esc(name)}" transform="translate(${b.x},${b.y})">` +
    `<rect class="svc-box" width="${b.w}" height="${b.h}" rx="10"></rect>` +
    `<text class="svc-name" x="14" y="22">${esc(name)}</text>` +
    `<text class="svc-sub" x="14" y="40">${esc(sub)}</text>`];
  const barW = b.w - 28;
  let x = 14;
  for (const phase of PHASES) {
    const n = c[phase] || 0;
    if (!n) continue;
    const w = Math.max(3, barW * n / Math.max(1, c.units));
    out.push(`<g class="count phase-${phase}" data-phase="${phase}" data-count="${n}" transform="translate(${x},${HEAD})">` +
      `<title>${n} ${phase}</title><rect width="${w}" height="${UNIT}" rx="4"></rect>` +
      (w > 24 ? `<text x="${w / 2}" y="${UNIT / 2 + 4}" text-anchor="middle">${n}</text>` : '') + '</g>');
    x += w;
  }
  if (peers.length) out.push(`<text class="svc-peer" x="14" y="${HEAD + UNIT + GAP + 8}">peers: ${esc(peers.join(', '))}</text>`);
  out.push('</g>');
  return out.join('');
}

// renderAttention lists, for a large environment, the units the summary
// names: the first in error, blocked, and those longest out of settled.
function renderAttention(sum) {
  const box = $('attention');
  box.hidden = !sum;
  if (!sum) return;
  const group = (title, list, more) => list && list.length
    ? `<div class="att-group"><b>${esc(title)}</b> ` + list.map((u) =>
      `<a href="#unit=${esc(u.unit)}" data-unit="${esc(u.unit)}" class="att phase-${esc(u.phase)}" title="${esc(u.message || u.phase)}">${esc(u.unit)}</a>`).join(' ') +
      (more ? ` <span class="muted">and ${more} more</span>` : '') + '</div>'
    : '';
  box.innerHTML = `<div class="muted">${sum.phases.units} units, drawn by service (more than ${FULL}); click a unit below for its panel</div>` +
    group('error', sum.errors, sum.more_errors) + group('blocked', (sum.blocked || []).map((u) => ({ ...u, phase: 'blocked' })), sum.more_blocked) + group('longest out of settled', sum.stuck, sum.more_stuck);
}

// ---- the unit panel ------------------------------------------------------

async function showUnit(unit) {
  if (unit !== selected) detail = null;
  selected = unit;
  const hp = new URLSearchParams(location.hash.slice(1));
  if (unit) hp.set('unit', unit); else hp.delete('unit');
  history.replaceState(null, '', location.pathname + location.search + (hp.toString() ? '#' + hp : ''));
  render();
  const panel = $('panel');
  panel.hidden = !unit;
  if (!unit) return;
  panel.dataset.unit = unit;
  renderFacts();
  await refreshPanel();
}

function renderFacts() {
  const us = detail && detail.unit === selected ? detail : null;
  const title = $('panel-title');
  if (!us) {
    title.textContent = selected;
    $('unit-facts').innerHTML = detail === false
      ? '<dt>unit</dt><dd>not in the environment (any more)</dd>'
      : '<dt>unit</dt><dd>loading…</dd>';
    return;
  }
  title.innerHTML = `${esc(selected)}${us.leader ? ' <span title="leader">★</span>' : ''}<span class="badge phase-${esc(us.phase)}">${esc(us.phase)}</span>`;
  const facts = [
    ['service', us.service],
    ['machine', (us.machine || '-') + (us.address ? ` at ${us.address}` : '') + (us.agent ? ` (${us.agent})` : '')],
    ['workload', us.status ? [us.status.state, us.status.message].filter(Boolean).join(': ') : ''],
    ['reconciles', us.reconciles],
    ['life', us.life],
  ];
  if (us.reason) facts.push(['why', us.reason]);
  if (us.error) facts.push(['error', us.error]);
  if (us.ports && us.ports.length) facts.push(['ports', us.ports.join(', ')]);
  $('unit-facts').innerHTML = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('');
}

function runHTML(run) {
  const when = new Date(run.time);
  const ms = run.duration / 1e6;
  const took = run.duration ? (ms < 1000 ? `${ms.toFixed(ms < 10 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(2)} s`) : '';
  const changes = (run.changes || []).map((c) => `<li>${esc(c.key)}: ${esc(c.old)} → ${esc(c.new)}</li>`);
  if (run.omitted) changes.push(`<li>… and ${run.omitted} more</li>`);
  let body = '';
  if (run.outcome === 'error') body += `<div class="err">${esc(run.error)}</div>`;
  if (run.outcome === 'stale') body += '<div class="muted">the universe moved on while the hook ran; it runs again</div>';
  if (run.outcome === 'ok' && !changes.length) body += '<div class="muted">no change: the result was what the unit already had</div>';
  if (changes.length) body += `<ul>${changes.join('')}</ul>`;
  if (run.stderr) body += `<pre class="stderr">${esc(run.stderr)}</pre>`;
  return `<div class="run" data-seq="${run.seq}"><div class="run-head"><span class="outcome ${esc(run.outcome)}">${esc(run.outcome)}</span>` +
    `<span>${esc(when.toLocaleTimeString())}</span><span>${esc(took)}</span><span title="${esc(run.hash)}">universe ${esc((run.hash || '').slice(0, 12))}</span></div>${body}</div>`;
}

// renderOperations lists the unit's last operations (fixpoint run, exec),
// newest first: id, action, status, message.
function renderOperations(ops) {
  const box = $('operations');
  if (ops.status !== 'fulfilled') {
    box.innerHTML = `<p class="err">${esc(ops.reason.message)}</p>`;
    return;
  }
  const list = ops.value.slice().reverse().slice(0, 10);
  box.innerHTML = list.length
    ? '<table class="ops">' + list.map((o) => `<tr><td>#${esc(o.id)}</td><td>${esc(o.name)}</td>` +
      `<td class="op-${esc(o.status)}">${esc(o.status)}</td><td>${esc(o.message || '')}</td></tr>`).join('') + '</table>'
    : '<p class="muted">none: fixpoint run UNIT ACTION, or fixpoint exec --unit UNIT, queues one</p>';
}

async function refreshPanel() {
  const unit = selected;
  if (!unit) return;
  const path = encodeURIComponent(unit).replace('%2F', '/');
  const [logs, uni, one, ops] = await Promise.allSettled([
    api('/v1/logs?unit=' + encodeURIComponent(unit) + '&limit=5'),
    api('/v1/universe/' + path),
    api('/v1/units/' + path),
    api('/v1/actions?unit=' + encodeURIComponent(unit)),
  ]);
  if (unit !== selected) return;
  renderOperations(ops);
  detail = one.status === 'fulfilled' ? one.value : false;
  renderFacts();
  const runs = $('runs');
  if (logs.status === 'fulfilled') {
    const list = logs.value.runs.slice().reverse();
    runs.innerHTML = list.length
      ? runHTML(list[0]) + (list.length > 1 ? `<details><summary>${list.length - 1} earlier</summary>${list.slice(1).map(runHTML).join('')}</details>` : '')
      : '<p class="muted">no hook run since this node became leader (it keeps the last 50 of each unit in memory); the unit\'s current settings are in its universe below, under relations[].local</p>';
  } else {
    runs.innerHTML = `<p class="err">${esc(logs.reason.message)}</p>`;
  }
  if (uni.status === 'fulfilled') {
    $('universe').textContent = JSON.stringify(uni.value, null, 2);
  } else {
    $('universe').textContent = uni.reason.message;
  }
}

// ---- live updates --------------------------------------------------------

function setConn(state, title) {
  const c = $('conn');
  c.className = 'conn ' + state;
  c.title = title;
}

async function askToken() {
  const dlg = $('token-dialog');
  if (dlg.open) return;
  if (typeof dlg.showModal === 'function') dlg.showModal(); else dlg.setAttribute('open', '');
  await new Promise((resolve) => dlg.addEventListener('close', resolve, { once: true }));
  token = $('token-input').value.trim();
  localStorage.setItem('fixpoint.token', token);
}

async function follow() {
  let last = null; // the summary last seen
  let failures = 0;
  for (;;) {
    try {
      const q = last ? `&index=${last.index}&generation=${last.generation}&wait=${encodeURIComponent(WAIT)}` : '';
      const sum = await api('/v1/status?summary=1' + q);
      failures = 0;
      setConn('live', 'live: following the control plane');
      if (last && sum.index < last.index) {
        // An index going backwards (a restored snapshot): start over.
        last = null;
        continue;
      }
      if (!last || sum.index !== last.index || sum.generation !== last.generation) {
        const st = sum.phases.units <= FULL ? await api('/v1/status') : sum;
        if (!last || sum.index !== last.index) relations = await api('/v1/relations');
        status = st;
        updates++;
        render();
        if (selected) {
          $('panel').hidden = false;
          $('panel').dataset.unit = selected;
          refreshPanel().catch(() => {});
        }
      }
      last = sum;
    } catch (e) {
      if (e instanceof HTTPError && (e.status === 401 || e.status === 403)) {
        setConn('down', e.message);
        await askToken();
        last = null;
        continue;
      }
      failures++;
      setConn('down', 'reconnecting: ' + e.message);
      $('summary').textContent = 'reconnecting…';
      await sleep(Math.min(1000 * 2 ** failures, 15000));
      last = null;
      continue;
    }
    await sleep(paceFor(last));
  }
}

$('graph').addEventListener('click', (ev) => {
  const g = ev.target.closest('.unit');
  if (g) showUnit(g.dataset.unit);
});
$('graph').addEventListener('keydown', (ev) => {
  const g = ev.target.closest('.unit');
  if (g && (ev.key === 'Enter' || ev.key === ' ')) showUnit(g.dataset.unit);
});
$('panel-close').addEventListener('click', () => showUnit(''));
document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') showUnit(''); });
window.addEventListener('resize', () => render());
window.addEventListener('hashchange', () => {
  const u = new URLSearchParams(location.hash.slice(1)).get('unit') || '';
  if (u !== selected) showUnit(u);
});

if (selected) $('panel').hidden = false;
follow();
