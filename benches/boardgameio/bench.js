// The load generator: one process holding, for each of N concurrent matches, two boardgame.io
// Clients with the socket.io transport, as two players' browsers would. Each match is created and
// joined through the server's lobby REST API (playerID + credentials per seat); each client moves
// as soon as its state update says it is its turn, flat out. When a match ends the lane creates
// and joins the next one, so N matches stay live.
//
//   node bench.js --server http://127.0.0.1:PORT --server-pid PID --games 64 --duration 10s
//       [--warm-up 2s] [--moves-per-match 100] [--clock-ticks 100]
//
// A move counts when the mover's own client sees the server's state with it applied: the turn
// advanced (or the match ended). The client's optimistic local update does not count: it does not
// advance the turn, only the server does. Latency is from the move call to that state.
'use strict';

const { Client, LobbyClient } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const fs = require('fs');
const { performance } = require('perf_hooks');
const { Bench, MOVE_NAMES } = require('./game');

function parseDuration(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(text));
  if (!match) throw new Error(`bad duration: ${text}`);
  const value = Number(match[1]);
  return match[2] === 'ms' ? value : match[2] === 'm' ? value * 60_000 : value * 1000;
}

function parseArgs(argv) {
  const opts = {
    server: null,
    serverPid: null,
    games: 1,
    durationMs: 10_000,
    warmUpMs: 2000,
    movesPerMatch: 100,
    clockTicks: 100,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    i += 1;
    switch (flag) {
      case '--server': opts.server = value; break;
      case '--server-pid': opts.serverPid = Number(value); break;
      case '--games': opts.games = Number(value); break;
      case '--duration': opts.durationMs = parseDuration(value); break;
      case '--warm-up': opts.warmUpMs = parseDuration(value); break;
      case '--moves-per-match': opts.movesPerMatch = Number(value); break;
      case '--clock-ticks': opts.clockTicks = Number(value); break;
      default: throw new Error(`unknown flag ${flag}`);
    }
  }
  if (!opts.server) throw new Error('--server is required');
  if (!(Number.isInteger(opts.games) && opts.games > 0)) throw new Error('--games must be a positive integer');
  if (!(Number.isInteger(opts.movesPerMatch) && opts.movesPerMatch > 0)) {
    throw new Error('--moves-per-match must be a positive integer');
  }
  return opts;
}

// utime + stime of another process, in seconds, from the kernel's accounting.
function processCpuSeconds(pid, clockTicks) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const opts = parseArgs(process.argv.slice(2));
const lobby = new LobbyClient({ server: opts.server });
const socketOpts = { forceNew: true, transports: ['websocket'] };

const t0 = performance.now();
const windowStart = t0 + opts.warmUpMs;
const windowEnd = windowStart + opts.durationMs;
let stopping = false;
const latencies = [];
let acked = 0;
let matchesFinished = 0;
let matchesAbandoned = 0;
let errors = 0;
let lastError = null;
const liveClients = new Set();

function noteError(error) {
  if (stopping) return;
  errors += 1;
  lastError = error;
}

function recordAck(sentAt) {
  const now = performance.now();
  if (now >= windowStart && now <= windowEnd) {
    acked += 1;
    latencies.push(now - sentAt);
  }
}

