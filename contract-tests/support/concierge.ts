// Helpers of the concierge suites: providers of our own in the directory, a proxy in front of
// the Model API that can hold the agent's call of one stage (so a test acts while a workflow is
// in that stage), and a webhook receiver that verifies every event with the `standardwebhooks`
// library.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../src/platform/db.ts';
import { newId } from '../../src/platform/ids.ts';
import { insertListings, type ListingRecord } from '../../src/directory/store.ts';

export interface Provider {
  name: string;
  email: string;
  rating: number;
  reviews: number;
  /** Kilometres east of the town's centre. */
  east: number;
}

/** Listings of the trade `code` in a town, cloned from a demo listing whose own trade it is, with our names, addresses and ratings. */
export async function addProviders(
  db: Db,
  code: string,
  town: { name: string; lat: number; lon: number; country: string },
  providers: Provider[],
): Promise<string[]> {
  const [template] = await db.query<{ profile: ListingRecord }>(
    `select profile from listings where exists (select 1 from jsonb_array_elements(profile->'activities') a where a->>'code' = $1 and (a->>'primary')::boolean) limit 1`,
    [code],
  );
  if (!template) throw new Error(`no demo listing of ${code} to copy`);
  const records = providers.map((p): ListingRecord => {
    const lon = town.lon + p.east / (111.32 * Math.cos((town.lat * Math.PI) / 180));
    return {
      ...template.profile,
      id: newId('lst'),
      name: p.name,
      legal_name: null,
      email: p.email,
      rating: p.rating,
      review_count: p.reviews,
      claimed: true,
      geo: { lat: town.lat, lon },
      address: {
        ...template.profile.address,
        city: town.name,
        country: town.country as ListingRecord['address']['country'],
        formatted: `Hauptplatz 1, ${town.name}`,
      },
    };
  });
  await db.transaction((tx) => insertListings(tx, records));
  return records.map((r) => r.id);
}

/** A proxy to the Model API that holds `POST /v1/responses` of the stages in `held` until released. */
export class HoldingProxy {
  target = '';
  url = '';
  readonly held = new Set<string>();
  /** Stages whose call arrived and is being held. */
  readonly waiting = new Set<string>();
  readonly calls: string[] = [];
  #releases: (() => void)[] = [];
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      void this.#forward(req).then(
        ({ status, headers, body }) => {
          res.writeHead(status, headers).end(body);
        },
        () => res.writeHead(502).end(),
      );
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async #forward(
    req: IncomingMessage,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let stage = '';
    try {
      stage = (JSON.parse(body.toString()) as { metadata?: { stage?: string } }).metadata?.stage ?? '';
    } catch {
      // not JSON: forwarded as it is
    }
    this.calls.push(stage);
    if (this.held.has(stage)) {
      this.waiting.add(stage);
      await new Promise<void>((resolve) => this.#releases.push(resolve));
      this.waiting.delete(stage);
    }
    const answer = await fetch(`${this.target}${req.url ?? ''}`, {
      method: req.method ?? 'GET',
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(
          ([k]) => !['host', 'content-length', 'connection'].includes(k),
        ) as [string, string][],
      ),
      ...(body.length > 0 ? { body } : {}),
    });
    return {
      status: answer.status,
      headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json' },
      body: Buffer.from(await answer.arrayBuffer()),
    };
  }

  release(): void {
    this.held.clear();
    for (const release of this.#releases.splice(0)) release();
  }

  async stop(): Promise<void> {
    this.release();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

export interface ReceivedEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> & { id: string; status: string } };
}

/** A webhook endpoint's receiver: every request verified with `standardwebhooks`, kept in order. */
export class VerifyingReceiver {
  url = '';
  secret = '';
  readonly events: ReceivedEvent[] = [];
  readonly refused: string[] = [];
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          const event = new Webhook(this.secret).verify(body, {
            'webhook-id': String(req.headers['webhook-id']),
            'webhook-timestamp': String(req.headers['webhook-timestamp']),
            'webhook-signature': String(req.headers['webhook-signature']),
          }) as ReceivedEvent;
          this.events.push(event);
          res.writeHead(204).end();
        } catch (err) {
          this.refused.push(String(err));
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks/concierge`;
  }

  of(workflowId: string): ReceivedEvent[] {
    return this.events.filter((e) => e.data.object.id === workflowId);
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}
