import { describe, expect, it } from 'vitest';
import { checkRemoteUrl } from './remote.ts';

describe('remote MCP server URLs', () => {
  it('refuses http, credentials in the URL, loopback and private addresses unless allowed', async () => {
    await expect(checkRemoteUrl('http://8.8.8.8/mcp', false)).rejects.toMatchObject({
      status: 400,
      code: 'url_not_allowed',
      message: expect.stringContaining('must be https') as unknown as string,
    });
    await expect(checkRemoteUrl('https://user:pw@8.8.8.8/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://127.0.0.1/mcp', false)).rejects.toMatchObject({
      message: expect.stringContaining('a loopback address') as unknown as string,
    });
    await expect(checkRemoteUrl('https://localhost/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://[::1]/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://169.254.169.254/latest', false)).rejects.toMatchObject({
      status: 400,
    });
    await expect(checkRemoteUrl('not a url', false)).rejects.toMatchObject({ status: 400 });
    // the documentation range, which the rules this guard replaced let through
    await expect(checkRemoteUrl('https://203.0.113.10/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://[::ffff:10.0.0.1]/mcp', false)).rejects.toMatchObject({
      status: 400,
    });
    expect((await checkRemoteUrl('https://8.8.8.8/mcp', false)).href).toBe('https://8.8.8.8/mcp');
    expect((await checkRemoteUrl('http://127.0.0.1:9/mcp', true)).href).toBe('http://127.0.0.1:9/mcp');
  });
});
