// The plans and billing page: subscriptions, and the statement of a month.
import {
  cancelSubscription,
  createSubscription,
  getStatement,
  listPlans,
  listSubscriptions,
} from '../../../../generated/model/client/sdk.gen.ts';
import type { Statement } from '../../../../generated/model/client/types.gen.ts';
import {
  actionButton,
  askedButton,
  BASE,
  type Child,
  download,
  h,
  messageOf,
  numeric,
  picker,
  say,
  show,
  status,
  table,
  when,
} from '../dom.ts';
import { eurAmount, eurText } from '../money.ts';

/** The statement as a page of its own, for the download (no script, no outside resource). */
function statementHtml(statement: Statement): string {
  const esc = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const rows = statement.lines
    .map((l) => `<tr><td>${esc(l.description)}</td><td>${l.quantity}</td><td>${esc(l.amount)}</td></tr>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Statement ${esc(statement.month)}</title></head><body>
<h1>Eurus statement ${esc(statement.month)}</h1><p>Account ${esc(statement.account_id)}; amounts in EUR.</p>
<table border="1" cellpadding="4"><thead><tr><th>Item</th><th>Quantity</th><th>Amount (EUR)</th></tr></thead><tbody>${rows}</tbody>
<tfoot><tr><td colspan="2">Subtotal</td><td>${esc(statement.subtotal)}</td></tr>
<tr><td colspan="2">VAT ${esc(statement.vat_rate)} %</td><td>${esc(statement.vat)}</td></tr>
<tr><td colspan="2"><strong>Total</strong></td><td><strong>${esc(statement.total)}</strong></td></tr></tfoot></table></body></html>`;
}

export async function plansPage(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const month = h('input', {
    type: 'month',
    name: 'month',
    required: true,
    value: params.get('month') ?? new Date().toISOString().slice(0, 7),
  });
  const [{ data: plans }, { data: subs }, { data: statement, error }] = await Promise.all([
    listPlans(),
    listSubscriptions({ query: { limit: 100 } }),
    getStatement({ path: { month: month.value } }),
  ]);
  const active = new Map((subs?.data ?? []).filter((s) => s.status === 'active').map((s) => [s.plan, s]));
  const out = status();
  const rows = (plans?.data ?? []).map((plan) => {
    const sub = active.get(plan.id);
    let action: Child = plan.id === 'pay_as_you_go' ? (active.size === 0 ? 'Current' : 'Always on') : null;
    if (plan.id !== 'pay_as_you_go') {
      action = sub
        ? askedButton(
            'Cancel',
            `Cancel ${plan.name}`,
            `Cancel ${plan.name}? It ends now and is billed up to now.`,
            out,
            () => cancelSubscription({ path: { id: sub.id } }),
            () => plansPage(),
          )
        : actionButton('Subscribe', `Subscribe to ${plan.name}`, undefined, async () => {
            const { error: failed } = await createSubscription({
              body: { plan: plan.id as 'search_unlimited' | 'sales' | 'concierge' },
            });
            if (failed) return say(out, messageOf(failed), 'error');
            await plansPage();
          });
    }
    return h(
      'tr',
      { 'data-plan': plan.id },
      h('td', {}, h('strong', {}, plan.name), h('br'), plan.description),
      h('td', { class: 'num' }, `${eurText(Number(plan.monthly_price))} a month`),
      h('td', {}, sub ? `Active since ${when(sub.started_at)}` : ''),
      h('td', {}, action),
    );
  });
  const pick = picker(
    'Statement month',
    'Month (UTC)',
    month,
    'Show statement',
    () => `${BASE}/plans?month=${month.value}`,
  );
  const statementView: Child[] = statement
    ? [
        table(
          { id: 'statement' },
          `Statement for ${statement.month}, in EUR (a month in progress shows the amounts so far)`,
          ['Item', numeric('Quantity'), numeric('Amount')],
          statement.lines.map((l) =>
            h(
              'tr',
              {},
              h('td', {}, l.description),
              h('td', { class: 'num' }, String(l.quantity)),
              h('td', { class: 'num' }, eurAmount(l.amount)),
            ),
          ),
          h(
            'tfoot',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'row', colspan: '2' }, 'Subtotal'),
              h('td', { class: 'num' }, eurAmount(statement.subtotal)),
            ),
            h(
              'tr',
              {},
              h('th', { scope: 'row', colspan: '2' }, `VAT ${statement.vat_rate} %`),
              h('td', { class: 'num' }, eurAmount(statement.vat)),
            ),
            h(
              'tr',
              {},
              h('th', { scope: 'row', colspan: '2' }, 'Total'),
              h('td', { class: 'num', id: 'statement-total' }, eurAmount(statement.total)),
            ),
          ),
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            click: () => download(`statement-${statement.month}.html`, 'text/html', statementHtml(statement)),
          },
          'Download statement (HTML)',
        ),
      ]
    : [h('p', { class: 'error' }, messageOf(error))];
  show(
    'Plans and billing',
    out,
    table(
      { id: 'plans' },
      'Pay as you go unless you subscribe; subscriptions are billed pro rata',
      ['Plan', 'Price', 'Status', 'Action'],
      rows,
    ),
    h('h2', {}, 'Statement'),
    pick,
    ...statementView,
  );
}
