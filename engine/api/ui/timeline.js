// fixpoint dashboard, the convergence timeline: the units of each kind
// over time since the last apply, stacked (error at the bottom, blocked
// hatched above it, then pending, lost and settled), from the leader's
// series of phase counts (GET /v1/status/timeline). Times are 24-hour
// ISO 8601.
'use strict';

// TL_KINDS are the bands, bottom to top.
const TL_KINDS = ['error', 'blocked', 'pending', 'lost', 'settled'];
const TICKS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map((s) => s * 1000);

// sampleKinds is one sample's counts by band: blocked units are counted
// besides their phase, and drawn instead of settled.
function sampleKinds(s) {
  const blocked = Math.min(s.blocked || 0, s.settled || 0);
  return { error: s.error || 0, blocked, pending: (s.pending || 0) + (s.reconciling || 0), lost: s.lost || 0, settled: (s.settled || 0) - blocked };
}

// atRest says nothing is left to run: every unit settled or in error.
const atRest = (s) => !(s.pending || s.reconciling);

function renderTimeline() {
  const tl = view.timeline;
  const head = $('timeline-head'), svg = $('timeline-chart');
  if (!tl || !tl.samples || !tl.samples.length) {
    head.innerHTML = '<b>Convergence</b> <span class="muted">no counts yet: the leader starts a series at each apply, and a new leader its own</span>';
    svg.innerHTML = '';
    return;
  }
  const samples = tl.samples.map((s) => ({ t: Date.parse(s.time), k: sampleKinds(s), s }));
  const start = Date.parse(tl.start);
  const last = samples[samples.length - 1];
  const done = atRest(last.s);
  const end = done ? last.t + Math.max(1000, (last.t - start) * 0.08) : Math.max(Date.now(), last.t + 1000);
  const W = Math.max(200, svg.clientWidth || svg.parentNode.clientWidth), H = Math.max(40, svg.clientHeight || 64);
  const L = 4, R = 4, top = 4, bottom = H - 14;
  const x = (t) => L + (t - start) / Math.max(1, end - start) * (W - L - R);
  const most = Math.max(1, ...samples.map((p) => p.s.units));
  // A band of a few units among many still shows: 2 pixels at least.
  const tall = (v) => (v ? Math.max(2, v / most * (bottom - top)) : 0);
  const y = (h) => Math.max(top, bottom - h);
  const out = [];
  const below = samples.map(() => 0);
  for (const kind of TL_KINDS) {
    if (!samples.some((p) => p.k[kind])) continue;
    const upper = [], lower = [];
    samples.forEach((p, i) => {
      const t1 = i + 1 < samples.length ? samples[i + 1].t : end;
      const lo = below[i], hi = lo + tall(p.k[kind]);
      upper.push(`${x(p.t).toFixed(1)},${y(hi).toFixed(1)} ${x(t1).toFixed(1)},${y(hi).toFixed(1)}`);
      lower.unshift(`${x(t1).toFixed(1)},${y(lo).toFixed(1)} ${x(p.t).toFixed(1)},${y(lo).toFixed(1)}`);
      below[i] = hi;
    });
    out.push(`<polygon class="band kind-${kind}" data-kind="${kind}" points="${upper.join(' ')} ${lower.join(' ')}"><title>${kind}</title></polygon>`);
  }
  // Ticks: 24-hour times of day, about one per 110 pixels.
  const step = TICKS.find((s) => (end - start) / s <= (W - L - R) / 110) || TICKS[TICKS.length - 1];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) {
    const tx = x(t);
    out.push(`<line class="tick" x1="${tx}" x2="${tx}" y1="${top}" y2="${bottom + 3}"></line>` +
      `<text class="tick-label" x="${tx}" y="${H - 2}" text-anchor="${tx < 30 ? 'start' : tx > W - 30 ? 'end' : 'middle'}">${clock(new Date(t))}</text>`);
  }
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.innerHTML = out.join('');
  const at = new Date(start);
  const counts = last.k;
  const now = Object.entries(counts).filter(([, n]) => n).map(([k, n]) => `<span class="tl-count kind-${k}">${n} ${k}</span>`).join(' ');
  const state = !done ? `converging for ${seconds(Date.now() - start)}`
    : `${last.s.error ? 'at rest with units in error' : 'converged'} at ${timeTag(new Date(last.t), clock(new Date(last.t)))}, ${seconds(last.t - start)} after`;
  head.innerHTML = `<b>Convergence</b> <span class="muted">since the apply at index ${esc(tl.env_index)}, first counted ${timeTag(at, isoTime(at))}:</span> ${state} <span class="tl-now">${now}</span>`;
}

// Until the fixed point the chart runs on to now.
setInterval(() => {
  const tl = view.timeline;
  if (tl && tl.samples && tl.samples.length && !atRest(tl.samples[tl.samples.length - 1])) renderTimeline();
}, 1000);
