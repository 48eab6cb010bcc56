// The usage page: cost and requests by day and model (or interface), as charts, a table and CSV.
import { allProjects } from '../api.ts';
import { barChart, COLOURS } from '../chart.ts';
import { BASE, download, field, h, navigate, numeric, rowForm, say, show, status, table } from '../dom.ts';
import { eurAmount, eurText, eurToNano, nanoToEur } from '../money.ts';
import { usageOf } from '../usage-report.ts';

const day = (d: Date) => d.toISOString().slice(0, 10);

export async function usagePage(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const today = new Date();
  const from = h('input', {
    type: 'date',
    name: 'from',
    required: true,
    value: params.get('from') ?? day(new Date(today.getTime() - 29 * 86_400_000)),
  });
  const to = h('input', { type: 'date', name: 'to', required: true, value: params.get('to') ?? day(today) });
  const chosen = params.get('service') === 'directory' ? 'directory' : 'model';
  const projects = await allProjects();
  const chosenProject = params.get('project_id') ?? '';
  const project = h(
    'select',
    { name: 'project_id' },
    h('option', { value: '', selected: chosenProject === '' }, 'All projects'),
    ...projects.map((p) => h('option', { value: p.id, selected: p.id === chosenProject }, p.name)),
  );
  const service = h(
    'select',
    { name: 'service' },
    h('option', { value: 'model', selected: chosen === 'model' }, 'Model API (by model)'),
    h('option', { value: 'directory', selected: chosen === 'directory' }, 'Directory API (by interface)'),
  );
  const out = status();
  const form = rowForm(
    'Usage period',
    [field('Service', service), field('Project', project), field('From (UTC)', from), field('To (UTC)', to)],
    'Show',
    out,
    () => {
      const projectQuery = project.value ? `&project_id=${encodeURIComponent(project.value)}` : '';
      navigate(`${BASE}/usage?service=${service.value}&from=${from.value}&to=${to.value}${projectQuery}`);
    },
  );
  const { drawn: report, error } = await usageOf(chosen, from.value, to.value, project.value);
  if (!report) {
    show('Usage', form);
    return say(out, error ?? 'No usage report.', 'error');
  }
  const days = report.buckets.map((b) => b.start);
  const cost = new Map<string, Map<string, number>>();
  const requests = new Map<string, Map<string, number>>();
  const byModel = new Map<string, { requests: number; cost: number }>();
  for (const bucket of report.buckets) {
    for (const r of bucket.results) {
      if (!cost.has(r.name)) cost.set(r.name, new Map());
      if (!requests.has(r.name)) requests.set(r.name, new Map());
      cost.get(r.name)?.set(bucket.start, Number(r.cost));
      requests.get(r.name)?.set(bucket.start, r.requests);
      const sum = byModel.get(r.name) ?? { requests: 0, cost: 0 };
      byModel.set(r.name, { requests: sum.requests + r.requests, cost: sum.cost + eurToNano(r.cost) });
    }
  }
  const eur = eurText;
  const what = chosen === 'directory' ? 'interface' : 'model';
  const models = [...cost.keys()];
  const csv = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      click: () => download(`usage-${chosen}-${report.from}-${report.to}.csv`, 'text/csv', report.csv),
    },
    'Download CSV',
  );
  show(
    'Usage',
    form,
    h(
      'div',
      { class: 'totals', id: 'usage-totals' },
      h('div', { id: 'total-cost' }, h('span', {}, 'Cost (EUR)'), eurAmount(report.totals.cost)),
      h('div', { id: 'total-requests' }, h('span', {}, 'Requests'), String(report.totals.requests)),
    ),
    h(
      'div',
      { class: 'legend', 'aria-label': what === 'model' ? 'Models' : 'Interfaces' },
      ...models.map((m, i) => h('span', {}, h('span', { class: `swatch c${i % COLOURS.length}` }), m)),
    ),
    barChart(`Cost by day and ${what} (EUR)`, days, cost, eur),
    barChart(`Requests by day and ${what}`, days, requests, (v) => String(v)),
    table(
      {},
      `By ${what}, ${report.from} to ${report.to} (UTC)`,
      [what === 'model' ? 'Model' : 'Interface', numeric('Requests'), numeric('Cost (EUR)')],
      byModel.size === 0
        ? [h('tr', {}, h('td', { colspan: '3', class: 'hint' }, 'No usage in this period.'))]
        : [...byModel.entries()].map(([m, s]) =>
            h(
              'tr',
              {},
              h('td', {}, m),
              h('td', { class: 'num' }, String(s.requests)),
              h('td', { class: 'num' }, eurAmount(nanoToEur(s.cost))),
            ),
          ),
    ),
    csv,
  );
}
