import { describe, expect, it } from 'vitest';
import { reportOf } from './report.ts';

const OUTPUT = [
  '\x1b[2K⠋ Examples 3/6\r\x1b[2K⠙ Examples 6/6',
  '=================================== SUMMARY ====================================',
  '',
  'Test cases:',
  '  8295 generated, 8295 passed, 12 skipped',
  '',
  '============================= 1 warning in 66.09s ==============================',
  '',
].join('\n');

describe('the schemathesis report in the CI log', () => {
  it('starts at the first banner, without escape codes or progress frames', () => {
    const report = reportOf(OUTPUT);
    expect(report.split('\n')[0]).toMatch(/^=+ SUMMARY =+$/);
    expect(report).not.toMatch(/\x1b|Examples 3\/6/); // eslint-disable-line no-control-regex
    expect(report).toContain('8295 generated, 8295 passed, 12 skipped');
  });

  it('prints no line a pytest reader would take for a run of no test', () => {
    const report = reportOf(OUTPUT);
    expect(report.split('\n').at(-1)).toBe('schemathesis: 1 warning in 66.09s');
    expect(report).not.toMatch(/^=+ .* in [0-9.]+s =+$/m);
    expect(reportOf('===== 3 failed, 1 warning in 2.5s =====')).toBe(
      'schemathesis: 3 failed, 1 warning in 2.5s',
    );
  });

  it('shows everything when schemathesis stopped before its first banner', () => {
    expect(reportOf('Error: unknown option --foo\n')).toBe('Error: unknown option --foo');
  });
});
