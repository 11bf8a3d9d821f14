/**
 * The control plane's status page on its own listener, under `/ui/` (served before authentication):
 *
 *   GET  /ui/                       the page (api/web/assets.ts's shell, script and stylesheet), PAGE_HEADERS
 *   POST /ui/session                `{"token": "<admin token>"}` → 204 with the session cookie; a wrong token is
 *                                   a 401 Status and sets nothing
 *   POST /ui/sign-out               removes the cookie
 *   POST /ui/sign-in-links          admin bearer token only: a one-time link `{path, expires}` (`meshctl dashboard`)
 *   GET  /ui/sign-in?code=CODE      exchanges a link's code for the cookie and redirects to `/ui/` (without the
 *                                   code); a used, expired or unknown code gets a page saying which
 *
 * The cookie lets the browser READ the API as the admin (ui-access.ts); every write still needs the bearer token.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { Clock } from '../../meta/clock.ts';
import type { Logger } from '../../meta/logger.ts';
import { PAGE_HEADERS, pageShell, webAssets } from '../../web/assets.ts';
import { hashToken, type Authenticator } from '../access/auth.ts';
import { readBody } from '../http/body.ts';
import { requireMethod, sendJson } from '../http/respond.ts';
import { notFoundPath } from '../http/routes.ts';
import { cookieReads } from './ui-access.ts';
import { SignInLinks } from './sign-in-links.ts';
import { clearCookie, UiSessions } from './ui-session.ts';
import { refusedLinkPage } from './refused-link-page.ts';

/** Options of `createUiEndpoints`. */
export interface UiOptions {
  /** The session key (ui-session.ts `loadSessionKey`). */
  key: Buffer;
  /** Hex SHA-256 of the admin token now. */
  adminTokenSha256: () => string;
  clock: Clock;
  logger: Logger;
  /** Lifetimes of a session and of a sign-in link (defaults: ui-session.ts, sign-in-links.ts). */
  sessionTtlMs?: number;
  linkTtlMs?: number;
}

/** What `createApp` needs of the page: the cookie's authenticator and the `/ui/` handler. */
export interface UiEndpoints {
  /** The admin's reads for a request that carries a valid session cookie and no bearer token. */
  authenticate: Authenticator;
  /** Serves a `/ui` path. */
  serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

/** True for the paths the page owns (`/ui` and below). */
export function isUiPath(pathname: string): boolean {
  return pathname === '/ui' || pathname.startsWith('/ui/');
}

const PAGE = 'control-plane';

/** A `/ui/` handler. */
type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** What the handlers share. */
interface UiContext {
  sessions: UiSessions;
  links: SignInLinks;
  isAdminToken(token: string): boolean;
  logger: Logger;
}

/** Builds the page's endpoints. */
export function createUiEndpoints(opts: UiOptions): UiEndpoints {
  const sessions = new UiSessions({
    key: opts.key,
    adminTokenSha256: opts.adminTokenSha256,
    clock: opts.clock,
    ...(opts.sessionTtlMs ? { ttlMs: opts.sessionTtlMs } : {}),
  });
  const isAdminToken = (token: string): boolean => {
    const presented = Buffer.from(hashToken(token), 'hex');
    const expected = Buffer.from(opts.adminTokenSha256(), 'hex');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  };
  const routes = uiRoutes({
    sessions,
    links: new SignInLinks(opts.clock, opts.linkTtlMs),
    isAdminToken,
    logger: opts.logger,
  });
  return {
    authenticate: cookieReads(sessions),
    async serve(req, res, url) {
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      if (url.pathname === '/ui') return void res.writeHead(308, { location: '/ui/' }).end();
      const handler = routes[`${method} ${url.pathname}`];
      if (!handler) {
        const known = Object.keys(routes).filter((k) => k.endsWith(` ${url.pathname}`));
        if (known.length)
          requireMethod(
            res,
            method,
            known.map((k) => k.split(' ')[0]),
          );
        throw notFoundPath();
      }
      await handler(req, res, url);
    },
  };
}

/** The handlers by `METHOD path`. */
function uiRoutes(c: UiContext): Record<string, Handler> {
  return {
    'GET /ui/': async (_req, res) => send(res, 'text/html; charset=utf-8', pageShell(shellOpts())),
    [`GET /ui/${PAGE}.js`]: async (_req, res) =>
      send(res, 'text/javascript; charset=utf-8', (await webAssets(PAGE)).js),
    [`GET /ui/${PAGE}.css`]: async (_req, res) => send(res, 'text/css; charset=utf-8', (await webAssets(PAGE)).css),
    'POST /ui/session': async (req, res) => {
      if (!c.isAdminToken(await tokenFrom(req))) throw wrongToken();
      c.logger.info('Signed in to the status page', { with: 'admin token' });
      signIn(c.sessions, res, 204);
    },
    'POST /ui/sign-out': async (_req, res) =>
      void res.writeHead(204, { ...PAGE_HEADERS, 'set-cookie': clearCookie() }).end(),
    'POST /ui/sign-in-links': async (req, res) => {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!m?.[1] || !c.isAdminToken(m[1]))
        throw new ApiError({ reason: 'Unauthorized', message: 'Unauthorized: a sign-in link needs the admin token' });
      const link = c.links.create();
      const expires = new Date(link.expires).toISOString();
      c.logger.info('Created a sign-in link', { expires });
      sendJson(res, 201, { path: `/ui/sign-in?code=${link.code}`, expires });
    },
    'GET /ui/sign-in': async (_req, res, url) => {
      const refused = c.links.redeem(url.searchParams.get('code') ?? '');
      c.logger.info(refused ? 'Refused a sign-in link' : 'Signed in to the status page', {
        with: 'one-time link',
        ...(refused ? { why: refused } : {}),
      });
      if (!refused) return signIn(c.sessions, res, 303, { location: '/ui/' });
      send(res, 'text/html; charset=utf-8', refusedLinkPage(refused), 403);
    },
  };
}

/** Answers with a new session cookie (and `headers`, e.g. a redirect). */
function signIn(sessions: UiSessions, res: ServerResponse, code: number, headers: Record<string, string> = {}): void {
  const s = sessions.issue();
  res.writeHead(code, { ...PAGE_HEADERS, 'set-cookie': sessions.setCookie(s.value, s.expires), ...headers }).end();
}

function shellOpts(): { title: string; base: string; name: string } {
  return { title: 'meshctl — control plane', base: '/ui/', name: PAGE };
}

function send(res: ServerResponse, type: string, body: string, code = 200): void {
  res.writeHead(code, { ...PAGE_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The token of a sign-in form post: `{"token": "..."}`. */
async function tokenFrom(req: IncomingMessage): Promise<string> {
  const body = await readBody(req, 4096);
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const token = (parsed as { token?: unknown } | null)?.token;
    if (typeof token === 'string' && token.trim()) return token.trim();
  } catch {
    /* answered below */
  }
  throw ApiError.badRequest('the sign-in body must be JSON {"token": "<admin token>"}');
}

function wrongToken(): ApiError {
  return new ApiError({
    reason: 'Unauthorized',
    message: 'that is not the admin token (see admin.meshconfig, or run meshctl dashboard); nothing was stored',
  });
}
