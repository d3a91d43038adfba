// The game both processes load: two players, one cheap move per turn, always legal. A match ends
// after the number of moves given as setupData when it is created (default 100), so matches stay
// short and the server's in-memory log per match stays small, as in real play.
'use strict';

const bump = (index) => ({ G }) => {
  G.tally[index] += 1;
  G.moves += 1;
};

const Bench = {
  name: 'bench',
  minPlayers: 2,
  maxPlayers: 2,
  setup: (_context, setupData) => ({
    moves: 0,
    limit: (setupData && Number(setupData.moves)) || 100,
    tally: [0, 0, 0],
  }),
  validateSetupData: (setupData) => {
    if (setupData === undefined) return undefined;
    const moves = Number(setupData.moves);
    return Number.isInteger(moves) && moves > 0 ? undefined : 'setupData.moves must be a positive integer';
  },
  moves: { a: bump(0), b: bump(1), c: bump(2) },
  turn: { minMoves: 1, maxMoves: 1 },
  endIf: ({ G }) => (G.moves >= G.limit ? { draw: true } : undefined),
};

module.exports = { Bench, MOVE_NAMES: ['a', 'b', 'c'] };
