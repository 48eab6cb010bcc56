// The webhook endpoints page (the directory API's, called with the session across origins).
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  sendTestWebhookEvent,
  updateWebhookEndpoint,
} from '../../../../generated/directory/client/sdk.gen.ts';
import {
  type WebhookEndpoint,
  type WebhookEventType,
} from '../../../../generated/directory/client/types.gen.ts';
import { directoryPage, projectPicker } from '../directory-page.ts';
import {
  actionButton,
  askedButton,
  BASE,
  checked,
  field,
  h,
  makeForm,
  messageOf,
  say,
  show,
  showNewSecret,
  status,
  table,
  when,
} from '../dom.ts';
import { webhookSecretPanel } from '../secret.ts';

const EVENT_TYPES: WebhookEventType[] = [
  'workflow.completed',
  'workflow.failed',
  'workflow.cancelled',
  'reply.received',
  'campaign.completed',
  'endpoint.disabled',
  'test',
];

export const endpointStatus = (e: WebhookEndpoint) =>
  e.status === 'disabled' ? `disabled (${e.disabled_reason ?? 'manual'})` : e.status;

export async function webhooksPage(): Promise<void> {
  const page = await directoryPage('Webhooks');
  if (!page) return;
  const { dir, projectId, headers } = page;
  const query = `?project_id=${encodeURIComponent(projectId)}`;
  const { data: list, error: listError } = await listWebhookEndpoints({
    client: dir,
    headers,
    query: { limit: 100 },
  });
  const endpoints = list?.data ?? [];
  const out = status();
  const pick = projectPicker(page, 'Show endpoints', 'webhooks');

  const url = h('input', {
    type: 'url',
    name: 'url',
    required: true,
    maxlength: '2048',
    placeholder: 'https://hooks.example.eu/eurus',
  });
  const description = h('input', { type: 'text', name: 'description', maxlength: '500' });
  const types = h(
    'fieldset',
    {},
    h('legend', {}, 'Events (none chosen: all of them)'),
    ...EVENT_TYPES.map((t) => h('label', {}, h('input', { type: 'checkbox', name: 'event', value: t }), t)),
  );
  const form = makeForm(
    'Register an endpoint',
    [
      field('Endpoint URL', url, 'https, on a public address; events are POSTed to it, signed.'),
      field('Description', description),
    ],
    [types],
    'Register endpoint',
    out,
    async (form) => {
      const chosen = checked<WebhookEventType>(form, 'event');
      const { data, error } = await createWebhookEndpoint({
        client: dir,
        headers,
        body: {
          url: url.value,
          ...(description.value ? { description: description.value } : {}),
          ...(chosen.length ? { event_types: chosen } : {}),
        },
      });
      if (!data) return say(out, messageOf(error), 'error');
      await webhooksPage();
      showNewSecret(webhookSecretPanel(data.url, data.secret, 'created'));
    },
  );

  const rows = endpoints.map((e) => {
    const grace = h(
      'select',
      { 'aria-label': `Grace period for rotating the secret of ${e.url}` },
      h('option', { value: '86400' }, 'old secret signs 24 hours more'),
      h('option', { value: '3600' }, 'old secret signs 1 hour more'),
      h('option', { value: '0' }, 'old secret stops now'),
    );
    return h(
      'tr',
      { 'data-endpoint-id': e.id },
      h('td', {}, h('a', { href: `${BASE}/webhooks/${e.id}${query}` }, h('code', {}, e.url))),
      h('td', {}, e.description ?? ''),
      h('td', {}, e.event_types.join(', ')),
      h('td', {}, endpointStatus(e)),
      h('td', {}, when(e.created)),
      h(
        'td',
        {},
        actionButton('Send test event', `Send test event to ${e.url}`, 'secondary', async () => {
          const { data, error } = await sendTestWebhookEvent({ client: dir, headers, path: { id: e.id } });
          if (!data) return say(out, messageOf(error), 'error');
          say(out, `Test event ${data.id} queued for ${e.url}.`, 'ok');
        }),
        ' ',
        grace,
        ' ',
        actionButton('Rotate secret', `Rotate secret of ${e.url}`, 'secondary', async () => {
          const { data, error } = await rotateWebhookEndpointSecret({
            client: dir,
            headers,
            path: { id: e.id },
            body: { previous_secret_expires_in: Number(grace.value) },
          });
          if (!data) return say(out, messageOf(error), 'error');
          await webhooksPage();
          document
            .getElementById('secret-slot')
            ?.replaceChildren(webhookSecretPanel(data.url, data.secret, 'rotated'));
        }),
        ' ',
        actionButton(
          e.enabled ? 'Disable' : 'Enable',
          `${e.enabled ? 'Disable' : 'Enable'} ${e.url}`,
          'secondary',
          async () => {
            const { data, error } = await updateWebhookEndpoint({
              client: dir,
              headers,
              path: { id: e.id },
              body: { enabled: !e.enabled },
            });
            if (!data) return say(out, messageOf(error), 'error');
            await webhooksPage();
          },
        ),
        ' ',
        askedButton(
          'Delete',
          `Delete ${e.url}`,
          `Delete the endpoint ${e.url}? It receives nothing more.`,
          out,
          () => deleteWebhookEndpoint({ client: dir, headers, path: { id: e.id } }),
          () => webhooksPage(),
        ),
      ),
    );
  });
  show(
    'Webhooks',
    h(
      'p',
      {},
      'Endpoints of a project receive its Concierge and Sales events, signed per Standard Webhooks. ',
      h('a', { href: 'https://www.standardwebhooks.com/' }, 'How to verify them'),
      '.',
    ),
    pick,
    h('div', { id: 'secret-slot' }),
    form,
    listError ? h('p', { class: 'error' }, messageOf(listError)) : null,
    table(
      { id: 'endpoints' },
      `${endpoints.length} endpoint(s), newest first; secrets are never shown again`,
      ['URL', 'Description', 'Events', 'Status', 'Created', 'Actions'],
      rows,
    ),
  );
}
