// Which pages may call the directory API with the console's session: MODEL_API_PUBLIC_URL's
// origin, and on a loopback host (`npm start`) a page of that host at any port; never another
// port of a host others reach (it may be someone else's site).
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { isConsoleOrigin } from './cors.ts';

const to = (host: string) =>
  ({ get: (name: string) => (name.toLowerCase() === 'host' ? host : undefined) }) as Request;

describe('isConsoleOrigin', () => {
  it("takes MODEL_API_PUBLIC_URL's origin, whatever host the request came to", () => {
    expect(isConsoleOrigin(to('dir.eurus.eu'), 'https://console.eurus.eu', 'https://console.eurus.eu')).toBe(
      true,
    );
    expect(
      isConsoleOrigin(to('dir.eurus.eu'), 'https://console.eurus.eu:8443', 'https://console.eurus.eu'),
    ).toBe(false);
  });

  it('takes any port of a loopback host the request came to', () => {
    expect(isConsoleOrigin(to('127.0.0.1:8081'), 'http://127.0.0.1:41234', 'http://localhost:8080')).toBe(
      true,
    );
    expect(isConsoleOrigin(to('localhost:8081'), 'http://localhost:8080', 'http://localhost:9999')).toBe(
      true,
    );
    expect(isConsoleOrigin(to('[::1]:8081'), 'http://[::1]:8080', 'http://localhost:9999')).toBe(true);
    expect(isConsoleOrigin(to('127.0.0.1:8081'), 'http://localhost:8080', 'http://localhost:9999')).toBe(
      false,
    );
  });

  it('refuses another port of a host others reach', () => {
    expect(isConsoleOrigin(to('api.eurus.eu'), 'https://api.eurus.eu:9999', 'https://console.eurus.eu')).toBe(
      false,
    );
    expect(isConsoleOrigin(to('10.0.0.5:8081'), 'http://10.0.0.5:8080', 'http://localhost:8080')).toBe(false);
    expect(isConsoleOrigin(to('api.eurus.eu'), 'not a url', 'https://console.eurus.eu')).toBe(false);
  });
});
