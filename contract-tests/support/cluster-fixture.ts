// A cluster of src/cluster.ts around a tiny HTTP service instead of the real ones, so a test can
// make one of its threads die: `node contract-tests/support/cluster-fixture.ts PORT COUNT`.
// GET /who answers the instance's slot (0 for the primary's own), /die?slot=N answers and then
// throws in that thread when it is slot N, /ask has the thread ask the primary (`echo`).
import { createServer } from 'node:http';
import { askPrimary, clusterMember, joinCluster, type Member, runPrimary } from '../../src/cluster.ts';

function instance(slot: number): Member {
  const server = createServer((req, res) => {
    if (req.url === `/die?slot=${slot}`) {
      res.end('dying');
      setImmediate(() => {
        throw new Error(`slot ${slot} dies as asked`);
      });
      return;
    }
    if (req.url === '/ask') {
      askPrimary('echo', slot).then(
        () => res.end(`asked from ${slot}`),
        (err: unknown) => res.end(String(err)),
      );
      return;
    }
    res.end(JSON.stringify({ slot }));
  });
  return {
    ready: Promise.resolve(),
    accept(_service, socket) {
      server.emit('connection', socket);
      socket.resume();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const member = clusterMember();
if (member) joinCluster(instance(member.slot));
else {
  const [port, count] = process.argv.slice(2).map(Number);
  await runPrimary(
    count!,
    [{ service: 'directory', host: '127.0.0.1', port: port! }],
    {
      info: () => undefined,
      error: (fields: { err?: Error }, message: string) => console.error(message, fields.err?.message ?? ''),
    },
    {
      script: new URL(import.meta.url),
      payload: undefined,
      answers: { echo: async () => undefined },
      startLocal: async () => instance(0),
    },
  );
}
