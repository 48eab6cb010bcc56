// The console's DOM helpers: elements made with textContent only (never HTML), the page frame,
// forms, buttons and tables every page draws with, and navigation inside the app.
import type { ErrorResponse } from '../../../generated/model/client/types.gen.ts';

export const BASE = '/console';

/** The event the router listens for: the address changed inside the app, draw its page. */
export const ROUTE = 'console:route';

/** Goes to `path` inside the app: a new history entry, its page drawn. */
export function navigate(path: string): void {
  history.pushState({}, '', path);
  dispatchEvent(new Event(ROUTE));
}

export type Child = Node | string | false | null | undefined;

export function h<K extends keyof HTMLElementTagNameMap>(
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

export const main = () => document.getElementById('main') as HTMLElement;

export function show(title: string, ...children: Child[]): void {
  document.title = `${title} · Eurus console`;
  const root = main();
  root.replaceChildren(h('h1', {}, title), ...children.filter((c): c is Node | string => !!c));
  for (const link of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
    if (link.pathname === location.pathname) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

export function messageOf(error: unknown): string {
  const envelope = error as ErrorResponse | undefined;
  return envelope?.error?.message ?? 'Something went wrong; try again.';
}

/** A live region for a form's outcome, announced to screen readers. */
export function status(): HTMLParagraphElement {
  return h('p', { role: 'status', 'aria-live': 'polite' });
}

export function say(el: HTMLElement, text: string, kind: 'error' | 'ok'): void {
  el.className = kind;
  el.textContent = text;
}

export function field(
  label: string,
  input: HTMLInputElement | HTMLSelectElement,
  hint?: string,
): HTMLElement {
  const id = input.id || `f-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : undefined;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', {}, h('label', { for: id }, label), hintEl, input);
}

export const when = (unix: number | null | undefined) =>
  unix ? new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—';

/** A form whose submit runs `run` instead of leaving the page. */
export function formOf(
  attrs: Record<string, string>,
  children: Child[],
  run: () => unknown,
): HTMLFormElement {
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
export function rowForm(
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
export function picker(
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
export function narrowForm(
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
export function makeForm(
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
export function actionButton(
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
export function askedButton(
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
export const checked = <T extends string>(form: HTMLFormElement, name: string): T[] =>
  [...form.querySelectorAll<HTMLInputElement>(`input[name=${name}]:checked`)].map((i) => i.value as T);

/** Shows a new secret's panel in the page's slot for it, scrolled to. */
export function showNewSecret(panel: HTMLElement): void {
  document.getElementById('secret-slot')?.replaceChildren(panel);
  document.getElementById('new-secret')?.scrollIntoView();
}

/** Saves `text` as the file `name`, as a download of the browser. */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

/** A column heading holding numbers (right-aligned). */
export const numeric = (text: string) => h('th', { scope: 'col', class: 'num' }, text);

/**
 * A table: its caption, one row of column headings (a string is a plain one), its body (rows, or
 * a tbody filled later) and what follows the body (a tfoot).
 */
export function table(
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
