import { describe, expect, it } from 'vitest';
import { logFormatOf } from './logger.ts';

describe('logFormatOf', () => {
  it('is pretty on a terminal and json elsewhere when LOG_FORMAT is unset', () => {
    expect(logFormatOf(undefined, true)).toBe('pretty');
    expect(logFormatOf(undefined, false)).toBe('json');
    expect(logFormatOf('', true)).toBe('pretty');
  });
  it('follows LOG_FORMAT either way', () => {
    expect(logFormatOf('json', true)).toBe('json');
    expect(logFormatOf('pretty', false)).toBe('pretty');
  });
  it('refuses anything else, naming the variable', () => {
    expect(() => logFormatOf('text', true)).toThrow(/LOG_FORMAT must be pretty or json/);
  });
});
