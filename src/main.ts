// `node src/main.ts [model|directory]`: both services by default, or one alone; with WORKERS
// set above 1, as that many processes sharing the ports (src/cluster.ts).
import cluster from 'node:cluster';
import { joinCluster, type Listeners, runPrimary, whyNotWorkers } from './cluster.ts';
import { loadConfig } from './config.ts';
import type { ServiceName } from './platform/app.ts';
import { createLogger } from './platform/logger.ts';
import { PortError, probePorts } from './ports.ts';

/** A port taken or refused: the one line that names the variable to change, no stack trace. */
function stopOnPortError(err: unknown): never {
  if (!(err instanceof PortError)) throw err;
  console.error(err.message);
  process.exit(2);
}

const arg = process.argv[2];
if (arg !== undefined && arg !== 'model' && arg !== 'directory') {
  console.error(`usage: node src/main.ts [model|directory] (got ${JSON.stringify(arg)})`);
  process.exit(2);
}
const which: ServiceName[] = arg ? [arg] : ['model', 'directory'];
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  // a bad setting: its name and what is allowed, no stack trace
  console.error((err as Error).message);
  process.exit(2);
}

const ports = { model: config.modelPort, directory: config.directoryPort };
const listeners: Listeners = which.map((service) => ({ service, host: config.host, port: ports[service] }));
// the directory's inbound SMTP listener (in a cluster, handed to the workers in turn as HTTP's)
if (which.includes('directory') && config.mail.inboundPort !== undefined) {
  listeners.push({ service: 'smtp', host: config.host, port: config.mail.inboundPort });
}
if (config.metricsPort !== undefined) {
  listeners.push({ service: 'metrics', host: config.metricsHost, port: config.metricsPort });
}

const workers = config.workers;
if (workers > 1 && cluster.isPrimary) {
  const why = whyNotWorkers(config);
  if (why) {
    console.error(why);
    process.exit(2);
  }
  await runPrimary(workers, listeners, createLogger(config.logLevel, 'primary', config.logFormat)).catch(
    stopOnPortError,
  );
} else {
  // a taken port is said before the services load (a second or more), which bind them for good
  if (!cluster.isWorker) {
    await probePorts(listeners.map(({ service, host, port }) => ({ listener: service, host, port }))).catch(
      stopOnPortError,
    );
  }
  const { startServices } = await import('./services/server.ts');
  const running = await startServices(config, which, { handedOver: cluster.isWorker }).catch(stopOnPortError);
  joinCluster(running.ready, running.accept);

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        // A second signal forces the exit; in a cluster it is the primary's echo of the
        // terminal's (both reach a worker), and the primary forces the exit itself if needed.
        if (!cluster.isWorker) process.exit(1);
        return;
      }
      stopping = true;
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
