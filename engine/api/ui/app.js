// fixpoint dashboard, the page: it follows the control plane with the
// blocking queries the command line uses (the status summary, GET
// /v1/status?summary=1&index=N&generation=G&wait=D, whose size does not
// grow with the units), reads the full status once per change only for
// environments small enough to draw unit by unit, and redraws the graph
// (graph.js), the timeline (timeline.js) and the open unit's panel
// (panel.js). Search and filter live in the URL (core.js).
'use strict';

const PAUSE = 500; // ms between two blocking queries: bursts become one redraw
// The summary is one walk of the units on the leader: a large environment
// is asked less often, as `fixpoint wait` does (100 ms per 10,000 units).
const paceFor = (sum) => Math.max(PAUSE, sum ? 100 * Math.floor(sum.phases.units / 10000) : 0);

// render redraws the header, the graph and the timeline from view.
function render() {
  const st = view.status;
  if (!st) return;
  const body = document.body.dataset;
  body.index = st.index;
  body.converged = st.converged;
  body.updates = view.updates;
  body.mode = st.units ? 'units' : 'counts';
  $('env').textContent = st.environment || '(unnamed)';
  $('env').hidden = !$('env-picker').hidden;
  const summary = $('summary');
  const errors = st.phases ? st.phases.error : Object.values(st.units || {}).filter((u) => u.phase === 'error').length;
  summary.textContent = st.summary || (Object.keys(st.units || {}).length ? '' : `no units at index ${st.index}`);
  summary.className = 'summary ' + (st.converged ? 'converged' : errors ? 'error' : 'pending');
  $('index').textContent = 'index ' + st.index;
  document.title = `${st.environment || 'fixpoint'}: ${st.summary || ''}`;
  const msg = $('message');
  msg.hidden = Object.keys(st.services || {}).length > 0;
  msg.textContent = 'No services yet: apply an environment (fixpoint apply -f env.cue).';
  renderAttention(st.units ? null : st);
  for (const b of document.querySelectorAll('#filter button')) b.setAttribute('aria-pressed', String(view.phases.has(b.dataset.kind)));
  // The URL sets the search box, but never under the operator's typing.
  if (document.activeElement !== $('search') && $('search').value.trim() !== view.q) $('search').value = view.q;
  renderGraph();
  renderTimeline();
}

// renderAttention lists, for a large environment, the units the summary
// names: the first in error, blocked, and those longest out of settled.
function renderAttention(sum) {
  const box = $('attention');
  box.hidden = !sum;
  if (!sum) return;
  const group = (title, list, more) => list && list.length
    ? `<div class="att-group"><b>${esc(title)}</b> ` + list.map((u) =>
      `<a href="#" data-unit="${esc(u.unit)}" class="att phase-${esc(u.phase)}" title="${esc(u.message || u.phase)}">${esc(u.unit)}</a>`).join(' ') +
      (more ? ` <span class="muted">and ${more} more</span>` : '') + '</div>'
    : '';
  box.innerHTML = `<div class="muted">${sum.phases.units} units, drawn by service (more than ${FULL}); search a unit by name or click one below for its panel</div>` +
    group('error', sum.errors, sum.more_errors) + group('blocked', (sum.blocked || []).map((u) => ({ ...u, phase: 'blocked' })), sum.more_blocked) + group('longest out of settled', sum.stuck, sum.more_stuck);
}

// ---- live updates ----------------------------------------------------------

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

// loadEnvs fills the environment picker from GET /v1/envs: the cluster's
// operator token lists them; an environment's own token may not, and the
// picker stays hidden (the page shows the environment the URL names).
async function loadEnvs() {
  let envs;
  try {
    envs = await api('/v1/envs');
  } catch {
    return;
  }
  view.envs = envs;
  const picker = $('env-picker');
  picker.innerHTML = envs.map((e) => {
    const value = e.default ? '' : e.name;
    const label = e.default ? `${e.name || '(unnamed)'} (default)` : e.name;
    return `<option value="${esc(value)}">${esc(label)} · ${e.units} units</option>`;
  }).join('');
  picker.value = view.env;
  picker.hidden = envs.length < 2 && !view.env;
  render();
}

// following counts the environments followed: a pick starts a new follow
// and the one before stops at its next turn.
let following = 0;

async function follow() {
  const mine = ++following;
  let last = null; // the summary last seen
  let failures = 0;
  for (;;) {
    if (mine !== following) return;
    try {
      const q = last ? `&index=${last.index}&generation=${last.generation}&wait=${encodeURIComponent(WAIT)}` : '';
      const sum = await api('/v1/status?summary=1' + q);
      if (mine !== following) return;
      failures = 0;
      setConn('live', 'live: following the control plane');
      if (last && sum.index < last.index) {
        // An index going backwards (a restored snapshot): start over.
        last = null;
        continue;
      }
      if (!last || sum.index !== last.index || sum.generation !== last.generation) {
        const [st, tl] = await Promise.all([
          sum.phases.units <= FULL ? api('/v1/status') : sum,
          api('/v1/status/timeline').catch(() => view.timeline),
        ]);
        const relations = !last || sum.index !== last.index ? await api('/v1/relations') : view.relations;
        if (mine !== following) return;
        view.relations = relations;
        view.status = st;
        view.timeline = tl;
        view.updates++;
        render();
        if (view.selected) {
          $('panel').hidden = false;
          $('panel').dataset.unit = view.selected;
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

// ---- input -----------------------------------------------------------------

// openFrom opens the panel of the unit an event's target names.
function openFrom(ev) {
  const g = ev.target.closest('[data-unit]');
  if (!g) return false;
  ev.preventDefault();
  showUnit(g.dataset.unit);
  return true;
}

$('graph').addEventListener('click', openFrom);
$('graph').addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') openFrom(ev); });
$('hits').addEventListener('click', openFrom);
$('attention').addEventListener('click', openFrom);
$('search').addEventListener('input', () => {
  view.q = $('search').value.trim();
  writeHash();
  render();
});
$('search').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter') {
    const first = $('hits').querySelector('[data-unit]');
    if (first) showUnit(first.dataset.unit);
  }
});
$('filter').addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-kind]');
  if (!b) return;
  if (view.phases.has(b.dataset.kind)) view.phases.delete(b.dataset.kind); else view.phases.add(b.dataset.kind);
  writeHash();
  render();
});
$('panel-close').addEventListener('click', () => showUnit(''));
$('env-picker').addEventListener('change', () => pickEnv($('env-picker').value));

// pickEnv shows environment env ('' the default one): the page starts
// over with its status, relations and timeline.
function pickEnv(env) {
  if (env === view.env) return;
  view.env = env;
  view.status = null;
  view.relations = [];
  view.timeline = null;
  showUnit('');
  writeHash();
  follow();
}
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') showUnit('');
  if (ev.key === '/' && document.activeElement !== $('search')) { ev.preventDefault(); $('search').focus(); }
});
window.addEventListener('resize', () => render());
window.addEventListener('hashchange', () => {
  const env = view.env;
  const unit = readHash();
  if (view.env !== env) {
    const next = view.env;
    view.env = env;
    $('env-picker').value = next;
    pickEnv(next);
    return;
  }
  if (unit !== view.selected) showUnit(unit); else render();
});

view.selected = readHash();
if (view.selected) {
  $('panel').hidden = false;
  $('panel').dataset.unit = view.selected;
  $('panel-title').textContent = view.selected;
  for (const sec of PANEL_SECTIONS) panelBody(sec);
}
follow();
loadEnvs();
