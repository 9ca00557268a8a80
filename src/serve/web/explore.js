// The explorer page for every game: reads ?db= and ?position=, probes through /api/probe, shows
// the value, lists every move coloured by its outcome (click one to play it), keeps the history
// for Undo, and draws the endgame's statistics. Boards are drawn by window.retraGames[game], which
// each game's script (/static/games/<game>.js) registers.
'use strict';
const SVG = 'http://www.w3.org/2000/svg';

// An SVG element with attributes.
function svgEl(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// A grid board (xiangqi, chess): pieces on squares, the side to move's moves drawn as coloured
// markers on their targets once a piece is selected; clicking a marker plays the move.
// opt: {width, height, toXY([file, rank]) -> [x, y], background(svg), pieces: [{sq, text, fill}],
//       moves: [{from, to, outcome, index}], onMove(index), radius}
function gridBoard(el, opt) {
  el.textContent = '';
  const svg = svgEl('svg', {width: opt.width, height: opt.height, viewBox: `0 0 ${opt.width} ${opt.height}`,
                            id: 'board-svg'}, el);
  opt.background(svg);
  const key = sq => sq[0] + ',' + sq[1];
  const markers = svgEl('g', {}, null);
  let selected = null;
  const showTargets = from => {
    markers.textContent = '';
    selected = from;
    if (!from) return;
    for (const m of opt.moves) {
      if (key(m.from) !== key(from)) continue;
      const [x, y] = opt.toXY(m.to);
      const c = svgEl('circle', {cx: x, cy: y, r: opt.radius * 0.45, class: 'target ' + m.outcome,
                                 'data-move-index': m.index, stroke: '#333', 'stroke-width': 1},
                      markers);
      c.style.cursor = 'pointer';
      c.addEventListener('click', ev => { ev.stopPropagation(); opt.onMove(m.index); });
    }
  };
  for (const p of opt.pieces) {
    const [x, y] = opt.toXY(p.sq);
    const g = svgEl('g', {class: 'piece', 'data-square': p.name, 'data-piece': p.letter}, svg);
    svgEl('circle', {cx: x, cy: y, r: opt.radius, fill: '#fdf6e3', stroke: p.fill, 'stroke-width': 2}, g);
    const t = svgEl('text', {x: x, y: y + opt.radius * 0.38, 'text-anchor': 'middle',
                             'font-size': opt.radius * 1.1, fill: p.fill}, g);
    t.textContent = p.text;
    if (opt.moves.some(m => key(m.from) === key(p.sq))) {
      g.style.cursor = 'pointer';
      g.addEventListener('click', () => showTargets(selected && key(selected) === key(p.sq) ? null : p.sq));
    }
  }
  svg.appendChild(markers);
}

// A bar chart of one histogram: points [[x, count]], x ascending.
function barChart(el, title, points, xLabel) {
  el.textContent = '';
  if (!points.length) { el.textContent = 'no statistics for this position'; return; }
  const W = 560, H = 220, L = 50, B = 30;
  const svg = svgEl('svg', {width: W, height: H, id: 'plot-svg'}, el);
  const xs = points.map(p => p[0]), max = Math.max(...points.map(p => p[1]), 1);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), n = x1 - x0 + 1;
  const bw = (W - L - 10) / n;
  svgEl('text', {x: L, y: 14, 'font-size': 12}, svg).textContent = title;
  for (const [x, c] of points) {
    const h = (H - B - 24) * c / max;
    const r = svgEl('rect', {x: L + (x - x0) * bw, y: H - B - h, width: Math.max(bw - 1, 1), height: h,
                             fill: x > 0 ? '#66bb6a' : x < 0 ? '#ef5350' : '#9e9e9e'}, svg);
    svgEl('title', {}, r).textContent = `${x}: ${c}`;
  }
  svgEl('line', {x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: '#333'}, svg);
  svgEl('text', {x: L, y: H - 8, 'font-size': 11}, svg).textContent = String(x0);
  svgEl('text', {x: W - 10, y: H - 8, 'font-size': 11, 'text-anchor': 'end'}, svg).textContent = String(x1);
  svgEl('text', {x: (L + W) / 2, y: H - 8, 'font-size': 11, 'text-anchor': 'middle'}, svg).textContent = xLabel;
  svgEl('text', {x: 4, y: 30, 'font-size': 11}, svg).textContent = String(max);
}

