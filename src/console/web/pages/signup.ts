// The sign-up page.
import { createSignUp } from '../../../../generated/model/client/sdk.gen.ts';
import { BASE, field, h, messageOf, narrowForm, say, show, status } from '../dom.ts';

export function signUpPage(): void {
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
