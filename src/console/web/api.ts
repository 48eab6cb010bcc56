// The two APIs as the console calls them: the model API on this origin and the directory API
// across origins, both with the session (its cookie, and its CSRF token on every change).
import {
  type Client as DirectoryClient,
  createClient as createDirectoryClient,
} from '../../../generated/directory/client/client/index.ts';
import { client } from '../../../generated/model/client/client.gen.ts';
import { listProjects } from '../../../generated/model/client/sdk.gen.ts';
import type { Project, Session } from '../../../generated/model/client/types.gen.ts';

let session: Session | undefined;

/** The signed-in session, if there is one. */
export const currentSession = (): Session | undefined => session;

/** Keeps the session signed in (or, undefined, signed out). */
export function setSession(value: Session | undefined): void {
  session = value;
}

let reads = new AbortController();

/** A new page is asked for: the reads still under way for the one before are cut short. */
export function newNavigation(): void {
  reads.abort();
  reads = new AbortController();
}

/** Changes carry the session's CSRF token; reads end when the reader moves to another page. */
function sign(request: Request): Request {
  if (request.method === 'GET') return new Request(request, { signal: reads.signal });
  if (session) request.headers.set('X-CSRF-Token', session.csrf_token);
  return request;
}

client.setConfig({ baseUrl: location.origin, credentials: 'same-origin' });
client.interceptors.request.use(sign);

/** The directory API's address for this page (see src/console/pages.ts), if it has one. */
export function directoryBase(): string | undefined {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="eurus-directory-api"]')?.content;
  if (!meta) return undefined;
  return meta.startsWith(':') ? `${location.protocol}//${location.hostname}${meta}` : meta;
}

let directoryClient: DirectoryClient | undefined;

/** The directory API's client with the session (its cookie, and the CSRF token on changes). */
export function directory(): DirectoryClient | undefined {
  const baseUrl = directoryBase();
  if (!baseUrl) return undefined;
  if (!directoryClient) {
    directoryClient = createDirectoryClient({ baseUrl, credentials: 'include' });
    directoryClient.interceptors.request.use(sign);
  }
  return directoryClient;
}

export async function allProjects(): Promise<Project[]> {
  const out: Project[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await listProjects({ query: { limit: 100, ...(cursor ? { cursor } : {}) } });
    if (!data) break;
    out.push(...data.data);
    if (!data.has_more || !data.next_cursor) break;
    cursor = data.next_cursor;
  }
  return out;
}
