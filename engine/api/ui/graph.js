// fixpoint dashboard, the graph: each service a small card with a strip
// of its units coloured by phase, on a grid of layers (a service that
// requires another sits left of it), relations drawn as orthogonal lines
// in the gutters between cards, so that no line crosses a card. The grid
// is shaped and scaled to fit the room there is: fifty services fit a
// 1920x1080 screen without scrolling.
'use strict';

const CARD_W = 168, CARD_H = 46, GUTTER_X = 34, GUTTER_Y = 12;
const PAD_X = GUTTER_X / 2 + 4, PAD_Y = GUTTER_Y / 2 + 4;
const CELL = 9, CELL_GAP = 2, STRIP_Y = 21;
const CELL_COLS = Math.floor((CARD_W - 16 + CELL_GAP) / (CELL + CELL_GAP));
// CELLS is the most units a card draws one by one; more are summarised
// as a bar of their kinds.
const CELLS = CELL_COLS * 2;
const MAX_SCALE = 2, MIN_SCALE = 0.45;

// layers puts services in columns by their relations, requirers left of
// providers, each column ordered so that related services sit close.
function layers(names, rels) {
  const level = Object.fromEntries(names.map((n) => [n, 0]));
  const edges = [];
  const adj = Object.fromEntries(names.map((n) => [n, []]));
  for (const r of rels) {
    if (r.endpoints.length !== 2) continue;
    const [a, b] = r.endpoints.map((e) => e.service);
    if (a === b || level[a] === undefined || level[b] === undefined) continue;
    adj[a].push(b);
    adj[b].push(a);
    const req = r.endpoints.find((e) => e.role === 'requires');
    const prov = r.endpoints.find((e) => e.role === 'provides');
    if (req && prov) edges.push([req.service, prov.service]);
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
  const out = cols.filter(Boolean);
  // A few sweeps of the barycentre rule: each service moves towards the
  // mean place of its neighbours in the column before (then after).
  const pos = {}, colOf = {};
  const index = () => out.forEach((col, c) => col.forEach((n, i) => { pos[n] = (i + 0.5) / col.length; colOf[n] = c; }));
  index();
  for (let sweep = 0; sweep < 4; sweep++) {
    const order = sweep % 2 ? out.map((_, i) => out.length - 1 - i) : out.map((_, i) => i);
    for (const c of order) {
      const key = {};
      for (const n of out[c]) {
        const ns = adj[n].filter((m) => colOf[m] !== c);
        key[n] = ns.length ? ns.reduce((s, m) => s + pos[m], 0) / ns.length : pos[n];
      }
      out[c].sort((a, b) => key[a] - key[b] || (a < b ? -1 : 1));
      index();
    }
  }
  return out;
}

// place lays the columns out on a grid of at most rows cards per column:
// a column with more takes several, filled evenly row by row, so that a
// card's height follows its place in the column's order.
function place(cols, rows) {
  const boxes = {};
  let c0 = 0;
  for (const col of cols) {
    const n = Math.ceil(col.length / rows);
    const used = Math.ceil(col.length / n);
    const off = Math.floor((rows - used) / 2);
    col.forEach((name, i) => {
      const c = c0 + (i % n), r = off + Math.floor(i / n);
      boxes[name] = { c, r, x: PAD_X + c * (CARD_W + GUTTER_X), y: PAD_Y + r * (CARD_H + GUTTER_Y), w: CARD_W, h: CARD_H };
    });
    c0 += n;
  }
  const width = PAD_X * 2 + c0 * CARD_W + Math.max(0, c0 - 1) * GUTTER_X;
  const height = PAD_Y * 2 + rows * CARD_H + (rows - 1) * GUTTER_Y;
  return { boxes, rows, cols: c0, width, height };
}

// layout is the grid that shows the services largest in room w by h.
function layout(names, rels, w, h) {
  const cols = layers(names, rels);
  const tallest = Math.max(1, ...cols.map((c) => c.length));
  let best = null;
  // Some 64 shapes at most: thousands of services are laid out at once.
  const step = Math.max(1, Math.floor(tallest / 64));
  for (let rows = 1; rows <= tallest; rows += step) {
    const g = place(cols, rows);
    g.scale = Math.min(w / g.width, h / g.height);
    if (!best || g.scale > best.scale + 1e-9) best = g;
  }
  best.scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, best.scale));
  return best;
}

