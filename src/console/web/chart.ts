// The usage page's SVG chart: stacked bars by day.
import { h } from './dom.ts';

/** The same colours as app.css's `.swatch.cN` (the page's CSP allows no inline style). */
export const COLOURS = ['#0b57d0', '#a4161a', '#0a6b2e', '#7b3fb3', '#8a5a00', '#00758f', '#5f6368'];

/** Stacked bars, one per day, one colour per model; values are numbers already. */
export function barChart(
  title: string,
  days: string[],
  series: Map<string, Map<string, number>>,
  format: (v: number) => string,
): HTMLElement {
  const width = 960;
  const height = 220;
  const pad = 36;
  const totals = days.map((d) => [...series.values()].reduce((sum, byDay) => sum + (byDay.get(d) ?? 0), 0));
  if (!totals.some((t) => t > 0)) {
    return h(
      'figure',
      {},
      h('figcaption', {}, h('h2', {}, title)),
      h('p', { class: 'chart-empty' }, 'No usage in this period.'),
    );
  }
  const max = Math.max(...totals);
  const band = (width - pad * 2) / Math.max(days.length, 1);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `${title}: total ${format(totals.reduce((a, b) => a + b, 0))} over ${days.length} days`,
  );
  const models = [...series.keys()];
  days.forEach((d, i) => {
    let y = height - pad;
    models.forEach((model, m) => {
      const value = series.get(model)?.get(d) ?? 0;
      if (value <= 0) return;
      const barHeight = (value / max) * (height - pad * 2);
      y -= barHeight;
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', String(pad + i * band + band * 0.15));
      rect.setAttribute('y', String(y));
      rect.setAttribute('width', String(Math.max(band * 0.7, 1)));
      rect.setAttribute('height', String(barHeight));
      rect.setAttribute('fill', COLOURS[m % COLOURS.length] ?? '#000');
      rect.setAttribute('data-model', model);
      rect.setAttribute('data-day', d);
      const tip = document.createElementNS(ns, 'title');
      tip.textContent = `${d} ${model}: ${format(value)}`;
      rect.append(tip);
      svg.append(rect);
    });
  });
  const axis = document.createElementNS(ns, 'text');
  axis.setAttribute('x', String(pad));
  axis.setAttribute('y', '20');
  axis.setAttribute('font-size', '13');
  axis.setAttribute('fill', '#1a1a1a');
  axis.textContent = `max ${format(max)} a day`;
  svg.append(axis);
  for (const [i, d] of days.entries()) {
    if (days.length > 10 && i % Math.ceil(days.length / 8) !== 0) continue;
    const label = document.createElementNS(ns, 'text');
    label.setAttribute('x', String(pad + i * band));
    label.setAttribute('y', String(height - 12));
    label.setAttribute('font-size', '12');
    label.setAttribute('fill', '#1a1a1a');
    label.textContent = d.slice(5);
    svg.append(label);
  }
  return h('figure', {}, h('figcaption', {}, h('h2', {}, title)), svg as unknown as HTMLElement);
}
