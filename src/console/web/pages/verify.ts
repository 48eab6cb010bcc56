// The page an email verification link opens.
import { verifyEmail } from '../../../../generated/model/client/sdk.gen.ts';
import { setSession } from '../api.ts';
import { BASE, h, main, messageOf, say, show, status } from '../dom.ts';

/** Verifies the link's token; signed in by it, `signedIn` draws the page the session opens on. */
export async function verifyPage(signedIn: () => Promise<void>): Promise<void> {
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
  setSession(data);
  history.replaceState({}, '', `${BASE}/keys`); // the token leaves the address bar and history
  await signedIn();
}
