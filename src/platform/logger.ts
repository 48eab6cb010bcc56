// JSON log lines for machines (one object a line, pino's format), human lines for a person at a
// terminal. LOG_FORMAT decides; unset, a terminal on stdout gets human lines.
import { pino } from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;
export type LogFormat = 'pretty' | 'json';

/** LOG_FORMAT's value, or by whether stdout is a terminal; anything else is refused. */
export function logFormatOf(value: string | undefined, isTTY: boolean): LogFormat {
  if (value === undefined || value === '') return isTTY ? 'pretty' : 'json';
  if (value === 'pretty' || value === 'json') return value;
  throw new Error(`LOG_FORMAT must be pretty or json, not ${JSON.stringify(value)}`);
}

export function createLogger(level: string, name: string, format: LogFormat = 'json'): Logger {
  const options = { level, name, base: { service: name } };
  if (format === 'json') return pino(options);
  return pino(
    options,
    pretty({
      sync: true,
      colorize: Boolean(process.stdout.isTTY), // colorette, under it, honours NO_COLOR
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,service,name',
      messageFormat: '{name}: {msg}',
    }),
  );
}
