// The boardgame.io server: one process, the default in-memory storage, the lobby REST API and the
// socket.io transport on one port of 127.0.0.1. Prints `port <n>` once it listens.
//
//   node server.js [--port 0]
'use strict';

const { Server } = require('boardgame.io/server');
const { Bench } = require('./game');

const args = process.argv.slice(2);
const portIndex = args.indexOf('--port');
const port = portIndex >= 0 ? Number(args[portIndex + 1]) : 0;

// Node clients send no Origin header, so the allowed origins do not matter here.
const server = Server({ games: [Bench], origins: [] });

// Listen on loopback only: the socket.io attachment replaced app.listen with one that forwards
// its arguments to the HTTP server, so add the host.
const listen = server.app.listen;
server.app.listen = (listenPort, callback) => listen.call(server.app, listenPort, '127.0.0.1', callback);

server.run(port).then(({ appServer }) => {
  process.stdout.write(`port ${appServer.address().port}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