// gutterX is the middle of the gutter right of grid column c; gutterY of
// the one below grid row r.
const gutterX = (c) => PAD_X + (c + 1) * (CARD_W + GUTTER_X) - GUTTER_X / 2;
const gutterY = (r) => PAD_Y + (r + 1) * (CARD_H + GUTTER_Y) - GUTTER_Y / 2;

// routes draws each relation between two services as a line that leaves
// a card's side into the gutter beside it, runs along the gutters (across
// other columns in a gutter between rows) and enters the other card's
// side. Lines sharing a gutter get lanes of their own.
function routes(rels, g) {
  const lanes = {};
  const use = (key) => { const l = (lanes[key] ||= { n: 0 }); return l.n++; };
  const items = [];
  for (const r of rels) {
    if (r.endpoints.length !== 2) continue;
    let A = g.boxes[r.endpoints[0].service], B = g.boxes[r.endpoints[1].service];
    if (!A || !B || A === B) continue;
    if (A.c > B.c || (A.c === B.c && A.r > B.r)) [A, B] = [B, A];
    const it = { r, A, B, v: [['v' + A.c, 0]] };
    if (B.c > A.c + 1) {
      let row = Math.abs(B.r - 1 - A.r) <= Math.abs(B.r - A.r) ? B.r - 1 : B.r;
      if (g.rows > 1) row = Math.min(g.rows - 2, Math.max(0, row));
      else row = -1;
      it.row = row;
      it.h = ['h' + row, 0];
      it.v.push(['v' + (B.c - 1), 0]);
    }
    for (const v of it.v) v[1] = use(v[0]);
    if (it.h) it.h[1] = use(it.h[0]);
    items.push(it);
  }
  const lane = (key, i, mid, room) => {
    const n = lanes[key].n;
    return mid + (i - (n - 1) / 2) * Math.min(4, (room - 8) / Math.max(1, n));
  };
  return items.map((it) => {
    const { A, B } = it;
    const ay = A.y + A.h / 2, by = B.y + B.h / 2;
    const x1 = lane(it.v[0][0], it.v[0][1], gutterX(A.c), GUTTER_X);
    let d;
    if (A.c === B.c) d = `M${A.x + A.w},${ay} H${x1} V${by} H${B.x + B.w}`;
    else if (!it.h) d = `M${A.x + A.w},${ay} H${x1} V${by} H${B.x}`;
    else {
      const y1 = lane(it.h[0], it.h[1], gutterY(it.row), GUTTER_Y);
      const x2 = lane(it.v[1][0], it.v[1][1], gutterX(B.c - 1), GUTTER_X);
      d = `M${A.x + A.w},${ay} H${x1} V${y1} H${x2} V${by} H${B.x}`;
    }
    return { r: it.r, d, services: [it.A, it.B] };
  });
}

// kindCounts counts a service's units by kind for its bar: from its
// units' lines, or from the summary's counts of a large environment.
function kindCounts(units, c) {
  if (units) {
    const k = { error: 0, blocked: 0, pending: 0, settled: 0 };
    for (const [, us] of units) k[kindOf(us)]++;
    return k;
  }
  const blocked = Math.min(c.blocked || 0, c.settled || 0);
  return { error: c.error || 0, blocked, pending: (c.pending || 0) + (c.reconciling || 0), settled: (c.settled || 0) - blocked, lost: c.lost || 0 };
}

