// GET /v1/usage on both services (scope `admin`).
import type { Request } from 'express';
import type {
  GetUsageResponses as DirectoryUsageResponses,
  UsageResult as DirectoryResult,
} from '../../generated/directory/client/types.gen.ts';
import type {
  GetUsageResponses as ModelUsageResponses,
  UsageResult as ModelResult,
} from '../../generated/model/client/types.gen.ts';
import type { Queryable } from '../platform/db.ts';
import { NotFoundError } from '../platform/errors.ts';
import { type DirectoryOperations, operationRouter, type OperationRouter } from '../platform/route.ts';
import { formatEur } from '../platform/metering.ts';
import { type ReportQuery, type ReportShape, type Sums, usageReport } from './report.ts';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function groupByOf(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map(String);
  if (typeof raw === 'string') return raw.split(',').filter(Boolean);
  return [];
}

function queryOf(req: Request, filters: string[]): ReportQuery {
  return {
    from: String(req.query.from),
    to: String(req.query.to),
    bucket: req.query.bucket === 'month' ? 'month' : 'day',
    groupBy: groupByOf(req.query.group_by),
    filters: Object.fromEntries(filters.map((f) => [f, str(req.query[f])])),
  };
}

export const MODEL_USAGE: ReportShape<ModelResult> = {
  service: 'model',
  dimensions: { model: 'model', project_id: 'project_id', key_id: 'key_id' },
  result: (dims, sums) => ({
    model: dims.model as ModelResult['model'],
    project_id: dims.project_id || null,
    key_id: dims.key_id || null,
    requests: sums.requests,
    input_tokens: sums.input_tokens,
    output_tokens: sums.output_tokens,
    audio_seconds: sums.audio_seconds,
    images: sums.images,
    steps: sums.steps,
    cost: formatEur(sums.cost_nano),
  }),
};

export const DIRECTORY_USAGE: ReportShape<DirectoryResult> = {
  service: 'directory',
  dimensions: { interface: 'model', project_id: 'project_id', key_id: 'key_id' },
  result: (dims, sums) => ({
    interface: dims.interface as DirectoryResult['interface'],
    project_id: dims.project_id || null,
    key_id: dims.key_id || null,
    requests: sums.requests,
    billable_units: sums.units,
    cost: formatEur(sums.cost_nano),
  }),
};

/** The report's envelope; `group_by` holds the names the validator let through for this service. */
function envelope<G extends string, T>(query: ReportQuery, totals: T) {
  return {
    object: 'usage_report' as const,
    from: query.from,
    to: query.to,
    bucket: query.bucket,
    group_by: query.groupBy as G[],
    currency: 'EUR' as const,
    totals,
  };
}

type ModelGroupBy = ModelUsageResponses[200]['group_by'][number];
type DirectoryGroupBy = DirectoryUsageResponses[200]['group_by'][number];

/**
 * Whether the account owns a project or key a filter names: a filter on another account's
 * resource is a 404, as the resource's own operations answer, not an empty report.
 */
export interface UsageOwnership {
  project(accountId: string, id: string): Promise<unknown>;
  key(accountId: string, id: string): Promise<unknown>;
}

async function checkFilters(owns: UsageOwnership, accountId: string, query: ReportQuery): Promise<void> {
  const { project_id: projectId, key_id: keyId } = query.filters;
  const param = (name: string) => (err: unknown) => {
    if (err instanceof NotFoundError) throw new NotFoundError('not_found', err.message, { param: name });
    throw err;
  };
  if (projectId !== undefined) await owns.project(accountId, projectId).catch(param('project_id'));
  if (keyId !== undefined) await owns.key(accountId, keyId).catch(param('key_id'));
}

export function createModelUsageRouter(db: Queryable, owns: UsageOwnership) {
  const api: OperationRouter = operationRouter();
  api.on('getUsage', async ({ req, principal }) => {
    const query = queryOf(req, ['model', 'project_id', 'key_id']);
    await checkFilters(owns, principal().accountId, query);
    const { totals, data } = await usageReport(db, principal().accountId, MODEL_USAGE, query);
    return {
      status: 200,
      body: { ...envelope<ModelGroupBy, ReturnType<typeof modelTotals>>(query, modelTotals(totals)), data },
    };
  });
  return api;
}

export function createDirectoryUsageRouter(db: Queryable, owns: UsageOwnership) {
  const api: OperationRouter<never, DirectoryOperations> = operationRouter<DirectoryOperations>();
  api.on('getUsage', async ({ req, principal }) => {
    const query = queryOf(req, ['interface', 'project_id', 'key_id']);
    await checkFilters(owns, principal().accountId, query);
    const { totals, data } = await usageReport(db, principal().accountId, DIRECTORY_USAGE, query);
    return {
      status: 200,
      body: {
        ...envelope<DirectoryGroupBy, { requests: number; cost: string }>(query, {
          requests: totals.requests,
          cost: formatEur(totals.cost_nano),
        }),
        data,
      },
    };
  });
  return api;
}

function modelTotals(t: Sums) {
  return {
    requests: t.requests,
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    audio_seconds: t.audio_seconds,
    images: t.images,
    steps: t.steps,
    cost: formatEur(t.cost_nano),
  };
}
