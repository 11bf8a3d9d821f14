/**
 * Asks the control plane for a one-time sign-in link to its status page (`POST /ui/sign-in-links`, admin token
 * only; api/server/ui/): for `meshctl dashboard` and `npm start`. The link is good once, for a short while.
 */
import type { ClientConfig } from './types.ts';
import { HttpTransport } from './http-transport.ts';

/** A sign-in link: the full URL, and when it stops working. */
export interface SignInLink {
  url: string;
  /** The page's own URL (without a code). */
  page: string;
  expires: string;
}

/** Creates a sign-in link on the control plane of `config`; rejects with ApiError as the client does. */
export async function createSignInLink(config: ClientConfig): Promise<SignInLink> {
  const t = new HttpTransport({ config });
  try {
    const r = (await t.json({ method: 'POST', path: '/ui/sign-in-links' })) as { path?: unknown; expires?: unknown };
    if (typeof r?.path !== 'string' || typeof r.expires !== 'string')
      throw new Error('the control plane answered the sign-in link request without a link');
    const base = config.server.replace(/\/+$/, '');
    return { url: `${base}${r.path}`, page: `${base}/ui/`, expires: r.expires };
  } finally {
    t.close();
  }
}