// cellsSVG is a unit strip drawn one cell per unit.
function cellsSVG(units) {
  return units.map(([u, us], i) => {
    const x = 8 + (i % CELL_COLS) * (CELL + CELL_GAP), y = STRIP_Y + Math.floor(i / CELL_COLS) * (CELL + CELL_GAP);
    const kind = kindOf(us);
    const cls = ['unit', 'phase-' + us.phase, 'kind-' + kind];
    if (us.leader) cls.push('leader');
    if (us.agent === 'lost') cls.push('lost');
    else if (us.status && us.status.state === 'blocked') cls.push('blocked');
    if (u === view.selected) cls.push('selected');
    if (view.q && u.includes(view.q)) cls.push('hit');
    const detail = us.phase === 'error' ? us.error : [us.status && us.status.state, us.status && us.status.message].filter(Boolean).join(': ');
    return `<g class="${cls.join(' ')}" data-unit="${esc(u)}" data-phase="${esc(us.phase)}" data-kind="${kind}" transform="translate(${x},${y})" tabindex="0">` +
      `<title>${esc(u)}${us.leader ? ' (leader)' : ''}: ${esc(kind === 'blocked' ? 'settled, blocked' : us.phase)}${detail ? '\n' + esc(detail) : ''}${us.reason ? '\n' + esc(us.reason) : ''}</title>` +
      `<rect width="${CELL}" height="${CELL}" rx="2"></rect>${us.leader ? `<circle class="lead" cx="${CELL / 2}" cy="${CELL / 2}" r="1.7"></circle>` : ''}</g>`;
  }).join('');
}

// barSVG is a unit strip summarised: one segment per kind, as wide as its
// share, each opening its first unit when there is a list of them.
function barSVG(counts, first) {
  const kinds = ['error', 'blocked', 'pending', 'settled', 'lost'].filter((k) => counts[k] && (!view.phases.size || view.phases.has(k)));
  const total = kinds.reduce((s, k) => s + counts[k], 0);
  const room = CARD_W - 16;
  let x = 8;
  const out = [];
  for (const k of kinds) {
    const w = Math.max(3, room * counts[k] / Math.max(1, total));
    const unit = first && first[k];
    out.push(`<g class="seg kind-${k}" data-kind="${k}" data-count="${counts[k]}"${unit ? ` data-unit="${esc(unit)}"` : ''} transform="translate(${x},${STRIP_Y})">` +
      `<title>${counts[k]} ${k}${unit ? ` (first: ${esc(unit)})` : ''}</title><rect width="${w}" height="${CELL}" rx="2"></rect></g>`);
    x += w;
  }
  const words = kinds.filter((k) => k !== 'settled').map((k) => `${counts[k]} ${k}`);
  out.push(`<text class="svc-sub" x="8" y="${STRIP_Y + CELL + 12}">${total} unit${total === 1 ? '' : 's'}${words.length ? ' · ' + words.join(' · ') : ''}</text>`);
  return out.join('');
}

// cardSVG is one service's card. units are its units' [name, line] pairs
// in the units view, or null with c its summary counts.
function cardSVG(name, svc, b, units, c, peers) {
  const all = units ? kindCounts(units) : kindCounts(null, c);
  const total = units ? units.length : c.units;
  const visible = units ? units.filter(([u, us]) => shown(u, us)) : null;
  const matches = !view.q || name.includes(view.q) || (units ? units.some(([u]) => u.includes(view.q)) : view.q.split('/')[0] === name);
  const filtered = view.phases.size && (units ? visible.length === 0 : ![...view.phases].some((k) => all[k]));
  const cls = ['service'];
  if (svc.life && svc.life !== 'alive') cls.push(svc.life);
  if (all.error) cls.push('has-error');
  else if (all.blocked) cls.push('has-blocked');
  else if (all.pending) cls.push('has-pending');
  if (!matches || filtered) cls.push('dim');
  else if (view.q) cls.push('match');
  const shortName = name.length > 19 ? name.slice(0, 18) + '…' : name;
  const leader = units ? (units.find(([, us]) => us.leader) || [''])[0] : c.leader;
  const tip = `${name}: ${all.settled} of ${total} units settled` + (all.error ? `, ${all.error} in error` : '') + (all.blocked ? `, ${all.blocked} blocked` : '') +
    (leader ? `\nleader ${leader}` : '') + (svc.charm ? `\ncharm ${svc.charm.slice(0, 12)}` : '') + (peers.length ? `\npeers: ${peers.join(', ')}` : '');
  let strip;
  if (units && visible.length <= CELLS) strip = cellsSVG(visible);
  else {
    const first = {};
    for (const [u, us] of visible || []) first[kindOf(us)] ||= u;
    strip = barSVG(visible ? kindCounts(visible) : all, visible ? first : null);
  }
  return `<g class="${cls.join(' ')}" data-service="${esc(name)}" transform="translate(${b.x},${b.y})">` +
    `<title>${esc(tip)}</title>` +
    `<rect class="svc-box" width="${b.w}" height="${b.h}" rx="6"></rect>` +
    `<text class="svc-name" x="8" y="14">${esc(shortName)}</text>` +
    `<text class="svc-count" x="${b.w - 8}" y="14" text-anchor="end">${all.settled}/${total}</text>` +
    strip + '</g>';
}

