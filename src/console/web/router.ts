// The console in the browser: plain TypeScript on our own generated SDK (generated/model/client),
// bundled by esbuild into generated/console/app.js (`npm run generate`) from this entry, the
// router. It calls the model API on its own origin with the session cookie (HttpOnly: this
// script never sees it) and sends the session's CSRF token on every change (api.ts). Every text
// is set with textContent, never as HTML (dom.ts); each page is in pages/.
import { deleteSession, getSession } from '../../../generated/model/client/sdk.gen.ts';
import { currentSession, newNavigation, setSession } from './api.ts';
import { BASE, main, navigate, ROUTE } from './dom.ts';
import { accountPage } from './pages/account.ts';
import { domainsPage } from './pages/domains.ts';
import { keysPage } from './pages/keys.ts';
import { loginPage } from './pages/login.ts';
import { plansPage } from './pages/plans.ts';
import { projectsPage } from './pages/projects.ts';
import { resetPage } from './pages/reset.ts';
import { signUpPage } from './pages/signup.ts';
import { usagePage } from './pages/usage.ts';
import { verifyPage } from './pages/verify.ts';
import { webhookPage } from './pages/webhook.ts';
import { webhooksPage } from './pages/webhooks.ts';

const PUBLIC: Record<string, () => void | Promise<void>> = {
  '/login': loginPage,
  '/signup': signUpPage,
  '/verify': () => verifyPage(() => draw()),
  '/reset': resetPage,
};
const PRIVATE: Record<string, () => Promise<void>> = {
  '/projects': projectsPage,
  '/keys': keysPage,
  '/usage': usagePage,
  '/plans': plansPage,
  '/webhooks': webhooksPage,
  '/domains': domainsPage,
  '/account': accountPage,
};

/**
 * Pages are drawn one navigation after another: a page whose answers arrive after the reader has
 * moved on draws first (its reads cut short by `newNavigation`), and the page asked for last is
 * the one left on screen. Drawn side by side, a slow page drew over the one asked for after it.
 */
let drawing: Promise<void> = Promise.resolve();
let asked = 0;
function route(): Promise<void> {
  const navigation = ++asked;
  newNavigation();
  const latest = () => (navigation === asked ? draw(navigation) : undefined);
  drawing = drawing.then(latest, latest);
  return drawing;
}

async function draw(navigation = asked): Promise<void> {
  const path = location.pathname.replace(/^\/console/, '').replace(/\/$/, '') || '/keys';
  const open = PUBLIC[path];
  if (open) {
    (document.getElementById('nav') as HTMLElement).hidden = true;
    await open();
    main().focus();
    return;
  }
  if (!currentSession()) {
    const { data } = await getSession();
    if (navigation !== asked) return; // its read cut short: not signed out, only moved on
    setSession(data);
  }
  const session = currentSession();
  if (!session) {
    history.replaceState({}, '', `${BASE}/login`);
    return draw();
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
addEventListener(ROUTE, () => void route());
document.getElementById('logout')?.addEventListener('click', async () => {
  await deleteSession();
  setSession(undefined);
  navigate(`${BASE}/login`);
});
void route();
