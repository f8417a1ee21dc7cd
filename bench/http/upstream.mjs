// The loopback upstream of the client rows (bench/http/clients.mjs), in a process of its own:
// every request is answered at once, 200 with a small JSON body and its length, on kept-alive
// connections. It tells its parent its port over IPC, and its CPU time when asked.

import { createServer } from 'node:http';

const BODY = Buffer.from('{"id":1,"ok":true}');
const server = createServer((request, response) => {
  request.resume();
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
  response.end(BODY);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
process.on('message', (message) => {
  if (message.cmd === 'cpu') process.send({ type: 'cpu', id: message.id, cpu: process.cpuUsage() });
  else if (message.cmd === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