// renderGraph draws the services and relations of view.status into #graph.
function renderGraph() {
  const st = view.status;
  const services = st.services || {};
  const counted = !st.units;
  const byService = {};
  if (!counted) {
    for (const [name, u] of Object.entries(st.units)) (byService[u.service] ||= []).push(name);
    for (const list of Object.values(byService)) list.sort(unitLess);
  }
  const rels = view.relations.filter((r) => r.endpoints.every((e) => services[e.service]));
  const wrap = $('graph-wrap');
  const above = [$('attention'), $('message')].reduce((h, el) => h + (el.hidden ? 0 : el.offsetHeight + 12), 0);
  const g = layout(Object.keys(services).sort(), rels, Math.max(200, wrap.clientWidth - 8), Math.max(120, wrap.clientHeight - 8 - above));
  const hot = view.selected ? view.selected.split('/')[0] : '';
  const out = [];
  for (const e of routes(rels, g)) {
    const [a, b] = e.r.endpoints;
    const cls = ['relation', e.r.life];
    if (hot && (a.service === hot || b.service === hot)) cls.push('hot');
    out.push(`<g class="relation-group" data-relation="${esc(e.r.key)}" data-id="${e.r.id}">` +
      `<path class="${cls.join(' ')}" d="${e.d}"><title>${esc(`${a.service}:${a.name} ⇄ ${b.service}:${b.name} · ${e.r.interface} (${e.r.scope}, ${e.r.life})`)}</title></path></g>`);
  }
  for (const name of Object.keys(g.boxes).sort()) {
    const peers = rels.filter((r) => r.endpoints.length === 1 && r.endpoints[0].service === name).map((r) => r.endpoints[0].name);
    const units = counted ? null : (byService[name] || []).map((u) => [u, st.units[u]]);
    out.push(cardSVG(name, services[name], g.boxes[name], units, counted ? services[name] : null, peers));
  }
  const svg = $('graph');
  svg.setAttribute('width', Math.floor(g.width * g.scale));
  svg.setAttribute('height', Math.floor(g.height * g.scale));
  svg.setAttribute('viewBox', `0 0 ${g.width} ${g.height}`);
  svg.innerHTML = out.join('');
  renderHits(counted ? null : byService);
}

// renderHits lists, under the search box, the units the search finds,
// worst first; in a large environment drawn by service, a unit's name
// offers its panel.
function renderHits(byService) {
  const box = $('hits');
  if (!view.q) { box.hidden = true; box.innerHTML = ''; return; }
  const st = view.status;
  let hits = [];
  if (byService) {
    hits = Object.keys(st.units).filter((u) => u.includes(view.q) && shown(u, st.units[u]))
      .map((u) => ({ unit: u, kind: kindOf(st.units[u]) }));
  } else if (/^[a-z0-9-]+\/\d+$/.test(view.q)) {
    hits = [{ unit: view.q, kind: '' }];
  }
  hits.sort((a, b) => (RANK[a.kind] ?? 9) - (RANK[b.kind] ?? 9) || unitLess(a.unit, b.unit));
  const svcs = Object.keys(st.services || {}).filter((s) => s.includes(view.q)).length;
  box.hidden = false;
  box.innerHTML = `<span class="muted">${hits.length} unit${hits.length === 1 ? '' : 's'}, ${svcs} service${svcs === 1 ? '' : 's'}</span> ` +
    hits.slice(0, 12).map((h) => `<a href="#" class="hit kind-${h.kind}" data-unit="${esc(h.unit)}" data-kind="${h.kind}">${esc(h.unit)}${h.kind ? ` <small>${h.kind}</small>` : ''}</a>`).join(' ') +
    (hits.length > 12 ? ` <span class="muted">and ${hits.length - 12} more</span>` : '');
}
