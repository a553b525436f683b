// fixpoint dashboard, the unit panel: a list of sections, each loading
// what it shows for the open unit (all at once) and drawing it. A new
// section is one entry in PANEL_SECTIONS with its load and draw functions.
'use strict';

let detail = null; // GET /v1/units/UNIT of the open unit; false when gone

// PANEL_SECTIONS are the panel's sections in order. load(unit) returns a
// promise of what the section shows; draw(body, result, unit) draws it
// into the section's body, result being {ok: true, value} or {ok: false,
// error}. A section without title has no heading.
const PANEL_SECTIONS = [
  { id: 'facts', load: (unit) => api('/v1/units/' + unitPath(unit)), draw: drawFacts },
  { id: 'runs', title: 'Last result', load: (unit) => api('/v1/logs?unit=' + encodeURIComponent(unit) + '&limit=5'), draw: drawRuns },
  { id: 'operations', title: 'Operations', load: (unit) => api('/v1/actions?unit=' + encodeURIComponent(unit)), draw: drawOperations },
  { id: 'events', title: 'Events', load: (unit) => api('/v1/events?of=' + encodeURIComponent(unit) + '&tail=' + EVENTS_SHOWN), draw: drawEvents },
  { id: 'universe', load: (unit) => api('/v1/universe/' + unitPath(unit)), draw: drawUniverse },
];

// panelBody is the body of a section, made once.
function panelBody(sec) {
  let el = $('sec-' + sec.id);
  if (!el) {
    el = document.createElement('section');
    el.id = 'sec-' + sec.id;
    el.className = 'panel-section';
    el.innerHTML = (sec.title ? `<h3>${esc(sec.title)}</h3>` : '') + '<div class="section-body"><p class="muted">loading…</p></div>';
    $('panel-sections').appendChild(el);
  }
  return el.querySelector('.section-body');
}

// showUnit opens unit's panel ('' closes it) and keeps it in the URL.
async function showUnit(unit) {
  if (unit !== view.selected) {
    detail = null;
    for (const sec of PANEL_SECTIONS) panelBody(sec).innerHTML = '<p class="muted">loading…</p>';
  }
  view.selected = unit;
  writeHash();
  const panel = $('panel');
  panel.hidden = !unit;
  render();
  if (!unit) return;
  panel.dataset.unit = unit;
  $('panel-title').textContent = unit;
  await refreshPanel();
}

// refreshPanel loads every section of the open unit and draws each as it
// arrives.
async function refreshPanel() {
  const unit = view.selected;
  if (!unit) return;
  await Promise.all(PANEL_SECTIONS.map(async (sec) => {
    let result;
    try { result = { ok: true, value: await sec.load(unit) }; } catch (e) { result = { ok: false, error: e }; }
    if (unit === view.selected) sec.draw(panelBody(sec), result, unit);
  }));
}

