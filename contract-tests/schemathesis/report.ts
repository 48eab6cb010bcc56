// What of schemathesis's output the CI log shows (see run.ts).

/**
 * The report part of schemathesis's output (warnings, failures, summary: from the first
 * `=== ... ===` banner on), without ANSI escape codes or carriage returns.
 *
 * Schemathesis closes like pytest, `===== 1 warning in 66.09s =====`, but that line counts no
 * test: a CI that reads pytest's closing lines takes it for a pytest run that ran nothing. So the
 * closing banner is printed as `schemathesis: 1 warning in 66.09s` instead; the log keeps it whole.
 */
export function reportOf(output: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '\n');
  const lines = plain.split('\n');
  const start = lines.findIndex((l) => /^={3,} [A-Za-z].* ={3,}$/.test(l.trim()));
  // no banner: schemathesis stopped before testing (a bad option, an unloadable spec): show it all
  return (start >= 0 ? lines.slice(start) : lines)
    .map((line) => {
      const closing = /^={3,} (.* in [0-9.]+m?s) ={3,}$/.exec(line.trim());
      return closing ? `schemathesis: ${closing[1]}` : line;
    })
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
