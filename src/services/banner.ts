// What a person reads on the terminal at a first start: the admin key made for them, once, and
// only what is ready to try; the directory says so in a second block once its listings are in.
import type { Config } from '../config.ts';

/** `url` as a person on this machine types it: localhost for a service on every address. */
function shown(url: string, config: Config): string {
  return config.host === '0.0.0.0' || config.host === '::' ? url.replace('127.0.0.1', 'localhost') : url;
}

/** The first block: the key, the model API to try with it, and what is still loading. */
export function firstRunBanner(
  secret: string,
  config: Config,
  urls: { model?: string | undefined; directory?: string | undefined },
): string {
  const model = urls.model === undefined ? undefined : shown(urls.model, config);
  const lines = [
    '',
    '  This database was empty, so an admin API key was made for you. It is shown this once',
    '  and stored only as a hash: copy it now. It holds every scope of both APIs.',
    '',
    `      ${secret}`,
    '',
    `      export API_KEY=${secret}`,
    '',
  ];
  if (model !== undefined) {
    lines.push(
      `  The model API is ready at ${model}:`,
      '',
      `      curl ${model}/v1/models -H "Authorization: Bearer $API_KEY"`,
      '',
    );
  }
  if (urls.directory !== undefined) {
    const count = config.demoListings.toLocaleString('en');
    lines.push(
      config.demoListings > 0
        ? `  The directory API is loading its ${count} demo listings: a line here says when it is ready.`
        : '  The directory API is starting: a line here says when it is ready.',
      '',
    );
  }
  if (model !== undefined) {
    lines.push(
      `  People can also sign up and get keys of their own in the console: ${config.publicModelUrl}/console/signup`,
      `  (the verification link is mailed to ${config.outboxDir}/ as a .eml file; the service status is at ${model}/status)`,
    );
  }
  lines.push('  Set BOOTSTRAP_ADMIN_KEY to choose the admin key yourself.', '', '');
  return lines.join('\n');
}

/** The second block, once the directory is ready: how much it holds, how soon, a search to try. */
export function directoryReadyBanner(
  config: Config,
  url: string,
  ready: { listings: number; secondsSinceStart: number },
): string {
  const directory = shown(url, config);
  const listings = ready.listings.toLocaleString('en');
  return [
    '',
    `  The directory API is ready at ${directory} (${listings} listings, ${ready.secondsSinceStart.toFixed(1)} s after the start):`,
    '',
    `      curl "${directory}/v1/search?q=restaurant&near=52.52,13.405" -H "Authorization: Bearer $API_KEY"`,
    '',
    '',
  ].join('\n');
}
