// Slowloris against one instance: `npm run bench:slowloris -- [--connections 600] [--seconds 20]`.
// Starts the model API alone (PGlite in memory), opens N connections from 127.0.0.2 that send a
// request line and then one header byte a second, reopening any the server closes, and meanwhile
// measures a normal client on 127.0.0.1 (a fresh connection per GET /v1/models every 50 ms):
// latency p50/p99/max and failures. Loopback only, bounded in count and time.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { freePort, waitFor } from './lib.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '600' },
    seconds: { type: 'string', default: '20' },
    port: { type: 'string' },
    attacker: { type: 'boolean', default: false },
  },
});
const CONNECTIONS = Math.min(Number(values.connections), 5000);
const SECONDS = Math.min(Number(values.seconds), 120);
const PORT = values.port ? Number(values.port) : await freePort();
const KEY = 'sk_bench_slowloris_0123456789abcdefghij';

if (values.attacker) runAttacker();
else await runBench();

/** The attack, in a process of its own so that its work does not slow the normal client's. */
function runAttacker(): void {
  let opened = 0;
  let closedByServer = 0;
  const attack = (): void => {
    const socket = connect({ host: '127.0.0.1', port: PORT, localAddress: '127.0.0.2' });
    opened++;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      timer = setInterval(() => socket.write('a'), 1000);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      closedByServer++;
      setTimeout(attack, 1000); // a real attacker comes back
    });
  };
  for (let i = 0; i < CONNECTIONS; i++) attack();
  process.on('SIGTERM', () => {
    process.stdout.write(JSON.stringify({ opened, closedByServer }));
    process.exit(0);
  });
}

async function runBench(): Promise<void> {
  const server = spawn(process.execPath, ['src/main.ts', 'model'], {
    env: {
      ...process.env,
      MODEL_API_PORT: String(PORT),
      HOST: '127.0.0.1',
      DATA_DIR: 'memory://',
      BOOTSTRAP_ADMIN_KEY: KEY,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    },
    stdio: 'inherit',
  });
  const stopServer = () => server.kill('SIGKILL');
  process.on('exit', stopServer);

  await waitFor(`http://127.0.0.1:${PORT}/healthz`, server, { seconds: 30 });

  const attacker = spawn(
    process.execPath,
    ['bench/slowloris.ts', '--attacker', '--connections', String(CONNECTIONS), '--port', String(PORT)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let attackReport = '';
  attacker.stdout.on('data', (chunk: Buffer) => (attackReport += chunk.toString()));
  await new Promise((r) => setTimeout(r, 3000)); // let the attack settle

  const latencies: number[] = [];
  let failures = 0;
  const deadline = Date.now() + SECONDS * 1000;
  while (Date.now() < deadline) {
    const started = performance.now();
    try {
      const res = await fetch(`http://127.0.0.1:${PORT}/v1/models`, {
        headers: { authorization: `Bearer ${KEY}`, connection: 'close' },
        signal: AbortSignal.timeout(5000),
      });
      await res.arrayBuffer();
      if (res.ok) latencies.push(performance.now() - started);
      else failures++;
    } catch {
      failures++;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const attackEnded = new Promise((r) => attacker.once('exit', r));
  attacker.kill('SIGTERM');
  await attackEnded;
  const { opened, closedByServer } = JSON.parse(attackReport || '{}') as {
    opened?: number;
    closedByServer?: number;
  };

  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const result = {
    attack_connections: CONNECTIONS,
    seconds: SECONDS,
    attacker_connections_opened: opened,
    attacker_connections_closed_by_server: closedByServer,
    normal_requests_ok: latencies.length,
    normal_requests_failed: failures,
    normal_p50_ms: Number(at(0.5).toFixed(2)),
    normal_p99_ms: Number(at(0.99).toFixed(2)),
    normal_max_ms: Number((latencies.at(-1) ?? NaN).toFixed(2)),
  };
  console.log(JSON.stringify(result, null, 2));
  stopServer();
  process.exit(0);
}
