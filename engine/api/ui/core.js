// fixpoint dashboard, shared parts: the API, the page's state and its URL,
// the phase rules the views share, and ISO time formats. Plain
// JavaScript, no build step, no dependencies; the other scripts (graph.js,
// timeline.js, panel.js, app.js) load after this one.
//
// URL: /ui/?wait=30s&full=1000#q=web/3&phase=error,blocked&unit=web/0&token=T
//   wait   how long one blocking query may wait (default 30s)
//   full   the most units drawn one by one (default 1000, as `fixpoint
//          wait` prints its table); a larger environment is drawn by
//          service, with its units counted by phase
//   q      search: services and units whose name holds it
//   phase  filter: the kinds of units shown (error, blocked, pending,
//          settled), comma-separated; none for all
//   unit   the unit whose panel is open
//   env    the environment shown (the picker's; none for the default one):
//          every read goes to its routes, /v1/envs/ENV/...
//   token  the operator token, kept in localStorage and dropped from the URL
'use strict';

const query = new URLSearchParams(location.search);
const WAIT = query.get('wait') || '30s';
const FULL = Number(query.get('full') || 1000);

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class HTTPError extends Error {
  constructor(status, msg) { super(msg); this.status = status; }
}

let token = '';

// envPath is path under the shown environment's routes: every read of
// the dashboard is the environment's but the list of environments.
function envPath(path) {
  if (!view.env || !path.startsWith('/v1/') || path === '/v1/envs') return path;
  return '/v1/envs/' + encodeURIComponent(view.env) + '/' + path.slice(4);
}

async function api(path) {
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  const res = await fetch(envPath(path), { headers, cache: 'no-store' });
  const text = await res.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { error: text }; }
  if (!res.ok) throw new HTTPError(res.status, (body && body.error) || res.statusText);
  return body;
}

// unitPath is a unit's name as a path: service/N, each part escaped.
const unitPath = (unit) => unit.split('/').map(encodeURIComponent).join('/');

// ---- the page's state ------------------------------------------------------

const view = {
  status: null, // the full status, or the summary of a large environment
  relations: [],
  timeline: null,
  updates: 0,
  selected: '', // the unit whose panel is open
  q: '', // search
  phases: new Set(), // the kinds shown; empty for all
  env: '', // the environment shown; '' the default one
  envs: null, // GET /v1/envs, when this token may list them
};

// KINDS are what the filter offers: a unit's kind is its phase, but
// reconciling counts as pending (not settled yet) and a settled unit whose
// workload says blocked is blocked.
const KINDS = ['error', 'blocked', 'pending', 'settled'];

function kindOf(us) {
  if (us.phase === 'error') return 'error';
  if (us.agent !== 'lost' && us.status && us.status.state === 'blocked') return 'blocked';
  if (us.phase === 'pending' || us.phase === 'reconciling') return 'pending';
  return 'settled';
}

// RANK orders units worst first: error, blocked, pending, settled.
const RANK = { error: 0, blocked: 1, pending: 2, settled: 3 };

function unitLess(a, b) {
  const [sa, na] = a.split('/');
  const [sb, nb] = b.split('/');
  return sa === sb ? Number(na) - Number(nb) : (sa < sb ? -1 : 1);
}

// shown says whether the search and the filter leave unit name (of
// status line us) on the page.
function shown(name, us) {
  if (view.phases.size && !view.phases.has(kindOf(us))) return false;
  return !view.q || name.includes(view.q) || us.service.includes(view.q);
}

// ---- URL state -------------------------------------------------------------

// readHash takes the search, the filter, the open unit and a token from
// the URL's fragment; it drops the token from the URL once kept.
function readHash() {
  const hp = new URLSearchParams(location.hash.slice(1));
  if (hp.has('token')) {
    token = hp.get('token');
    localStorage.setItem('fixpoint.token', token);
    hp.delete('token');
    history.replaceState(null, '', location.pathname + location.search + (hp.toString() ? '#' + hp : ''));
  } else if (!token) {
    token = localStorage.getItem('fixpoint.token') || '';
  }
  view.env = (hp.get('env') || '').trim();
  view.q = (hp.get('q') || '').trim();
  view.phases = new Set((hp.get('phase') || '').split(',').filter((k) => KINDS.includes(k)));
  return hp.get('unit') || '';
}

// writeHash puts the search, the filter and the open unit in the URL, so
// that what the page shows can be linked to.
function writeHash() {
  const hp = new URLSearchParams();
  if (view.env) hp.set('env', view.env);
  if (view.q) hp.set('q', view.q);
  if (view.phases.size) hp.set('phase', KINDS.filter((k) => view.phases.has(k)).join(','));
  if (view.selected) hp.set('unit', view.selected);
  const hash = hp.toString().replaceAll('%2F', '/').replaceAll('%2C', ',');
  history.replaceState(null, '', location.pathname + location.search + (hash ? '#' + hash : ''));
}

// ---- times -----------------------------------------------------------------

const pad = (n, w = 2) => String(n).padStart(w, '0');

// isoTime is t (a Date) as ISO 8601 in 24-hour local time, as `fixpoint
// logs` prints times: 2026-12-05 17:04:05, with milliseconds if ms.
function isoTime(t, ms) {
  const s = `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${clock(t)}`;
  return ms ? `${s}.${pad(t.getMilliseconds(), 3)}` : s;
}

// clock is t's time of day, 24-hour: 17:04:05.
const clock = (t) => `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;

// timeTag is a <time> element showing t by fmt, the instant in its
// datetime attribute.
const timeTag = (t, text) => `<time datetime="${esc(t.toISOString())}">${esc(text)}</time>`;

// seconds says a duration in ms briefly: 840 ms, 12.5 s, 3 min 20 s.
function seconds(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}
