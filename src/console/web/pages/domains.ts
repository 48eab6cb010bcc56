// The sending domains page (the directory API's, called with the session across origins).
import {
  createSendingDomain,
  deleteSendingDomain,
  listSendingDomains,
  verifySendingDomain,
} from '../../../../generated/directory/client/sdk.gen.ts';
import { directoryPage, projectPicker } from '../directory-page.ts';
import {
  actionButton,
  askedButton,
  field,
  h,
  makeForm,
  messageOf,
  say,
  show,
  status,
  table,
  when,
} from '../dom.ts';

export async function domainsPage(): Promise<void> {
  const page = await directoryPage('Sending domains');
  if (!page) return;
  const { dir, headers } = page;
  const { data: list, error: listError } = await listSendingDomains({
    client: dir,
    headers,
    query: { limit: 100 },
  });
  const domains = list?.data ?? [];
  const out = status();
  const pick = projectPicker(page, 'Show domains', 'domains');
  const domain = h('input', { type: 'text', name: 'domain', required: true, maxlength: '253' });
  const fromName = h('input', { type: 'text', name: 'from_name', maxlength: '100' });
  const form = makeForm(
    'Add a sending domain',
    [
      field('Domain', domain, 'The domain campaign mail is sent from, e.g. mail.example.eu.'),
      field('Sender name', fromName),
    ],
    [],
    'Add domain',
    out,
    async () => {
      const { data, error } = await createSendingDomain({
        client: dir,
        headers,
        body: { domain: domain.value, ...(fromName.value ? { from_name: fromName.value } : {}) },
      });
      if (!data) return say(out, messageOf(error), 'error');
      await domainsPage();
      say(
        document.querySelector<HTMLElement>('[role=status]') ?? out,
        `Added ${data.domain}: publish its records below, then verify it.`,
        'ok',
      );
    },
  );
  const sections = domains.map((d) =>
    h(
      'section',
      { class: 'card', 'data-domain-id': d.id, 'aria-labelledby': `title-${d.id}` },
      h('h2', { id: `title-${d.id}` }, `${d.domain}: ${d.status}`),
      h(
        'p',
        { class: 'hint' },
        d.verified_at ? `Verified ${when(d.verified_at)}. ` : '',
        `Last checked ${when(d.last_checked_at)}. Replies arrive at ${d.reply_domain}.`,
      ),
      table(
        {},
        `The DNS records to publish for ${d.domain}`,
        ['Purpose', 'Type', 'Name', 'Value', 'State', 'Found'],
        d.dns_records.map((r) =>
          h(
            'tr',
            { 'data-purpose': r.purpose },
            h('td', {}, r.purpose),
            h('td', {}, r.type),
            h('td', {}, h('code', {}, r.name)),
            h('td', {}, h('code', { class: 'wrap' }, r.value)),
            h('td', {}, r.status),
            h('td', {}, r.found ?? '—'),
          ),
        ),
      ),
      actionButton('Verify', `Verify ${d.domain}`, undefined, async () => {
        const { data, error } = await verifySendingDomain({ client: dir, headers, path: { id: d.id } });
        if (!data) return say(out, messageOf(error), 'error');
        await domainsPage();
      }),
      ' ',
      askedButton(
        'Delete',
        `Delete ${d.domain}`,
        `Delete ${d.domain}? Campaigns can no longer send from it.`,
        out,
        () => deleteSendingDomain({ client: dir, headers, path: { id: d.id } }),
        () => domainsPage(),
      ),
    ),
  );
  show(
    'Sending domains',
    h(
      'p',
      {},
      'Campaign mail is sent from your own domains, signed with DKIM; publish each domain’s records at your DNS provider, then verify it.',
    ),
    pick,
    form,
    listError ? h('p', { class: 'error' }, messageOf(listError)) : null,
    h('p', { class: 'hint', id: 'domain-count' }, `${domains.length} domain(s)`),
    ...sections,
  );
}