function drawFacts(body, res, unit) {
  detail = res.ok ? res.value : false;
  const title = $('panel-title');
  if (!res.ok) {
    title.textContent = unit;
    body.innerHTML = res.error.status === 404
      ? '<dl id="unit-facts"><dt>unit</dt><dd>not in the environment (any more)</dd></dl>'
      : `<p class="err">${esc(res.error.message)}</p>`;
    return;
  }
  const us = res.value;
  const kind = kindOf(us);
  title.innerHTML = `${esc(unit)}${us.leader ? ' <span title="leader">★</span>' : ''}<span class="badge phase-${esc(us.phase)} kind-${kind}">${esc(kind === 'blocked' ? 'blocked' : us.phase)}</span>`;
  const facts = [
    ['service', us.service],
    ['machine', (us.machine || '-') + (us.address ? ` at ${us.address}` : '') + (us.agent ? ` (${us.agent})` : '')],
    ['workload', us.status ? [us.status.state, us.status.message].filter(Boolean).join(': ') : ''],
    ['reconciles', us.reconciles],
    ['life', us.life],
  ];
  const rows = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`);
  if (us.since) rows.push(`<dt>since</dt><dd>${timeTag(new Date(us.since), isoTime(new Date(us.since)))}</dd>`);
  if (us.reason) rows.push(`<dt>why</dt><dd>${esc(us.reason)}</dd>`);
  if (us.error) rows.push(`<dt>error</dt><dd>${esc(us.error)}</dd>`);
  if (us.ports && us.ports.length) rows.push(`<dt>ports</dt><dd>${esc(us.ports.join(', '))}</dd>`);
  body.innerHTML = `<dl id="unit-facts">${rows.join('')}</dl>`;
}

function runHTML(run) {
  const when = new Date(run.time);
  const changes = (run.changes || []).map((c) => `<li>${esc(c.key)}: ${esc(c.old)} → ${esc(c.new)}</li>`);
  if (run.omitted) changes.push(`<li>… and ${run.omitted} more</li>`);
  let body = '';
  if (run.outcome === 'error') body += `<div class="err">${esc(run.error)}</div>`;
  if (run.outcome === 'stale') body += '<div class="muted">the universe moved on while the hook ran; it runs again</div>';
  if (run.outcome === 'ok' && !changes.length) body += '<div class="muted">no change: the result was what the unit already had</div>';
  if (changes.length) body += `<ul>${changes.join('')}</ul>`;
  if (run.stderr) body += `<pre class="stderr">${esc(run.stderr)}</pre>`;
  return `<div class="run" data-seq="${run.seq}"><div class="run-head"><span class="outcome ${esc(run.outcome)}">${esc(run.outcome)}</span>` +
    `<span>${timeTag(when, isoTime(when, true))}</span><span>${run.duration ? esc(seconds(run.duration / 1e6)) : ''}</span>` +
    `<span title="${esc(run.hash)}">universe ${esc((run.hash || '').slice(0, 12))}</span></div>${body}</div>`;
}

function drawRuns(body, res) {
  if (!res.ok) {
    body.innerHTML = `<p class="err">${esc(res.error.message)}</p>`;
    return;
  }
  const list = res.value.runs.slice().reverse();
  body.innerHTML = list.length
    ? runHTML(list[0]) + (list.length > 1 ? `<details><summary>${list.length - 1} earlier</summary>${list.slice(1).map(runHTML).join('')}</details>` : '')
    : '<p class="muted">no hook run since this node became leader (it keeps the last 50 of each unit in memory); the unit\'s current settings are in its universe below, under relations[].local</p>';
}

// drawOperations lists the unit's last operations (fixpoint run, exec),
// newest first: id, action, status, message.
function drawOperations(body, res) {
  if (!res.ok) {
    body.innerHTML = `<p class="err">${esc(res.error.message)}</p>`;
    return;
  }
  const list = res.value.slice().reverse().slice(0, 10);
  body.innerHTML = list.length
    ? '<table class="ops" id="unit-operations">' + list.map((o) => `<tr data-status="${esc(o.status)}"><td>#${esc(o.id)}</td><td>${esc(o.name)}</td>` +
      `<td class="op-${esc(o.status)}">${esc(o.status)}</td><td>${esc(o.message || '')}</td></tr>`).join('') + '</table>'
    : '<p class="muted">none: fixpoint run UNIT ACTION, or fixpoint exec --unit UNIT, queues one</p>';
}

// EVENTS_SHOWN is how many of the unit's latest events the panel lists.
const EVENTS_SHOWN = 20;

function drawEvents(body, res) {
  if (!res.ok) {
    body.innerHTML = `<p class="err">${esc(res.error.message)}</p>`;
    return;
  }
  const evs = res.value.events.slice().reverse();
  body.innerHTML = evs.length
    ? '<table class="events" id="unit-events"><tbody>' + evs.map((e) => {
      const when = new Date(e.time / 1e6);
      return `<tr class="${e.warning ? 'warning' : ''}" data-kind="${esc(e.kind)}"><td class="when">${timeTag(when, isoTime(when, true))}</td>` +
        `<td class="kind">${esc(e.kind)}</td><td>${esc(e.message)}</td></tr>`;
    }).join('') + '</tbody></table>'
    : '<p class="muted">no events kept</p>';
}

function drawUniverse(body, res) {
  const open = !$('universe-box') || $('universe-box').open;
  const hash = res.ok && res.value.hash ? String(res.value.hash).slice(0, 12) : '';
  body.innerHTML = `<details id="universe-box"${open ? ' open' : ''}><summary>Universe <span class="muted">${esc(hash)}</span></summary><pre id="universe"></pre></details>`;
  $('universe').textContent = res.ok ? JSON.stringify(res.value, null, 2) : res.error.message;
}