// Histogram object {"-2": 40, "0": 13} -> sorted points.
function histogramPoints(h) {
  return Object.entries(h || {}).map(([k, v]) => [Number(k), v]).filter(p => p[1] > 0)
    .sort((a, b) => a[0] - b[0]);
}

// The pieces of a FEN's board part (xiangqi and chess): the first rank written is the top one.
// Returns [{file, rank, ch}] with rank 0 at the bottom.
function fenPieces(fen, ranks) {
  const out = [];
  fen.split(' ')[0].split('/').forEach((row, i) => {
    let f = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) { f += Number(ch); continue; }
      out.push({file: f, rank: ranks - 1 - i, ch});
      ++f;
    }
  });
  return out;
}

window.retraUI = {svgEl, gridBoard, barChart, histogramPoints, fenPieces};

(async function main() {
  const params = new URLSearchParams(location.search);
  const dbName = params.get('db');
  const $ = id => document.getElementById(id);
  const showError = msg => { $('error').hidden = !msg; $('error').textContent = msg || ''; };
  const list = await (await fetch('/api/databases')).json();
  const db = list.databases.find(d => d.name === dbName) || list.databases[0];
  $('db-name').textContent = db.name;
  $('game').textContent = '(' + db.game + ')';
  document.title = `retra explorer: ${db.name}`;
  // The game's board script (src/games/<game>/explorer.js), loaded for this game only.
  await new Promise(resolve => {
    const script = document.createElement('script');
    script.src = `/static/games/${encodeURIComponent(db.game)}.js`;
    script.onload = script.onerror = resolve;
    document.head.appendChild(script);
  });
  const game = (window.retraGames || {})[db.game];
  if (!game) { showError(`this page has no board for game ${db.game}`); return; }
  const stats = await (await fetch('/api/stats?db=' + encodeURIComponent(db.name))).json();
  // history: [{position, json, state}]; state is the game's (Awari: who is South, stores).
  const history = [];

  async function probe(position) {
    const r = await fetch('/api/probe?db=' + encodeURIComponent(db.name) + '&position=' +
                          encodeURIComponent(position));
    return r.json();
  }
  function render() {
    const cur = history[history.length - 1];
    const j = cur.json;
    $('position-input').value = j.position || j.fen;
    const link = `/explore?db=${encodeURIComponent(db.name)}&position=${encodeURIComponent(cur.position)}`;
    $('permalink').href = link;
    window.history.replaceState(null, '', link);
    const v = $('value');
    v.textContent = game.valueText(j, cur.state);
    v.dataset.value = JSON.stringify(j.value !== undefined ? j.value : j.wdl);
    v.dataset.position = j.position || j.fen;
    v.className = 'value ' + (j.outcome || '');
    const ol = $('moves');
    ol.textContent = '';
    const moves = game.moves(j, cur.state);
    moves.forEach((m, i) => {
      const li = document.createElement('li');
      li.className = m.legal === false ? 'illegal' : (m.outcome || '');
      li.textContent = m.text;
      li.dataset.move = m.label;
      if (m.legal !== false) {
        li.dataset.child = m.child;
        li.dataset.value = JSON.stringify(m.value);
        li.addEventListener('click', () => play(i));
      }
      ol.appendChild(li);
    });
    game.draw($('board'), j, cur.state, moves, i => play(i));
    const s = game.statsPlot(stats, j, cur.state);
    $('stats-title').textContent = s ? s.title : '';
    if (s) barChart($('plot'), s.title, s.points, s.xLabel); else $('plot').textContent = '';
  }
  async function go(position, state) {
    const j = await probe(position);
    if (!j.ok) { showError(j.error.message); return false; }
    showError('');
    history.push({position, json: j, state});
    render();
    return true;
  }
  async function play(i) {
    const cur = history[history.length - 1];
    const m = game.moves(cur.json, cur.state)[i];
    if (!m || m.legal === false) return;
    await go(m.child, game.after(cur.state, m));
  }
  $('undo').addEventListener('click', () => {
    if (history.length > 1) { history.pop(); render(); }
  });
  $('position-form').addEventListener('submit', ev => {
    ev.preventDefault();
    go($('position-input').value.trim(), game.initial());
  });
  const start = params.get('position') || game.example(db);
  if (!(await go(start, game.initial()))) $('position-input').value = start;
  document.body.dataset.ready = '1';
})();
