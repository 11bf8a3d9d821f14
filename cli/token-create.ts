/**
 * `meshctl token create`: asks the control plane for a new JoinToken (the server picks the id and the
 * secret and returns the whole token once, in the `X-Meshctl-Join-Token` response header), reads the CA
 * from `/cluster-info` and prints the token with the full `mesh-agent join` command, CA pin included.
 * The pin is api/meta/ca-pin.ts (node:crypto only, no X.509 library at start-up).
 */
import { isIP } from 'node:net';
import { errorFromResponse, readBody } from '../api/client/answers.ts';
import { HttpTransport } from '../api/client/http-transport.ts';
import type { ClientConfig } from '../api/client/types.ts';
import { caPin } from '../api/meta/ca-pin.ts';
import { API_VERSION, GROUP, VERSION, type KubeObject } from '../api/meta/types.ts';
import { CliError } from './errors.ts';

/** The response header carrying a new token (api/server/access/join-token-lifecycle.ts). */
const TOKEN_HEADER = 'x-meshctl-join-token';

/** What `token create` made. */
export interface CreatedToken {
  token: string;
  name: string;
  expiresAt?: string;
  server: string;
  caHash: string;
  joinCommand: string;
}

/** Options of `createToken`. */
export interface CreateTokenOptions {
  config: ClientConfig;
  ttl?: string;
  description?: string;
}

/** Creates a JoinToken and builds the join command for it. */
export async function createToken(opts: CreateTokenOptions): Promise<CreatedToken> {
  const t = new HttpTransport({ config: opts.config });
  try {
    const info = (await t.json({ method: 'GET', path: '/cluster-info' })) as
      { ca?: unknown; server?: unknown } | undefined;
    if (typeof info?.ca !== 'string')
      throw new CliError(`${opts.config.server}/cluster-info did not return the CA; is this a meshctl control plane?`);
    const spec = {
      ...(opts.ttl ? { ttl: opts.ttl } : {}),
      ...(opts.description ? { description: opts.description } : {}),
    };
    const body = { apiVersion: API_VERSION, kind: 'JoinToken', metadata: {}, spec };
    const res = await t.send({ method: 'POST', path: `/apis/${GROUP}/${VERSION}/jointokens`, body });
    const text = await readBody(res).catch((e: Error) => {
      throw t.unreachable(e);
    });
    if ((res.statusCode ?? 0) !== 201) throw errorFromResponse(res.statusCode ?? 0, text);
    const created = JSON.parse(text) as KubeObject & { status?: { expiresAt?: string } };
    const token = res.headers[TOKEN_HEADER];
    if (typeof token !== 'string')
      throw new CliError(
        `the control plane created jointoken ${created.metadata.name} but returned no token; delete it with \`meshctl token delete ${created.metadata.name}\``,
      );
    const server = typeof info.server === 'string' ? info.server : opts.config.server;
    const pin = caPin(info.ca);
    return {
      token,
      name: created.metadata.name ?? '',
      server,
      caHash: pin,
      ...(created.status?.expiresAt ? { expiresAt: created.status.expiresAt } : {}),
      joinCommand: `mesh-agent join --server ${server} --token ${token} --ca-hash ${pin}`,
    };
  } finally {
    t.close();
  }
}

/** The text `token create` prints. */
export function renderCreated(c: CreatedToken): string {
  const lines = [
    `jointoken/${c.name} created${c.expiresAt ? `: it expires at ${c.expiresAt}` : ''} and can be used once.`,
    '',
    'Join a machine to the mesh with (as root on that machine):',
    '',
    `  ${c.joinCommand}`,
    '',
    'The token is shown only now: the control plane keeps only its hash.',
  ];
  if (isLoopbackUrl(c.server)) {
    lines.push(
      `Note: ${c.server} is this machine's loopback address; on another machine use an address of the control plane`,
      'that its serving certificate names (`meshctl init --san NAME` when the mesh was created, or `mesh-control-plane --san NAME`).',
    );
  }
  return lines.join('\n') + '\n';
}

function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
}
