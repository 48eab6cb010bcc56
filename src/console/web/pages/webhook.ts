// One webhook endpoint's page: its messages, their attempts, re-sending one.
import {
  getWebhookEndpoint,
  listWebhookMessages,
  resendWebhookMessage,
} from '../../../../generated/directory/client/sdk.gen.ts';
import type { WebhookMessage } from '../../../../generated/directory/client/types.gen.ts';
import { directoryPage } from '../directory-page.ts';
import { actionButton, BASE, h, messageOf, picker, say, show, status, table, when } from '../dom.ts';
import { endpointStatus } from './webhooks.ts';

function attemptsTable(message: WebhookMessage): HTMLElement {
  return h(
    'details',
    {},
    h('summary', {}, `${message.attempts} attempt(s)`),
    table(
      {},
      `Attempts of ${message.id}, the last 20`,
      ['#', 'When', 'Outcome', 'HTTP status', 'Duration', 'Answer (first 1 KB) or error'],
      message.attempt_log.map((a) =>
        h(
          'tr',
          {},
          h('td', {}, String(a.attempt)),
          h('td', {}, when(a.at)),
          h('td', {}, a.outcome),
          h('td', {}, a.status_code === null ? '—' : String(a.status_code)),
          h('td', { class: 'num' }, `${a.duration_ms} ms`),
          h('td', {}, h('code', {}, a.error ?? a.response ?? '')),
        ),
      ),
    ),
  );
}

export async function webhookPage(id: string): Promise<void> {
  const page = await directoryPage('Webhook endpoint');
  if (!page) return;
  const { dir, projectId, headers } = page;
  const params = new URLSearchParams(location.search);
  const only = params.get('status');
  const wanted = only === 'pending' || only === 'delivered' || only === 'failed' ? only : undefined;
  const { data: endpoint, error } = await getWebhookEndpoint({ client: dir, headers, path: { id } });
  if (!endpoint) return show('Webhook endpoint', h('p', { class: 'error' }, messageOf(error)));
  const out = status();
  const tbody = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More messages');
  let cursor: string | undefined;
  const load = async () => {
    const { data, error: failed } = await listWebhookMessages({
      client: dir,
      headers,
      path: { id },
      query: { limit: 20, ...(wanted ? { status: wanted } : {}), ...(cursor ? { cursor } : {}) },
    });
    if (!data) return say(out, messageOf(failed), 'error');
    for (const m of data.data) {
      tbody.append(
        h(
          'tr',
          { 'data-message-id': m.id },
          h('td', {}, h('code', {}, m.id)),
          h('td', {}, m.event_type),
          h('td', {}, m.status),
          h('td', {}, when(m.created)),
          h('td', {}, m.status === 'pending' ? when(m.next_attempt_at) : '—'),
          h('td', {}, attemptsTable(m)),
          h(
            'td',
            {},
            actionButton('Re-send', `Re-send ${m.id}`, 'secondary', async () => {
              const { data: resent, error: refused } = await resendWebhookMessage({
                client: dir,
                headers,
                path: { id, message_id: m.id },
              });
              if (!resent) return say(out, messageOf(refused), 'error');
              say(out, `Message ${m.id} is sent again, with the same webhook-id.`, 'ok');
            }),
          ),
        ),
      );
    }
    cursor = data.next_cursor ?? undefined;
    more.hidden = !data.has_more;
  };
  more.addEventListener('click', () => void load());
  const filter = h(
    'select',
    { name: 'status' },
    h('option', { value: '', selected: !wanted }, 'All'),
    ...(['pending', 'delivered', 'failed'] as const).map((st) =>
      h('option', { value: st, selected: wanted === st }, st),
    ),
  );
  const pick = picker('Filter by status', 'Messages', filter, 'Show', () => {
    const st = filter.value ? `&status=${filter.value}` : '';
    return `${BASE}/webhooks/${id}?project_id=${encodeURIComponent(projectId)}${st}`;
  });
  show(
    'Webhook endpoint',
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'URL'),
      h('dd', {}, h('code', {}, endpoint.url)),
      h('dt', {}, 'Status'),
      h('dd', { id: 'endpoint-status' }, endpointStatus(endpoint)),
      h('dt', {}, 'Events'),
      h('dd', {}, endpoint.event_types.join(', ')),
    ),
    h(
      'p',
      {},
      h('a', { href: `${BASE}/webhooks?project_id=${encodeURIComponent(projectId)}` }, 'All endpoints'),
    ),
    pick,
    out,
    table(
      { id: 'messages' },
      'Messages of the last 30 days, newest first',
      ['Message (webhook-id)', 'Event', 'Status', 'Created', 'Next attempt', 'Attempts', 'Actions'],
      tbody,
    ),
    more,
  );
  await load();
}
