// A usage report of either service, fetched and drawn the one way, and its CSV.
import { createClient as createDirectoryClient } from '../../../generated/directory/client/client/index.ts';
import { getUsage as getDirectoryUsage } from '../../../generated/directory/client/sdk.gen.ts';
import type { UsageReport as DirectoryUsageReport } from '../../../generated/directory/client/types.gen.ts';
import { getUsage } from '../../../generated/model/client/sdk.gen.ts';
import type { UsageReport } from '../../../generated/model/client/types.gen.ts';
import { directoryBase } from './api.ts';
import { messageOf } from './dom.ts';

function csvOf(report: UsageReport): string {
  const head = [
    'start',
    'end',
    'model',
    'requests',
    'input_tokens',
    'output_tokens',
    'audio_seconds',
    'images',
    'steps',
    'cost_eur',
  ];
  const lines = [head.join(',')];
  for (const bucket of report.data) {
    for (const r of bucket.results) {
      lines.push(
        [
          bucket.start,
          bucket.end,
          r.model ?? '',
          r.requests,
          r.input_tokens,
          r.output_tokens,
          r.audio_seconds,
          r.images,
          r.steps,
          r.cost,
        ].join(','),
      );
    }
  }
  const t = report.totals;
  lines.push(
    [
      'total',
      '',
      '',
      t.requests,
      t.input_tokens,
      t.output_tokens,
      t.audio_seconds,
      t.images,
      t.steps,
      t.cost,
    ].join(','),
  );
  return `${lines.join('\n')}\n`;
}

function csvOfDirectory(report: DirectoryUsageReport): string {
  const lines = ['start,end,interface,requests,billable_units,cost_eur'];
  for (const bucket of report.data) {
    for (const r of bucket.results) {
      lines.push(
        [bucket.start, bucket.end, r.interface ?? '', r.requests, r.billable_units, r.cost].join(','),
      );
    }
  }
  lines.push(['total', '', '', report.totals.requests, '', report.totals.cost].join(','));
  return `${lines.join('\n')}\n`;
}

/** One report of either service, as the page draws it: by day and by model or interface. */
interface Drawn {
  from: string;
  to: string;
  totals: { requests: number; cost: string };
  buckets: Array<{ start: string; results: Array<{ name: string; requests: number; cost: string }> }>;
  csv: string;
}

/** A report of either service as drawn: each result named by `name` (its model or interface). */
function drawnOf<R extends { requests: number; cost: string }>(
  report: {
    from: string;
    to: string;
    totals: { requests: number; cost: string };
    data: Array<{ start: string; results: R[] }>;
  },
  name: (result: R) => string | null | undefined,
  csv: string,
): Drawn {
  return {
    from: report.from,
    to: report.to,
    totals: report.totals,
    buckets: report.data.map((b) => ({
      start: b.start,
      results: b.results.map((r) => ({ name: name(r) ?? 'all', requests: r.requests, cost: r.cost })),
    })),
    csv,
  };
}

export async function usageOf(
  service: string,
  from: string,
  to: string,
  projectId: string,
): Promise<{ drawn?: Drawn; error?: string }> {
  const project = projectId ? { project_id: projectId } : {};
  if (service === 'directory') {
    const baseUrl = directoryBase();
    if (!baseUrl) return { error: 'The directory API is not served with this console.' };
    const directory = createDirectoryClient({ baseUrl, credentials: 'include' });
    const { data, error } = await getDirectoryUsage({
      client: directory,
      query: { from, to, group_by: ['interface'], bucket: 'day', ...project },
    }).catch(() => ({ data: undefined, error: undefined }));
    if (!data) return { error: error ? messageOf(error) : `The directory API at ${baseUrl} did not answer.` };
    return { drawn: drawnOf(data, (r) => r.interface, csvOfDirectory(data)) };
  }
  const { data, error } = await getUsage({
    query: { from, to, group_by: ['model'], bucket: 'day', ...project },
  });
  if (!data) return { error: messageOf(error) };
  return { drawn: drawnOf(data, (r) => r.model, csvOf(data)) };
}
