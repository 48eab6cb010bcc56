// The public status page for people: `/status` (HTML, no script, no login), on both services.
// Its JSON, `/status.json`, is an operation of both specs (routes.ts).
import { type Request, type Response, Router } from 'express';
import type { Db } from '../platform/db.ts';
import { STATUS_COMPONENTS } from './components.ts';
import { type ComponentStatus, type StatusSummary, statusSummary } from './status.ts';

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'";

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const SERVICE_NAME = { model: 'Model API', directory: 'Directory API' } as const;

const STATUS_TEXT = { operational: 'Operational', down: 'Down', unknown: 'No data yet' } as const;

function bars(component: ComponentStatus): string {
  const width = 4;
  const gap = 2;
  const rects = component.days
    .map((day, i) => {
      const fill =
        day.uptime === null
          ? '#c8c8c8'
          : day.uptime >= component.sla
            ? '#0a6b2e'
            : day.uptime >= 95
              ? '#8a5a00'
              : '#a4161a';
      const label =
        day.uptime === null
          ? `${day.date}: no data`
          : `${day.date}: ${day.uptime}% up (${day.failures} failed of ${day.probes} probes${
              day.missing > 0 ? `; ${day.missing} half-minutes with no probe, counted as not up` : ''
            })`;
      return `<rect x="${i * (width + gap)}" y="0" width="${width}" height="28" fill="${fill}" data-date="${day.date}"><title>${escape(label)}</title></rect>`;
    })
    .join('');
  const total = component.days.length * (width + gap);
  return `<svg class="bars" viewBox="0 0 ${total} 28" preserveAspectRatio="none" role="img" aria-label="Uptime by day over 90 days for ${escape(component.name)}">${rects}</svg>`;
}

const pct = (v: number | null) => (v === null ? '—' : `${v.toFixed(3)} %`);

/** How long a history is, as a person says it: 14 minutes, 5 hours, 3 days. */
function length(seconds: number): string {
  const [n, unit] =
    seconds < 7200
      ? [Math.max(1, Math.round(seconds / 60)), 'minute']
      : seconds < 172_800
        ? [Math.round(seconds / 3600), 'hour']
        : [Math.round(seconds / 86_400), 'day'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** The uptime over the history there is: 30 and 90 days, or since the first probe when shorter. */
function uptimeText(c: ComponentStatus, now: number): string {
  const over = (days: number, value: number | null) => `${pct(value)} over ${days} days`;
  if (c.since === null) return 'Uptime: no probes yet';
  const held = now - c.since;
  if (held >= 90 * 86_400) return `Uptime ${over(30, c.uptime_30d)}, ${over(90, c.uptime_90d)}`;
  const since = new Date(c.since * 1000).toISOString().slice(0, 16).replace('T', ' ');
  const whole = held >= 30 * 86_400 ? `${over(30, c.uptime_30d)}, ` : '';
  return `Uptime ${whole}${pct(c.uptime_90d)} since ${since} UTC (${length(held)} of history)`;
}

export function renderStatus(summary: StatusSummary): string {
  const overall =
    summary.status === 'operational'
      ? 'All systems operational'
      : summary.status === 'degraded'
        ? 'Some systems are down'
        : 'Waiting for the first probes';
  const components = summary.components
    .map(
      (c) => `<section class="component" aria-labelledby="c-${c.id}">
  <h2 id="c-${c.id}">${escape(c.name)}${c.service ? ` <span class="service">${SERVICE_NAME[c.service]}</span>` : ''} <span class="state ${c.status}">${STATUS_TEXT[c.status]}</span></h2>
  ${bars(c)}
  <p class="axis"><span>90 days ago</span><span>today</span></p>
  <p class="sla">SLA ${c.sla} %. ${uptimeText(c, summary.updated)}${
    c.meets_sla_30d === null ? '' : c.meets_sla_30d ? ' (SLA met)' : ' (SLA missed)'
  }.</p>
  <p class="probe">Probed every 30 s${c.latency_ms === null ? '' : `, last answer in ${c.latency_ms} ms`}: ${escape(c.probe)}</p>${
    c.detail === null ? '' : `\n  <p class="detail">Last probe failed: ${escape(c.detail)}</p>`
  }
</section>`,
    )
    .join('\n');
  const incidents = summary.incidents.length
    ? summary.incidents
        .map(
          (i) =>
            `<li><strong>${escape(i.title)}</strong> (${escape(i.impact)}, ${new Date(i.created * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC${
              i.resolved_at ? ', resolved' : ''
            })<br>${escape(i.body)}</li>`,
        )
        .join('')
    : '<li>No incidents in the last 90 days.</li>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Eurus status</title>
<link rel="stylesheet" href="/status.css">
</head>
<body>
<main>
<h1>Eurus status</h1>
<p class="overall ${summary.status}" role="status">${overall}</p>
${components}
<h2>Incidents</h2>
<ul class="incidents">${incidents}</ul>
<p class="foot">Updated ${new Date(summary.updated * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC. The same as JSON: <a href="/status.json">/status.json</a>.</p>
</main>
</body>
</html>
`;
}

const CSS = `body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#fff;line-height:1.45}
main{max-width:760px;margin:0 auto;padding:24px}
h1{font-size:1.6rem;margin:0 0 12px}
h2{font-size:1.1rem;margin:24px 0 8px;display:flex;align-items:baseline;gap:12px}
.overall{font-size:1.2rem;font-weight:700;padding:12px 16px;border-radius:8px;border:1px solid #c8c8c8}
.overall.operational{background:#e6f4ea;color:#0a5224}
.overall.degraded{background:#fce8e6;color:#8c1116}
.overall.unknown{background:#f4f5f7}
.state{font-weight:600;font-size:1rem;margin-left:auto}
.service{font-weight:400;font-size:.9rem;color:#4a4a4a}
.probe{color:#4a4a4a;font-size:.9rem;margin:4px 0}
.detail{color:#8c1116;font-size:.9rem;margin:4px 0}
.state.operational{color:#0a5224}.state.down{color:#8c1116}.state.unknown{color:#4a4a4a}
.bars{width:100%;height:28px}
.axis{display:flex;justify-content:space-between;color:#4a4a4a;font-size:.85rem;margin:2px 0 8px}
.incidents{padding-left:20px}
.foot{color:#4a4a4a;font-size:.9rem;margin-top:32px}
a{color:#0b57d0}
`;

export function createStatusPages(db: Db): Router {
  const router = Router();
  const summary = () => statusSummary(db, [...STATUS_COMPONENTS]);
  router.get('/status', async (_req: Request, res: Response) => {
    res
      .set({
        'Content-Security-Policy': CSP,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache',
      })
      .type('text/html; charset=utf-8')
      .send(renderStatus(await summary()));
  });
  router.get('/status.css', (_req: Request, res: Response) => {
    res.set('Cache-Control', 'no-cache').type('text/css').send(CSS);
  });
  return router;
}
