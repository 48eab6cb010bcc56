import { describe, expect, it } from 'vitest';
import { checkRemoteUrl, isPrivateAddress } from './remote.ts';

describe('remote MCP server URLs', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false],
    ['2a00:1450:4001::200e', false],
  ])('%s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('refuses http, credentials in the URL, loopback and private addresses unless allowed', async () => {
    await expect(checkRemoteUrl('http://8.8.8.8/mcp', false)).rejects.toMatchObject({
      status: 400,
      code: 'url_not_allowed',
      message: expect.stringContaining('only https') as unknown as string,
    });
    await expect(checkRemoteUrl('https://user:pw@8.8.8.8/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://127.0.0.1/mcp', false)).rejects.toMatchObject({
      message: expect.stringContaining('private, loopback or link-local') as unknown as string,
    });
    await expect(checkRemoteUrl('https://localhost/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://[::1]/mcp', false)).rejects.toMatchObject({ status: 400 });
    await expect(checkRemoteUrl('https://169.254.169.254/latest', false)).rejects.toMatchObject({
      status: 400,
    });
    await expect(checkRemoteUrl('not a url', false)).rejects.toMatchObject({ status: 400 });
    expect((await checkRemoteUrl('https://8.8.8.8/mcp', false)).href).toBe('https://8.8.8.8/mcp');
    expect((await checkRemoteUrl('http://127.0.0.1:9/mcp', true)).href).toBe('http://127.0.0.1:9/mcp');
  });
});
