// The API keys page: create, rotate and revoke keys, each secret shown once.
import { createKey, listKeys, revokeKey, rotateKey } from '../../../../generated/model/client/sdk.gen.ts';
import type { Key, Scope } from '../../../../generated/model/client/types.gen.ts';
import { allProjects } from '../api.ts';
import {
  actionButton,
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
import { keySecretPanel } from '../secret.ts';

const SCOPES: Record<Scope, { service: 'Model API' | 'Directory API'; label: string }> = {
  chat: { service: 'Model API', label: 'chat (chat, embeddings)' },
  images: { service: 'Model API', label: 'images' },
  voice: { service: 'Model API', label: 'voice (speech, transcriptions)' },
  agents: { service: 'Model API', label: 'agents' },
  admin: { service: 'Model API', label: 'admin (keys, projects, usage)' },
  search: { service: 'Directory API', label: 'search' },
  places: { service: 'Directory API', label: 'places' },
  sales: { service: 'Directory API', label: 'sales' },
  concierge: { service: 'Directory API', label: 'concierge' },
};

export async function keysPage(): Promise<void> {
  const projects = await allProjects();
  const projectName = new Map(projects.map((p) => [p.id, p.name]));
  const { data: list } = await listKeys({ query: { limit: 100 } });
  const keys: Key[] = list?.data ?? [];
  const slot = h('div', { id: 'secret-slot' });
  const out = status();

  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '100' });
  const project = h(
    'select',
    { name: 'project' },
    ...projects.map((p) =>
      h('option', { value: p.id, selected: p.is_default }, p.is_default ? `${p.name} (default)` : p.name),
    ),
  );
  const groups = (['Model API', 'Directory API'] as const).map((service) =>
    h(
      'fieldset',
      {},
      h('legend', {}, `${service} scopes`),
      ...Object.entries(SCOPES)
        .filter(([, s]) => s.service === service)
        .map(([scope, s]) =>
          h('label', {}, h('input', { type: 'checkbox', name: 'scope', value: scope }), s.label),
        ),
    ),
  );
  const form = makeForm(
    'Create a key',
    [field('Key name', name), field('Project', project)],
    groups,
    'Create key',
    out,
    async (form) => {
      const scopes = checked<Scope>(form, 'scope');
      if (scopes.length === 0) return say(out, 'Choose at least one scope.', 'error');
      const { data, error } = await createKey({
        body: { name: name.value, project_id: project.value, scopes },
      });
      if (!data) return say(out, messageOf(error), 'error');
      await keysPage();
      showNewSecret(keySecretPanel(data, 'created'));
    },
  );

  const rows = keys.map((key) => {
    const grace = h(
      'select',
      { 'aria-label': `Grace period for rotating ${key.name}` },
      h('option', { value: '0' }, 'old secret stops now'),
      h('option', { value: '3600' }, 'old secret works 1 hour'),
      h('option', { value: '86400' }, 'old secret works 24 hours'),
    );
    const actions =
      key.status === 'active'
        ? h(
            'td',
            {},
            grace,
            ' ',
            actionButton('Rotate', `Rotate ${key.name}`, 'secondary', async () => {
              const { data, error } = await rotateKey({
                path: { id: key.id },
                body: { grace_period_seconds: Number(grace.value) },
              });
              if (!data) return say(out, messageOf(error), 'error');
              await keysPage();
              document.getElementById('secret-slot')?.replaceChildren(keySecretPanel(data, 'rotated'));
            }),
            ' ',
            actionButton('Revoke', `Revoke ${key.name}`, 'danger', async () => {
              if (!confirm(`Revoke “${key.name}”? Calls with it are refused from now on.`)) return;
              const { data, error } = await revokeKey({ path: { id: key.id } });
              if (!data) return say(out, messageOf(error), 'error');
              await keysPage();
            }),
          )
        : h('td', {}, '');
    return h(
      'tr',
      { 'data-key-id': key.id },
      h('td', {}, key.name),
      h('td', {}, h('code', {}, key.preview)),
      h('td', {}, key.scopes.join(', ')),
      h('td', {}, projectName.get(key.project_id) ?? key.project_id),
      h(
        'td',
        {},
        key.status,
        key.previous_secret_expires_at ? ` (old secret until ${when(key.previous_secret_expires_at)})` : '',
      ),
      h('td', {}, when(key.created)),
      h('td', {}, when(key.last_used_at)),
      actions,
    );
  });
  show(
    'API keys',
    slot,
    form,
    table(
      {},
      `${keys.length} key(s), newest first; secrets are never shown again`,
      ['Name', 'Secret', 'Scopes', 'Project', 'Status', 'Created', 'Last used', 'Actions'],
      rows,
    ),
  );
}
