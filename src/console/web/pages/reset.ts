// The password reset pages: asking for a link, and choosing a new password with it.
import { confirmPasswordReset, createPasswordReset } from '../../../../generated/model/client/sdk.gen.ts';
import { BASE, field, h, messageOf, narrowForm, say, show, status } from '../dom.ts';

export function resetPage(): void {
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
