// The status as JSON (`/status.json`, both services, no key), and the incidents of the public
// status page, posted by the operator: an `admin` key of the operator's account (the account of
// BOOTSTRAP_ADMIN_KEY or of the key printed on the first start, as the accounts store tells).
// Any other account's key is refused, whatever its scopes.
import type { Incident, StatusPage } from '../../generated/model/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { type IsOperator, operatorOnly } from '../platform/operator.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { STATUS_COMPONENTS } from './components.ts';
import { type Incident as StoredIncident, statusSummary } from './status.ts';
import { nowSeconds } from '../platform/clock.ts';

/** A row of the incidents table, as the status page reads it too. */
type IncidentRow = StoredIncident;

const toIncident = (row: IncidentRow): Incident => ({
  id: row.id,
  object: 'incident',
  title: row.title,
  body: row.body,
  impact: row.impact as Incident['impact'],
  components: row.components as Incident['components'],
  created: Number(row.created),
  resolved_at: row.resolved_at === null ? null : Number(row.resolved_at),
});

export function createIncidentsRouter(db: Db, isOperator: IsOperator) {
  const api: OperationRouter = operationRouter();

  const operator = (accountId: string) => operatorOnly(isOperator, accountId, 'post incidents');

  api.on('createIncident', async ({ body, principal }) => {
    await operator(principal().accountId);
    const [row] = await db.query<IncidentRow>(
      `insert into status_incidents (id, title, body, impact, components, created) values ($1, $2, $3, $4, $5, $6)
       returning *`,
      [newId('inc'), body.title, body.body ?? '', body.impact, body.components, nowSeconds()],
    );
    return { status: 201, body: toIncident(row as IncidentRow) };
  });

  api.on('updateIncident', async ({ path, body, principal }) => {
    await operator(principal().accountId);
    const [row] = await db.query<IncidentRow>(
      `update status_incidents set body = coalesce($2, body),
         resolved_at = case when $3::boolean then coalesce(resolved_at, $4) else resolved_at end
       where id = $1 returning *`,
      [path.id, body.body ?? null, body.resolved === true, nowSeconds()],
    );
    if (!row)
      throw new NotFoundError('not_found', `No incident with id '${path.id}' exists.`, { param: 'id' });
    return { status: 200, body: toIncident(row) };
  });

  return api;
}

/** `GET /status.json`, the same on both services. */
export function createStatusRouter(db: Db) {
  const api: OperationRouter = operationRouter();
  api.on('getStatus', async () => ({
    status: 200,
    body: (await statusSummary(db, [...STATUS_COMPONENTS])) as StatusPage,
    headers: { 'Cache-Control': 'no-cache', 'Access-Control-Allow-Origin': '*' },
  }));
  return api;
}
