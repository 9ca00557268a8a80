// Served as /static/games/awari.js by `retra serve` (compiled in by cmake/embed.cmake).
// Awari's board for the explorer: North's pits F..A on top, South's a..f below, the stores at the
// ends (stones captured along the line played here). Positions are the spec's 12 pit counts with
// the side to move's pits first, so the page remembers who is South to keep the board still.
'use strict';
window.retraGames = window.retraGames || {};
window.retraGames.awari = {
  initial: () => ({southToMove: true, stores: [0, 0]}),
  after(state, m) {
    const stores = state.stores.slice();
    stores[state.southToMove ? 0 : 1] += m.captured;
    return {southToMove: !state.southToMove, stores};
  },
  // The largest stone count served, spread one per pit from the side to move's first pit.
  example(db) {
    const n = Math.max(0, ...db.segments.map(Number).filter(x => !isNaN(x)));
    const pits = new Array(12).fill(0);
    for (let k = 0; k < n; ++k) pits[k % 12] += 1;
    return pits.join(',');
  },
  player: s => (s.southToMove ? 'South' : 'North'),
  valueText(j, s) {
    const v = j.value > 0 ? '+' + j.value : String(j.value);
    const who = this.player(s);
    let t = `value ${v} for ${who} (to move): ${j.outcome}`;
    if (j.terminal) t += ' — game over: ' + j.terminal;
    return t;
  },
  moves(j, s) {
    const letters = s.southToMove ? 'abcdef' : 'ABCDEF';
    return j.moves.map(m => ({
      label: letters[m.pit], legal: m.legal, child: m.child, value: m.value, outcome: m.outcome,
      captured: m.captured, pit: m.pit,
      text: m.legal ? `${letters[m.pit]} (${m.stones} stones${m.captured ? ', captures ' + m.captured : ''}): ` +
                      `${m.value > 0 ? '+' : ''}${m.value}` : `${letters[m.pit]}: not a legal move`,
    }));
  },
  draw(el, j, s, moves, onMove) {
    const {svgEl} = window.retraUI;
    el.textContent = '';
    const pits = j.position.split(',').map(Number);
    const south = s.southToMove ? pits.slice(0, 6) : pits.slice(6, 12);
    const north = s.southToMove ? pits.slice(6, 12) : pits.slice(0, 6);
    const W = 640, H = 250, R = 34;
    const svg = svgEl('svg', {width: W, height: H, id: 'board-svg'}, el);
    svgEl('rect', {x: 2, y: 2, width: W - 4, height: H - 4, rx: 40, fill: '#a1887f', stroke: '#5d4037',
                   'stroke-width': 3}, svg);
    const store = (x, n, who) => {
      svgEl('rect', {x: x - 30, y: 45, width: 60, height: 160, rx: 28, fill: '#d7ccc8',
                     'data-store': who}, svg);
      svgEl('text', {x, y: 132, 'text-anchor': 'middle', 'font-size': 22}, svg).textContent = n;
      svgEl('text', {x, y: 225, 'text-anchor': 'middle', 'font-size': 11}, svg).textContent = who;
    };
    store(45, s.stores[1], 'North');
    store(W - 45, s.stores[0], 'South');
    const pit = (x, y, n, name, move) => {
      const g = svgEl('g', {class: 'pit', 'data-pit': name}, svg);
      svgEl('circle', {cx: x, cy: y, r: R, fill: '#efebe9', stroke: '#5d4037', class: move ? move.outcome : ''}, g);
      svgEl('text', {x, y: y + 8, 'text-anchor': 'middle', 'font-size': 22}, g).textContent = n;
      svgEl('text', {x, y: y + (y < H / 2 ? -R - 4 : R + 14), 'text-anchor': 'middle', 'font-size': 11},
            g).textContent = name + (move && move.legal ? ` ${move.value > 0 ? '+' : ''}${move.value}` : '');
      if (move && move.legal) g.addEventListener('click', () => onMove(move.index));
    };
    const mover = s.southToMove ? 'south' : 'north';
    for (let i = 0; i < 6; ++i) {
      // South's a..f left to right; North's A..F right to left (sowing runs counter-clockwise).
      const sx = 120 + i * 80, nx = 120 + (5 - i) * 80;
      const sm = mover === 'south' ? {...moves[i], index: i} : null;
      const nm = mover === 'north' ? {...moves[i], index: i} : null;
      pit(sx, 180, south[i], 'abcdef'[i], sm);
      pit(nx, 70, north[i], 'ABCDEF'[i], nm);
    }
  },
  statsPlot(stats, j) {
    const seg = (stats.segments || []).find(x => x.stones === j.stones);
    if (!seg) return null;
    return {title: `${j.stones} stones: positions by value`, xLabel: 'value (stones)',
            points: window.retraUI.histogramPoints(seg.histogram)};
  },
};
