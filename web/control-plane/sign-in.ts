/**
 * The sign-in form: a labelled password field for the admin token, posted to `/ui/session`, which answers
 * with an HttpOnly session cookie (the page never keeps the token: the field is cleared either way). A wrong
 * token shows the server's message in an alert.
 */
import { h } from '../shared/dom.ts';

/** Builds the form; `onSignedIn` runs once the cookie is set. */
export function signInForm(onSignedIn: () => void): HTMLElement {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    'aria-describedby': 'token-help',
  });
  const message = h('p', { id: 'sign-in-message', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { id: 'sign-in', 'aria-labelledby': 'sign-in-heading' },
    h('h2', { id: 'sign-in-heading' }, 'Sign in'),
    h('label', { for: 'token' }, 'Admin token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'help' },
      'The token in the control plane’s admin.meshconfig. Or run “meshctl dashboard” for a one-time sign-in link.',
    ),
    button,
    message,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = input.value;
    input.value = '';
    button.disabled = true;
    message.textContent = 'Signing in…';
    void postToken(token)
      .then((error) => {
        message.textContent = error ?? '';
        if (error === undefined) onSignedIn();
        else input.focus();
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return form;
}

/** Posts the token; undefined when signed in, else what went wrong in words. */
async function postToken(token: string): Promise<string | undefined> {
  try {
    const res = await fetch('/ui/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    if (res.ok) return undefined;
    const status = (await res.json().catch(() => ({}))) as { message?: string };
    return `Not signed in: ${status.message ?? `HTTP ${res.status}`}`;
  } catch (e) {
    return `Not signed in: the control plane could not be reached (${e instanceof Error ? e.message : String(e)})`;
  }
}
