// Served as /static/games/chess.js by `retra serve` (compiled in by cmake/embed.cmake).
// The chess board for the explorer: White below, pieces as Unicode figures. Positions are FENs;
// every value is from the side to move's view (WDL under the 50-move rule, DTZ and DTM in plies).
'use strict';
window.retraGames = window.retraGames || {};
(function () {
  const FIG = {K: '♔', Q: '♕', R: '♖', B: '♗', N: '♘', P: '♙', k: '♚', q: '♛', r: '♜', b: '♝', n: '♞', p: '♟'};
  const S = 60, M = 24;
  const toXY = ([f, r]) => [M + f * S + S / 2, M + (7 - r) * S + S / 2];
  const sq = name => ['abcdefgh'.indexOf(name[0]), Number(name[1]) - 1];
  const pieces = fen => window.retraUI.fenPieces(fen, 8).map(({file, rank, ch}) => ({
    sq: [file, rank], name: 'abcdefgh'[file] + (rank + 1), letter: ch, text: FIG[ch] || ch,
    fill: ch === ch.toUpperCase() ? '#1565c0' : '#212121'}));
  function background(svg) {
    const {svgEl} = window.retraUI;
    for (let f = 0; f < 8; ++f)
      for (let r = 0; r < 8; ++r)
        svgEl('rect', {x: M + f * S, y: M + (7 - r) * S, width: S, height: S,
                       fill: (f + r) % 2 ? '#f0d9b5' : '#b58863'}, svg);
    for (let f = 0; f < 8; ++f)
      svgEl('text', {x: M + f * S + S / 2, y: M + 8 * S + 16, 'text-anchor': 'middle', 'font-size': 12},
            svg).textContent = 'abcdefgh'[f];
    for (let r = 0; r < 8; ++r)
      svgEl('text', {x: 8, y: M + (7 - r) * S + S / 2 + 4, 'font-size': 12}, svg).textContent = r + 1;
  }
  const valueText = v => `${v.wdl}, DTZ ${v.dtz}, DTM ${v.dtm === null ? '-' : v.dtm}`;
  // White's material in the table name's order, to tell whether the table is written from Black.
  function whiteMaterial(fen) {
    const ps = fen.split(' ')[0].replace(/[^A-Z]/g, '');
    return [...'KQRBNP'].map(c => c.repeat([...ps].filter(x => x === c).length)).join('');
  }
  window.retraGames.chess = {
    initial: () => ({}),
    after: () => ({}),
    example: () => '8/8/8/4k3/8/8/8/4K2Q w - - 0 1',
    valueText: j => `${j.side_to_move} to move: ${valueText(j)} (with the 50-move counter: ${j.outcome}) [${j.endgame}]`,
    moves(j) {
      return j.moves.map(m => ({label: m.uci, legal: true, child: m.child,
                                value: {wdl: m.wdl, dtz: m.dtz, dtm: m.dtm}, outcome: m.wdl,
                                from: sq(m.uci.slice(0, 2)), to: sq(m.uci.slice(2, 4)),
                                text: `${m.uci}: ${valueText(m)}`}));
    },
    draw(el, j, s, moves, onMove) {
      window.retraUI.gridBoard(el, {
        width: 2 * M + 8 * S, height: 2 * M + 8 * S, toXY, background, radius: 25,
        pieces: pieces(j.fen), onMove, moves: moves.map((m, index) => ({...m, index})),
      });
    },
    statsPlot(stats, j) {
      const e = stats.endgames && stats.endgames[j.endgame];
      if (!e) return null;
      let side = j.side_to_move;
      if (whiteMaterial(j.fen) !== j.endgame.split('v')[0]) side = side === 'white' ? 'black' : 'white';
      const h = e[side] && e[side].dtz;
      if (!h) return null;
      return {title: `${j.endgame}, ${side} to move in the table: positions by DTZ`,
              xLabel: 'plies (wins > 0, losses < 0)', points: window.retraUI.histogramPoints(h)};
    },
  };
})();
