// The log-in page.
import { setSession } from '../api.ts';
import { createSession } from '../../../../generated/model/client/sdk.gen.ts';
import { BASE, field, h, messageOf, narrowForm, navigate, say, show, status } from '../dom.ts';

export function loginPage(): void {
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
      setSession(data);
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
