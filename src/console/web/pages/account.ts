// The console's Account page (issue 29): export everything stored about the account as one JSON
// archive (GDPR Art. 15 and 20), and erase the account after re-entering the password (Art. 17),
// cancellable during the grace period.
import {
  cancelAccountErasure,
  createAccountExport,
  deleteAccount,
  getAccountErasure,
  getAccountExport,
} from '../../../../generated/model/client/sdk.gen.ts';
import type { AccountErasure } from '../../../../generated/model/client/types.gen.ts';
import { currentSession } from '../api.ts';
import { h, messageOf, say, show, status } from '../dom.ts';

const when = (seconds: number) => new Date(seconds * 1000).toLocaleString();

export async function accountPage(): Promise<void> {
  const exportOut = status();
  const exportButton = h('button', { type: 'button' }, 'Export my data');
  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true;
    say(exportOut, 'Building the archive…', 'ok');
    const started = await createAccountExport();
    if (!started.data) {
      exportButton.disabled = false;
      return say(exportOut, messageOf(started.error), 'error');
    }
    let current = started.data;
    for (let i = 0; i < 120 && current.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const polled = await getAccountExport({ path: { id: current.id } });
      if (polled.data) current = polled.data;
    }
    exportButton.disabled = false;
    if (current.status !== 'completed' || !current.download_url) {
      return say(exportOut, 'The archive could not be built; try again later.', 'error');
    }
    exportOut.className = 'ok';
    exportOut.replaceChildren(
      'Your archive is ready: ',
      h('a', { href: current.download_url, download: '' }, 'download it (JSON)'),
      current.expires_at === null ? '' : `, until ${when(current.expires_at)}.`,
    );
  });

  const erasureOut = status();
  const erasure = (await getAccountErasure()).data;
  const scheduled = erasure?.status === 'scheduled' ? erasure : undefined;
  const erasureBox = scheduled ? scheduledBox(scheduled, erasureOut) : eraseForm(erasureOut);

  show(
    'Account',
    h('h2', {}, 'Your data'),
    h(
      'p',
      {},
      'Download everything stored about this account as one JSON file: projects, keys (never their secrets), usage, statements, webhooks, sending domains, campaigns, replies, suppressions, concierge workflows, stored responses, MCP servers and CRM connections.',
    ),
    exportButton,
    exportOut,
    h('h2', {}, 'Erase the account'),
    erasureBox,
    erasureOut,
  );
}

function scheduledBox(erasure: AccountErasure, out: HTMLElement): HTMLElement {
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel the erasure');
  cancel.addEventListener('click', async () => {
    const { error } = await cancelAccountErasure();
    if (error) return say(out, messageOf(error), 'error');
    await accountPage();
  });
  const kept = erasure.receipt.kept;
  return h(
    'div',
    {},
    h('p', { class: 'error' }, `This account will be erased on ${when(erasure.erase_at)}.`),
    cancel,
    kept.length > 0 && h('h3', {}, 'What will be kept, and why'),
    kept.length > 0 &&
      h(
        'ul',
        { class: 'kept' },
        ...kept.map((k) => h('li', {}, `${k.what}: ${k.why}${k.until === null ? '' : ` (${k.until})`}.`)),
      ),
  );
}

function eraseForm(out: HTMLElement): HTMLElement {
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const form = h(
    'form',
    {},
    h(
      'p',
      {},
      'Erasing ends every key and session and deletes what is stored about the account, after a grace period in which you can cancel. Statements and the records behind them are kept as the law asks, and opt-outs of your recipients as hashes; the receipt says what is kept and why.',
    ),
    h('label', {}, 'Your password', password),
    h('button', { type: 'submit', class: 'danger' }, 'Erase my account'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!confirm('Erase this account and everything stored about it?')) return;
    const { error } = await deleteAccount({
      body: { confirm: currentSession()?.account_id ?? '', password: password.value },
    });
    if (error) return say(out, messageOf(error), 'error');
    await accountPage();
  });
  return form;
}
