// The panel that shows a new secret this once: a key's, or a webhook endpoint's signing secret.
import type { KeyWithSecret } from '../../../generated/model/client/types.gen.ts';
import { h, say, status } from './dom.ts';

/** The panel that shows a secret this once, with a copy button and the warning (`advice`). */
export function secretPanel(title: string, secret: string, advice: string): HTMLElement {
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
export const keySecretPanel = (key: KeyWithSecret, verb: string) =>
  secretPanel(
    `Key “${key.name}” ${verb}`,
    key.secret,
    'We keep only a hash of it and cannot show it again; if you lose it, rotate the key.',
  );

/** A webhook endpoint's signing secret, shown this once. */
export const webhookSecretPanel = (url: string, secret: string, verb: string) =>
  secretPanel(
    `Signing secret of ${url} ${verb}`,
    secret,
    'Your receiver verifies every event with it (Standard Webhooks); if you lose it, rotate it.',
  );
