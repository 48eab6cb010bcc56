// The console in the browser: plain TypeScript on our own generated SDK (generated/model/client),
// bundled by esbuild into generated/console/app.js (`npm run generate`). It calls the model API
// on its own origin with the session cookie (HttpOnly: this script never sees it) and sends the
// session's CSRF token on every change. Every text is set with textContent, never as HTML.
import {
  type Client as DirectoryClient,
  createClient as createDirectoryClient,
} from '../../../generated/directory/client/client/index.ts';
import {
  createSendingDomain,
  createWebhookEndpoint,
  deleteSendingDomain,
  deleteWebhookEndpoint,
  getUsage as getDirectoryUsage,
  getWebhookEndpoint,
  listSendingDomains,
  listWebhookEndpoints,
  listWebhookMessages,
  resendWebhookMessage,
  rotateWebhookEndpointSecret,
  sendTestWebhookEvent,
  updateWebhookEndpoint,
  verifySendingDomain,
} from '../../../generated/directory/client/sdk.gen.ts';
import type {
  UsageReport as DirectoryUsageReport,
  WebhookEndpoint,
  WebhookEventType,
  WebhookMessage,
} from '../../../generated/directory/client/types.gen.ts';
import { client } from '../../../generated/model/client/client.gen.ts';
import { accountPage } from './account.ts';
import {
  cancelSubscription,
  confirmPasswordReset,
  createKey,
  createPasswordReset,
  createProject,
  createSession,
  createSignUp,
  createSubscription,
  deleteSession,
  getSession,
  getStatement,
  getUsage,
  listKeys,
  listPlans,
  listProjects,
  listSubscriptions,
  revokeKey,
  rotateKey,
  verifyEmail,
} from '../../../generated/model/client/sdk.gen.ts';
import type {
  ErrorResponse,
  Key,
  KeyWithSecret,
  Project,
  Scope,
  Session,
  Statement,
  UsageReport,
} from '../../../generated/model/client/types.gen.ts';

const BASE = '/console';
let session: Session | undefined;

client.setConfig({ baseUrl: location.origin, credentials: 'same-origin' });
client.interceptors.request.use((request) => {
  if (session && request.method !== 'GET') request.headers.set('X-CSRF-Token', session.csrf_token);
  return request;
});

// ---------------------------------------------------------------------------------------------
// DOM helpers

type Child = Node | string | false | null | undefined;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((event: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name, value);
    else if (value === true) el.setAttribute(name, '');
    else if (value !== false) el.setAttribute(name, value);
  }
  for (const child of children)
    if (child !== false && child !== null && child !== undefined) el.append(child);
  return el;
}

const main = () => document.getElementById('main') as HTMLElement;

