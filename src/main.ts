// `node src/main.ts [model|directory]`: both services by default, or one alone.
import { loadConfig } from './config.ts';
import { type ServiceName, startServices } from './server.ts';

const arg = process.argv[2];
if (arg !== undefined && arg !== 'model' && arg !== 'directory') {
  console.error(`usage: node src/main.ts [model|directory] (got ${JSON.stringify(arg)})`);
  process.exit(2);
}
const which: ServiceName[] = arg ? [arg] : ['model', 'directory'];
const running = await startServices(loadConfig(), which);

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
