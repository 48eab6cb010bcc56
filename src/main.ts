// `node src/main.ts [model|directory]`: both services by default, or one alone; with WORKERS
// set above 1, as that many instances sharing the ports and the directory's search index, this
// thread and worker threads running this script (src/cluster.ts).
import {
  askPrimary,
  clusterMember,
  joinCluster,
  type Listeners,
  runPrimary,
  whyNotWorkers,
} from './cluster.ts';
import { loadConfig } from './config.ts';
import type { IndexHandles } from './directory/memory-index/shared-index.ts';
import { catchUpShared, shareIndex } from './directory/vectors.ts';
import type { ServiceName } from './platform/app.ts';
import { usableDemoCache } from './demo-cache.ts';
import { directoryStartsEmpty, startDemoRows } from './directory/demo-rows.ts';
import { createLogger } from './platform/logger.ts';
import { PortError, probePorts } from './ports.ts';

/** A port taken or refused: the one line that names the variable to change, no stack trace. */
function stopOnPortError(err: unknown): never {
  if (!(err instanceof PortError)) throw err;
  console.error(err.message);
  process.exit(2);
}

/** What a worker thread of the cluster is given. */
interface Payload {
  which: ServiceName[];
  index: IndexHandles | undefined;
}
const member = clusterMember();
const arg = process.argv[2];
if (!member && arg !== undefined && arg !== 'model' && arg !== 'directory') {
  console.error(`usage: node src/main.ts [model|directory] (got ${JSON.stringify(arg)})`);
  process.exit(2);
}
const which: ServiceName[] = member
  ? (member.payload as Payload).which
  : arg
    ? [arg as ServiceName]
    : ['model', 'directory'];
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
if (member) {
  // a worker thread of the cluster: an instance on the primary's search index, fed connections
  const { index } = member.payload as Payload;
  if (index) {
    shareIndex({
      handles: index,
      kernel: config.vectorKernel,
      slot: member.slot,
      ask: (upTo) => askPrimary('index', upTo),
    });
  }
  const { startServices } = await import('./services/server.ts');
  joinCluster(await startServices(config, which, { handedOver: true }));
} else if (workers > 1) {
  const why = whyNotWorkers(config);
  if (why) {
    console.error(why);
    process.exit(2);
  }
  // the directory's search index, once for every instance: this thread owns and loads it
  const index = which.includes('directory')
    ? shareIndex({ kernel: config.vectorKernel, slot: 0 })
    : undefined;
  const { startServices } = await import('./services/server.ts');
  await runPrimary(workers, listeners, createLogger(config.logLevel, 'primary', config.logFormat), {
    script: new URL(import.meta.url),
    payload: { which, index } satisfies Payload,
    answers: { index: (upTo) => catchUpShared(upTo as number) },
    startLocal: () => startServices(config, which, { handedOver: true }),
  }).catch(stopOnPortError);
} else {
  // a taken port is said before the services load (a second or more), which bind them for good
  await probePorts(listeners.map(({ service, host, port }) => ({ listener: service, host, port }))).catch(
    stopOnPortError,
  );
  // a first start's demo listings are made on a second thread from now, while the services load
  const demoRows =
    which.includes('directory') && directoryStartsEmpty(config) && !usableDemoCache(config)
      ? startDemoRows(config.demoListings)
      : undefined;
  const { startServices } = await import('./services/server.ts');
  const running = await startServices(config, which, { demoRows }).catch(stopOnPortError);

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