// Plays one match with two connected clients; resolves when the match is over (or abandoned).
function playMatch(matchID, credentials) {
  return new Promise((resolve) => {
    const clients = [];
    let done = false;
    let lastProgress = performance.now();
    const finish = (finished) => {
      if (done) return;
      done = true;
      clearInterval(watchdog);
      for (const client of clients) {
        // At the end of the run the main timer may have stopped them already.
        if (liveClients.delete(client)) client.stop();
      }
      const now = performance.now();
      if (now >= windowStart && now <= windowEnd) {
        if (finished) matchesFinished += 1;
        else if (!stopping) matchesAbandoned += 1;
      }
      resolve();
    };
    // A match that makes no progress for 5 s (e.g. a refused move) is abandoned and replaced.
    const watchdog = setInterval(() => {
      if (stopping) finish(false);
      else if (performance.now() - lastProgress > 5000) finish(false);
    }, 250);
    for (const playerID of ['0', '1']) {
      const client = Client({
        game: Bench,
        numPlayers: 2,
        matchID,
        playerID,
        credentials: credentials[playerID],
        multiplayer: SocketIO({ server: opts.server, socketOpts }),
        debug: false,
      });
      let movedInTurn = 0; // the turn in which this client last moved
      let pending = null; // { turn, sentAt } of this client's move awaiting the server's state
      client.subscribe((state) => {
        if (done || state === null || state === undefined) return;
        const { ctx } = state;
        if (pending !== null && (ctx.turn > pending.turn || ctx.gameover !== undefined)) {
          recordAck(pending.sentAt);
          pending = null;
          lastProgress = performance.now();
        }
        if (ctx.gameover !== undefined) {
          finish(true);
          return;
        }
        if (stopping || pending !== null) return;
        if (ctx.currentPlayer === playerID && ctx.turn > movedInTurn && state.isActive) {
          movedInTurn = ctx.turn;
          pending = { turn: ctx.turn, sentAt: performance.now() };
          client.moves[MOVE_NAMES[(Math.random() * MOVE_NAMES.length) | 0]]();
        }
      });
      clients.push(client);
      liveClients.add(client);
    }
    for (const client of clients) client.start();
  });
}

async function lane(index) {
  // The lanes' first matches are shortened so that their ends (and the next creates, joins and
  // connections) are spread evenly instead of all falling at once.
  let moves = Math.max(1, Math.round((opts.movesPerMatch * (index + 1)) / opts.games));
  while (!stopping) {
    try {
      const { matchID } = await lobby.createMatch(Bench.name, {
        numPlayers: 2,
        setupData: { moves },
      });
      moves = opts.movesPerMatch;
      const credentials = {};
      for (const playerID of ['0', '1']) {
        const joined = await lobby.joinMatch(Bench.name, matchID, {
          playerID,
          playerName: `lane${index}-seat${playerID}`,
        });
        credentials[playerID] = joined.playerCredentials;
      }
      if (stopping) return;
      await playMatch(matchID, credentials);
    } catch (error) {
      noteError(error);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const fmt = (n, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';

let cpuStart = null;
setTimeout(() => {
  cpuStart = {
    server: opts.serverPid ? processCpuSeconds(opts.serverPid, opts.clockTicks) : null,
    client: ownCpuSeconds(),
  };
}, windowStart - performance.now());

setTimeout(() => {
  const cpuEnd = {
    server: opts.serverPid ? processCpuSeconds(opts.serverPid, opts.clockTicks) : null,
    client: ownCpuSeconds(),
  };
  stopping = true;
  const seconds = opts.durationMs / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const perThousand = (cpu) => (acked > 0 ? (cpu * 1000) / acked : NaN);
  const serverCpu = opts.serverPid ? perThousand(cpuEnd.server - cpuStart.server) : NaN;
  const clientCpu = perThousand(cpuEnd.client - cpuStart.client);
  const version = require('boardgame.io/package.json').version;
  const line =
    `boardgame.io ${version}, ${opts.games} games, ${fmt(seconds, 1)} s after ${fmt(opts.warmUpMs / 1000, 1)} s warm-up: ` +
    `${fmt(acked / seconds)} moves/s acknowledged (${fmt(acked)} moves), ` +
    `latency p50 ${fmt(percentile(sorted, 50), 2)} ms / p99 ${fmt(percentile(sorted, 99), 2)} ms; ` +
    `CPU s per 1,000 moves: server ${fmt(serverCpu, 3)}, clients ${fmt(clientCpu, 3)}; ` +
    `${fmt(matchesFinished)} matches finished, ${fmt(matchesAbandoned)} abandoned, ${fmt(errors)} errors`;
  process.stdout.write(line + '\n');
  if (lastError) process.stderr.write(`last error: ${lastError && lastError.stack ? lastError.stack : lastError}\n`);
  for (const client of liveClients) client.stop();
  liveClients.clear();
  setTimeout(() => process.exit(acked > 0 ? 0 : 1), 50);
}, windowEnd - performance.now());

for (let i = 0; i < opts.games; i += 1) lane(i);