function show(title: string, ...children: Child[]): void {
  document.title = `${title} · Eurus console`;
  const root = main();
  root.replaceChildren(h('h1', {}, title), ...children.filter((c): c is Node | string => !!c));
  for (const link of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
    if (link.pathname === location.pathname) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function messageOf(error: unknown): string {
  const envelope = error as ErrorResponse | undefined;
  return envelope?.error?.message ?? 'Something went wrong; try again.';
}

/** A live region for a form's outcome, announced to screen readers. */
function status(): HTMLParagraphElement {
  return h('p', { role: 'status', 'aria-live': 'polite' });
}

function say(el: HTMLElement, text: string, kind: 'error' | 'ok'): void {
  el.className = kind;
  el.textContent = text;
}

function field(label: string, input: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLElement {
  const id = input.id || `f-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : undefined;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', {}, h('label', { for: id }, label), hintEl, input);
}

function navigate(path: string): void {
  history.pushState({}, '', path);
  void route();
}

const when = (unix: number | null | undefined) =>
  unix ? new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—';

/** A form whose submit runs `run` instead of leaving the page. */
function formOf(attrs: Record<string, string>, children: Child[], run: () => unknown): HTMLFormElement {
  return h(
    'form',
    {
      ...attrs,
      submit: (event: Event) => {
        event.preventDefault();
        void run();
      },
    },
    ...children,
  );
}

/**
 * A card form of one row: its fields and its button, then `out` (when given) for the outcome; on
 * submit, `run`, the page not left.
 */
function rowForm(
  aria: string,
  fields: HTMLElement[],
  button: string,
  out: HTMLElement | undefined,
  run: () => unknown,
): HTMLFormElement {
  return formOf(
    { class: 'card', 'aria-label': aria },
    [h('div', { class: 'row' }, ...fields, h('button', { type: 'submit' }, button)), out],
    run,
  );
}

/** A small form choosing what a page shows: one field and its button; on submit, the page `to()`. */
function picker(
  aria: string,
  label: string,
  input: HTMLInputElement | HTMLSelectElement,
  button: string,
  to: () => string,
): HTMLFormElement {
  return rowForm(aria, [field(label, input)], button, undefined, () => navigate(to()));
}

/**
 * A narrow card form of the signed-out pages: its fields, one under another, its button and `out`
 * for the outcome; on submit, `run`, the page not left.
 */
function narrowForm(
  aria: string,
  fields: HTMLElement[],
  button: string,
  out: HTMLElement,
  run: () => unknown,
): HTMLFormElement {
  return formOf(
    { class: 'card narrow', 'aria-label': aria },
    [...fields, h('button', { type: 'submit' }, button), out],
    run,
  );
}

/**
 * A card form making something: its heading, one row of fields, more (fieldsets), its button and
 * `out` for the outcome; `submit` runs on submit, the page not left.
 */
function makeForm(
  title: string,
  fields: HTMLElement[],
  more: Child[],
  button: string,
  out: HTMLElement,
  submit: (form: HTMLFormElement) => Promise<unknown>,
): HTMLFormElement {
  const form = formOf(
    { class: 'card', 'aria-label': title },
    [
      h('h2', {}, title),
      h('div', { class: 'row' }, ...fields),
      ...more,
      h('button', { type: 'submit' }, button),
      out,
    ],
    () => submit(form),
  );
  return form;
}

/** A button acting on one item of a table: its label, the label read to screen readers, its look. */
function actionButton(
  label: string,
  aria: string,
  kind: 'secondary' | 'danger' | undefined,
  run: () => Promise<unknown>,
): HTMLButtonElement {
  return h(
    'button',
    { type: 'button', ...(kind ? { class: kind } : {}), 'aria-label': aria, click: run },
    label,
  );
}

/**
 * A danger button that asks first: once `question` is confirmed, `call` runs; its error is said in
 * `out`, else `then` follows (the page drawn again).
 */
function askedButton(
  label: string,
  aria: string,
  question: string,
  out: HTMLElement,
  call: () => Promise<{ error?: unknown }>,
  then: () => Promise<unknown>,
): HTMLButtonElement {
  return actionButton(label, aria, 'danger', async () => {
    if (!confirm(question)) return;
    const { error } = await call();
    if (error) return say(out, messageOf(error), 'error');
    await then();
  });
}

/** The values of a form's checked boxes named `name`. */
const checked = <T extends string>(form: HTMLFormElement, name: string): T[] =>
  [...form.querySelectorAll<HTMLInputElement>(`input[name=${name}]:checked`)].map((i) => i.value as T);

/** Shows a new secret's panel in the page's slot for it, scrolled to. */
function showNewSecret(panel: HTMLElement): void {
  document.getElementById('secret-slot')?.replaceChildren(panel);
  document.getElementById('new-secret')?.scrollIntoView();
}

/** Saves `text` as the file `name`, as a download of the browser. */
function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

/** A column heading holding numbers (right-aligned). */
const numeric = (text: string) => h('th', { scope: 'col', class: 'num' }, text);

/**
 * A table: its caption, one row of column headings (a string is a plain one), its body (rows, or
 * a tbody filled later) and what follows the body (a tfoot).
 */
function table(
  attrs: Record<string, string>,
  caption: string,
  headings: (string | HTMLTableCellElement)[],
  body: HTMLTableSectionElement | Node[],
  ...after: Child[]
): HTMLTableElement {
  return h(
    'table',
    attrs,
    h('caption', { class: 'hint' }, caption),
    h(
      'thead',
      {},
      h('tr', {}, ...headings.map((t) => (typeof t === 'string' ? h('th', { scope: 'col' }, t) : t))),
    ),
    Array.isArray(body) ? h('tbody', {}, ...body) : body,
    ...after,
  );
}

// ---------------------------------------------------------------------------------------------
// Signed-out pages

function loginPage(): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const out = status();
  const form = narrowForm(
    'Log in',
    [field('Email', email), field('Password', password)],
    'Log in',
    out,
    async () => {
      const { data, error } = await createSession({ body: { email: email.value, password: password.value } });
      if (!data) return say(out, messageOf(error), 'error');
      session = data;
      navigate(`${BASE}/keys`);
    },
  );
  show(
    'Log in',
    form,
    h(
      'p',
      {},
      'No account yet? ',
      h('a', { href: `${BASE}/signup` }, 'Sign up'),
      ' · ',
      h('a', { href: `${BASE}/reset` }, 'Forgot your password?'),
    ),
  );
}

function signUpPage(): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true });
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: '10',
  });
  const out = status();
  const form = narrowForm(
    'Sign up',
    [
      field('Email', email),
      field(
        'Password',
        password,
        'At least 10 characters and hard to guess: a few unrelated words work well.',
      ),
    ],
    'Create account',
    out,
    async () => {
      const { data, error } = await createSignUp({ body: { email: email.value, password: password.value } });
      if (!data) return say(out, messageOf(error), 'error');
      form.replaceChildren(
        h(
          'p',
          { class: 'ok', role: 'status' },
          `Check your mail: a verification link is on its way to ${data.email}.`,
        ),
        h(
          'p',
          { class: 'hint' },
          'On a local install the mail is a .eml file in the outbox folder (DATA_DIR/outbox).',
        ),
      );
    },
  );
  show(
    'Sign up',
    h('p', {}, 'One account gives API keys for the Model API and the Directory API.'),
    form,
    h('p', {}, 'Already have an account? ', h('a', { href: `${BASE}/login` }, 'Log in')),
  );
}

async function verifyPage(): Promise<void> {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const out = status();
  show('Verify your email', out);
  say(out, 'Verifying…', 'ok');
  const { data, error } = await verifyEmail({ body: { token } });
  if (!data) {
    say(out, messageOf(error), 'error');
    main().append(h('p', {}, h('a', { href: `${BASE}/login` }, 'Log in')));
    return;
  }
  history.replaceState({}, '', `${BASE}/verify`); // the token leaves the address bar and history
  if (data.object === 'email_verification') {
    // opened in another browser than the one that signed up: verified, not signed in
    say(out, `${data.email} is verified. Log in with your password to continue.`, 'ok');
    main().append(h('p', {}, h('a', { href: `${BASE}/login` }, 'Log in')));
    return;
  }
  session = data;
  history.replaceState({}, '', `${BASE}/keys`); // the token leaves the address bar and history
  await route();
}

function resetPage(): void {
  const token = new URLSearchParams(location.search).get('token');
  const out = status();
  if (token) {
    const password = h('input', {
      type: 'password',
      name: 'password',
      autocomplete: 'new-password',
      required: true,
      minlength: '10',
    });
    const form = narrowForm(
      'New password',
      [field('New password', password, 'At least 10 characters and hard to guess.')],
      'Set password',
      out,
      async () => {
        const { data, error } = await confirmPasswordReset({ body: { token, password: password.value } });
        if (!data) return say(out, messageOf(error), 'error');
        history.replaceState({}, '', `${BASE}/reset`);
        form.replaceChildren(
          h('p', { class: 'ok', role: 'status' }, 'Your password is changed. '),
          h('a', { href: `${BASE}/login` }, 'Log in'),
        );
      },
    );
    return show('Choose a new password', form);
  }
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true });
  const form = narrowForm('Reset password', [field('Email', email)], 'Send reset link', out, async () => {
    const { data, error } = await createPasswordReset({ body: { email: email.value } });
    if (!data) return say(out, messageOf(error), 'error');
    say(out, 'If the address has an account, a reset link is on its way.', 'ok');
  });
  show('Reset your password', form, h('p', {}, h('a', { href: `${BASE}/login` }, 'Back to log in')));
}

// ---------------------------------------------------------------------------------------------
// Projects

async function allProjects(): Promise<Project[]> {
  const out: Project[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { data } = await listProjects({ query: { limit: 100, ...(cursor ? { cursor } : {}) } });
    if (!data) break;
    out.push(...data.data);
    if (!data.has_more || !data.next_cursor) break;
    cursor = data.next_cursor;
  }
  return out;
}

async function projectsPage(): Promise<void> {
  const projects = await allProjects();
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '100' });
  const out = status();
  const form = rowForm(
    'Create a project',
    [field('New project name', name)],
    'Create project',
    out,
    async () => {
      const { data, error } = await createProject({ body: { name: name.value } });
      if (!data) return say(out, messageOf(error), 'error');
      await projectsPage();
    },
  );
  show(
    'Projects',
    h('p', {}, 'Projects group API keys and their usage.'),
    form,
    table(
      {},
      `${projects.length} project(s)`,
      ['Name', 'Id', 'Created'],
      projects.map((p) =>
        h(
          'tr',
          {},
          h('td', {}, p.name, p.is_default ? ' (default)' : ''),
          h('td', {}, h('code', {}, p.id)),
          h('td', {}, when(p.created)),
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Keys

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

/** The panel that shows a secret this once, with a copy button and the warning (`advice`). */
function secretPanel(title: string, secret: string, advice: string): HTMLElement {
  const copied = status();
  const code = h('code', { id: 'new-secret' }, secret);
  return h(
    'section',
    { class: 'secret', 'aria-labelledby': 'secret-title' },
    h('h2', { id: 'secret-title' }, title),
    h('p', {}, h('strong', {}, 'Copy the secret now: it is shown this once. '), advice),
    code,
    h(
      'button',
      {
        type: 'button',
        click: async () => {
          try {
            await navigator.clipboard.writeText(secret);
            say(copied, 'Copied to the clipboard.', 'ok');
          } catch {
            getSelection()?.selectAllChildren(code);
            say(copied, 'Select the secret and copy it by hand (the clipboard was refused).', 'error');
          }
        },
      },
      'Copy secret',
    ),
    copied,
  );
}

/** A new key's secret, shown this once. */
const keySecretPanel = (key: KeyWithSecret, verb: string) =>
  secretPanel(
    `Key “${key.name}” ${verb}`,
    key.secret,
    'We keep only a hash of it and cannot show it again; if you lose it, rotate the key.',
  );

/** A webhook endpoint's signing secret, shown this once. */
const webhookSecretPanel = (url: string, secret: string, verb: string) =>
  secretPanel(
    `Signing secret of ${url} ${verb}`,
    secret,
    'Your receiver verifies every event with it (Standard Webhooks); if you lose it, rotate it.',
  );

async function keysPage(): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Usage

/** The same colours as app.css's `.swatch.cN` (the page's CSP allows no inline style). */
const COLOURS = ['#0b57d0', '#a4161a', '#0a6b2e', '#7b3fb3', '#8a5a00', '#00758f', '#5f6368'];
const day = (d: Date) => d.toISOString().slice(0, 10);

/** EUR as people read it: cents, or four decimals below a cent (the API's nine stay in the CSV and the tooltip). */
function eurText(amount: number): string {
  const abs = Math.abs(amount);
  if (abs === 0 || abs >= 0.01) return `€${amount.toFixed(2)}`;
  if (abs >= 0.0001) return `€${amount.toFixed(4)}`;
  return amount > 0 ? '< €0.0001' : '> −€0.0001';
}

/** An amount of the API (a decimal string in EUR) as read, with the exact value as its tooltip. */
function eurAmount(exact: string, attributes: Record<string, string> = {}): HTMLElement {
  return h('span', { ...attributes, title: `${exact} EUR`, 'data-exact': exact }, eurText(Number(exact)));
}

/** nano-EUR as the API's decimal string (nine decimals). */
const nanoToEur = (nano: number): string => (nano / 1e9).toFixed(9);
const eurToNano = (eur: string): number => Math.round(Number(eur) * 1e9);

/** Stacked bars, one per day, one colour per model; values are numbers already. */
function barChart(
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

/** The directory API's address for this page (see src/console/pages.ts), if it has one. */
function directoryBase(): string | undefined {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="eurus-directory-api"]')?.content;
  if (!meta) return undefined;
  return meta.startsWith(':') ? `${location.protocol}//${location.hostname}${meta}` : meta;
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

async function usageOf(
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

async function usagePage(): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Webhooks (the directory API's webhook endpoints, called with the session across origins)

const EVENT_TYPES: WebhookEventType[] = [
  'workflow.completed',
  'workflow.failed',
  'workflow.cancelled',
  'reply.received',
  'campaign.completed',
  'endpoint.disabled',
  'test',
];

let directoryClient: DirectoryClient | undefined;

/** The directory API's client with the session (its cookie, and the CSRF token on changes). */
function directory(): DirectoryClient | undefined {
  const baseUrl = directoryBase();
  if (!baseUrl) return undefined;
  if (!directoryClient) {
    directoryClient = createDirectoryClient({ baseUrl, credentials: 'include' });
    directoryClient.interceptors.request.use((request) => {
      if (session && request.method !== 'GET') request.headers.set('X-CSRF-Token', session.csrf_token);
      return request;
    });
  }
  return directoryClient;
}

/** What a page of the directory API's acts with: its client, the project and the header naming it. */
interface DirectoryPage {
  dir: DirectoryClient;
  projects: Project[];
  /** `?project_id=`, else the default project. */
  projectId: string;
  headers: { 'Eurus-Project': string };
}

/** Opens a page of the directory API's; undefined, the page saying so, where it is not served. */
async function directoryPage(title: string): Promise<DirectoryPage | undefined> {
  const projects = await allProjects();
  const asked = new URLSearchParams(location.search).get('project_id');
  const projectId = projects.find((p) => p.id === asked)?.id ?? projects.find((p) => p.is_default)?.id ?? '';
  const dir = directory();
  if (!dir) {
    show(title, h('p', { class: 'error' }, 'The directory API is not served with this console.'));
    return undefined;
  }
  return { dir, projects, projectId, headers: { 'Eurus-Project': projectId } };
}

/** The form choosing the project a directory page acts in. */
function projectPicker(page: DirectoryPage, button: string, path: string): HTMLFormElement {
  const project = h(
    'select',
    { name: 'project_id' },
    ...page.projects.map((p) => h('option', { value: p.id, selected: p.id === page.projectId }, p.name)),
  );
  return picker(
    'Choose the project',
    'Project',
    project,
    button,
    () => `${BASE}/${path}?project_id=${encodeURIComponent(project.value)}`,
  );
}

const endpointStatus = (e: WebhookEndpoint) =>
  e.status === 'disabled' ? `disabled (${e.disabled_reason ?? 'manual'})` : e.status;

async function webhooksPage(): Promise<void> {
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

async function webhookPage(id: string): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Sending domains (the directory API's, called with the session across origins, as webhooks)

async function domainsPage(): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Plans and statements

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

async function plansPage(): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Routing

const PUBLIC: Record<string, () => void | Promise<void>> = {
  '/login': loginPage,
  '/signup': signUpPage,
  '/verify': verifyPage,
  '/reset': resetPage,
};
const PRIVATE: Record<string, () => Promise<void>> = {
  '/projects': projectsPage,
  '/keys': keysPage,
  '/usage': usagePage,
  '/plans': plansPage,
  '/webhooks': webhooksPage,
  '/domains': domainsPage,
  '/account': () => accountPage({ h, show, status, say, messageOf, session: () => session as Session }),
};

async function route(): Promise<void> {
  const path = location.pathname.replace(/^\/console/, '').replace(/\/$/, '') || '/keys';
  const open = PUBLIC[path];
  if (open) {
    (document.getElementById('nav') as HTMLElement).hidden = true;
    await open();
    main().focus();
    return;
  }
  if (!session) {
    const { data } = await getSession();
    session = data;
  }
  if (!session) {
    history.replaceState({}, '', `${BASE}/login`);
    return route();
  }
  const nav = document.getElementById('nav') as HTMLElement;
  nav.hidden = false;
  (document.getElementById('who') as HTMLElement).textContent = session.email;
  const endpoint = /^\/webhooks\/(whep_[0-9A-Za-z]+)$/.exec(path)?.[1];
  await (endpoint ? webhookPage(endpoint) : (PRIVATE[path] ?? keysPage)());
  main().focus();
}

document.addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest?.('a');
  if (
    !link ||
    link.origin !== location.origin ||
    !link.pathname.startsWith(BASE) ||
    link.hasAttribute('download')
  )
    return;
  if (event instanceof MouseEvent && (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0))
    return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});
addEventListener('popstate', () => void route());
document.getElementById('logout')?.addEventListener('click', async () => {
  await deleteSession();
  session = undefined;
  navigate(`${BASE}/login`);
});
void route();
