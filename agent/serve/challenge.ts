/**
 * The node's side of ACME HTTP-01 (issue 10 contract §3): the key authorization of a pending challenge is
 * held by the control plane; the agent's plain-HTTP listener fetches it with the node credential from
 * `certificates/{name}/acme-challenge/{token}` (text/plain). 404 means no such pending challenge.
 */
import { errorFromResponse, readBody } from '../../api/client/answers.ts';
import { HttpTransport } from '../../api/client/http-transport.ts';
import type { ClientConfig } from '../../api/client/types.ts';
import { acmeChallengePath } from '../../api/wire/certificate-material.ts';
import type { ChallengeFetcher } from './proxy-server.ts';

/** A ChallengeFetcher over the agent's connection to the control plane; `close()` frees its sockets. */
export function createChallengeFetcher(cfg: ClientConfig): { fetch: ChallengeFetcher; close(): void } {
  const t = new HttpTransport({ config: { ...cfg, timeoutMs: cfg.timeoutMs ?? 10_000 } });
  return {
    async fetch(certificate, token) {
      const res = await t.send({ method: 'GET', path: acmeChallengePath(certificate, token) });
      const text = await readBody(res);
      if (res.statusCode === 404) return undefined;
      if ((res.statusCode ?? 0) >= 300) throw errorFromResponse(res.statusCode ?? 0, text);
      return text;
    },
    close: () => t.close(),
  };
}
