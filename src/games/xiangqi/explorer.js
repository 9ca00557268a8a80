// Served as /static/games/xiangqi.js by `retra serve` (compiled in by cmake/embed.cmake).
// The xiangqi board for the explorer: nine files, ten ranks, the river and both palaces; pieces by
// the paper's letters (K G M R N C P; Red's below), which need no CJK font on the machine.
'use strict';
window.retraGames = window.retraGames || {};
(function () {
  const S = 50, M = 40;
  const toXY = ([f, r]) => [M + f * S, M + (9 - r) * S];
  const sq = name => ['abcdefghi'.indexOf(name[0]), Number(name.slice(1))];
  // Pieces of a FEN's board part: the first rank written is rank 9 (Black's back rank).
  const pieces = fen => window.retraUI.fenPieces(fen, 10).map(({file, rank, ch}) => {
    const red = ch === ch.toUpperCase();
    return {sq: [file, rank], name: 'abcdefghi'[file] + rank, letter: ch, text: ch.toUpperCase(),
            fill: red ? '#c62828' : '#212121'};
  });
  function background(svg) {
    const {svgEl} = window.retraUI;
    const line = (a, b) => {
      const [x1, y1] = toXY(a), [x2, y2] = toXY(b);
      svgEl('line', {x1, y1, x2, y2, stroke: '#5d4037', 'stroke-width': 1.5}, svg);
    };
    svgEl('rect', {x: 0, y: 0, width: 2 * M + 8 * S, height: 2 * M + 9 * S, fill: '#f3d9a4'}, svg);
    for (let r = 0; r < 10; ++r) line([0, r], [8, r]);
    for (let f = 0; f < 9; ++f) {
      if (f === 0 || f === 8) { line([f, 0], [f, 9]); continue; }
      line([f, 0], [f, 4]);  // the river cuts the inner files
      line([f, 5], [f, 9]);
    }
    for (const [a, b] of [[0, 2], [7, 9]]) { line([3, a], [5, b]); line([5, a], [3, b]); }
    const [x, y] = toXY([4, 4.5]);
    svgEl('text', {x, y: y + 7, 'text-anchor': 'middle', 'font-size': 20, fill: '#5d4037'}, svg)
      .textContent = 'river';
    for (let f = 0; f < 9; ++f) {
      const [fx, fy] = toXY([f, 0]);
      svgEl('text', {x: fx, y: fy + 32, 'text-anchor': 'middle', 'font-size': 11}, svg).textContent =
        'abcdefghi'[f];
    }
    for (let r = 0; r < 10; ++r) {
      const [rx, ry] = toXY([0, r]);
      svgEl('text', {x: rx - 28, y: ry + 4, 'font-size': 11}, svg).textContent = r;
    }
  }
  window.retraGames.xiangqi = {
    initial: () => ({}),
    after: () => ({}),
    example: () => '3k5/9/9/9/9/9/9/9/4R4/4K4 w',
    valueText: j => `${j.side_to_move} to move: ${j.meaning} [${j.endgame}, ${j.metric} value ${j.value}]`,
    moves(j) {
      return j.moves.map(m => {
        const p = /^([A-Z])([a-i]\d)[-x]([a-i]\d)$/.exec(m.move);
        return {label: m.move, legal: true, child: m.child, value: m.value, outcome: m.outcome,
                from: p ? sq(p[2]) : null, to: p ? sq(p[3]) : null,
                text: `${m.move}: ${m.meaning}`};
      });
    },
    draw(el, j, s, moves, onMove) {
      window.retraUI.gridBoard(el, {
        width: 2 * M + 8 * S, height: 2 * M + 9 * S, toXY, background, radius: 20,
        pieces: pieces(j.fen), onMove,
        moves: moves.map((m, index) => ({...m, index})).filter(m => m.from),
      });
    },
    statsPlot(stats, j) {
      const e = stats.endgames && stats.endgames[j.endgame];
      if (!e) return null;
      // Stored values: 0 draw, odd: the side to move wins in that many plies, even: it loses.
      const pts = window.retraUI.histogramPoints(e.histogram[j.side_to_move])
        .map(([v, n]) => [v === 0 ? 0 : v % 2 ? v : -v, n]).sort((a, b) => a[0] - b[0]);
      return {title: `${j.endgame}, ${j.side_to_move} to move: positions by ${j.metric}`,
              xLabel: 'plies (wins > 0, losses < 0)', points: pts};
    },
  };
})();
