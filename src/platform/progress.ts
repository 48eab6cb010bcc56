// Progress of a long start-up step: a real bar for a person at a terminal, a log line at each
// tenth for machines (one line per 1,000 rows told an operator nothing).
import cliProgress from 'cli-progress';
import type { Logger, LogFormat } from './logger.ts';

export type Progress = (done: number, total: number) => void;

export function progressReporter(logger: Logger, format: LogFormat, label: string): Progress {
  if (format === 'pretty' && process.stderr.isTTY) {
    let bar: cliProgress.SingleBar | undefined;
    return (done, total) => {
      if (!bar) {
        bar = new cliProgress.SingleBar(
          {
            format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0);
      }
      bar.update(done);
      if (done >= total) bar.stop();
    };
  }
  let lastTenth = -1;
  return (done, total) => {
    const tenth = Math.floor((done / total) * 10);
    if (tenth > lastTenth) {
      lastTenth = tenth;
      logger.info({ done, total }, label);
    }
  };
}
