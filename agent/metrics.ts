/**
 * The agent's Prometheus metrics (text exposition format 0.0.4, written by hand) and its small
 * localhost HTTP endpoint: `/metrics` and `/healthz`.
 *
 *   meshagent_reconciles_total{result="success|failure|waiting|error"}   counter
 *   meshagent_reconcile_duration_seconds                        histogram
 *   meshagent_owned_resources                                   gauge
 *   meshagent_control_plane_unreachable_seconds                 gauge (0 while reachable)
 *   meshagent_declaration_generation{state="received|applied"}  gauge
 *   meshagent_outbox_items                                      gauge
 *   meshagent_info{node, version}                               gauge (1)
 * and the recovery clock's families (serve/clock-metrics.ts). The same port serves the node page when given
 * its routes (node-page-routes.ts: `/`, its assets, `/status.json`).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort, parseHostPort } from '../api/meta/host-port.ts';
import type { PageRoutes } from './node-page-routes.ts';
import { escapeLabel as esc, metricFamily as family, PROMETHEUS_CONTENT_TYPE } from '../api/meta/prometheus-text.ts';

/** How a reconcile ended: every resource Applied, some not, only some Waiting (for material), or the reconcile threw. */
export type ReconcileOutcome = 'success' | 'failure' | 'waiting' | 'error';

/** Live values the metrics read when scraped. */
export interface MetricSources {
  node: string;
  version: string;
  unreachableSeconds(): number;
  generations(): { received?: number; applied?: number };
  outboxItems(): number;
  /** More families appended to the exposition (the recovery clock's: serve/clock-metrics.ts). */
  extra?(): string;
}

/** The agent's metrics. */
export interface AgentMetrics {
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
  setOwned(count: number): void;
  /** The exposition text. */
  render(): string;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Creates the metrics of one agent. */
export function createAgentMetrics(src: MetricSources): AgentMetrics {
  const reconciles: Record<ReconcileOutcome, number> = { success: 0, failure: 0, waiting: 0, error: 0 };
  const buckets = BUCKETS.map(() => 0);
  let sum = 0;
  let count = 0;
  let owned = 0;
  return {
    reconciled(outcome, seconds) {
      reconciles[outcome]++;
      BUCKETS.forEach((le, i) => {
        if (seconds <= le) buckets[i]++;
      });
      sum += seconds;
      count++;
    },
    setOwned(n) {
      owned = n;
    },
    render() {
      const g = src.generations();
      const hist: Array<[string, number]> = BUCKETS.map((le, i) => [`_bucket{le="${le}"}`, buckets[i]]);
      hist.push(['_bucket{le="+Inf"}', count], ['_sum', sum], ['_count', count]);
      return [
        family(
          'meshagent_reconciles_total',
          'counter',
          'Reconciles of the declaration, by result.',
          (Object.keys(reconciles) as ReconcileOutcome[]).map((r) => [`{result="${r}"}`, reconciles[r]]),
        ),
        family('meshagent_reconcile_duration_seconds', 'histogram', 'How long a reconcile took.', hist),
        family('meshagent_owned_resources', 'gauge', 'Host resources the agent owns (its inventory).', [['', owned]]),
        family(
          'meshagent_control_plane_unreachable_seconds',
          'gauge',
          'For how long the control plane has been unreachable (0 while it is reachable).',
          [['', src.unreachableSeconds()]],
        ),
        family(
          'meshagent_declaration_generation',
          'gauge',
          'Declaration spec.generation received (stored) and applied in full.',
          [
            ['{state="received"}', g.received ?? 0],
            ['{state="applied"}', g.applied ?? 0],
          ],
        ),
        family('meshagent_outbox_items', 'gauge', 'Events kept on disk until the control plane is reachable.', [
          ['', src.outboxItems()],
        ]),
        family('meshagent_info', 'gauge', 'The agent: its node and version.', [
          [`{node="${esc(src.node)}",version="${esc(src.version)}"}`, 1],
        ]),
        src.extra?.() ?? '',
      ].join('');
    },
  };
}

/** Answers a node page route, or 404 (500 naming the error when building the answer failed). */
async function answerPage(page: PageRoutes | undefined, path: string, res: ServerResponse): Promise<void> {
  try {
    const r = await page?.(path);
    if (r) res.writeHead(r.status, r.headers).end(r.body);
    else {
      const routes = page ? '/ (the node page), /status.json, /metrics or /healthz' : '/metrics or /healthz';
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: try ${routes}\n`);
    }
  } catch (e) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`failed to answer ${path}: ${(e as Error).message}\n`);
  }
}

/** A running metrics endpoint. */
export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Options of `serveMetrics`: `listen` is `HOST:PORT` (port 0 picks one). */
export interface ServeMetricsOptions {
  listen: string;
  metrics: AgentMetrics;
  /** The /healthz document; `ok: false` answers 503. */
  health(): { ok: boolean };
  /** The node page's routes (`/`, its assets, `/status.json`), tried before answering 404. */
  page?: PageRoutes;
}

/** Serves `/metrics` and `/healthz` (and the node page when given) on `listen`. */
export async function serveMetrics(opts: ServeMetricsOptions): Promise<MetricsServer> {
  const { host, port } = parseHostPort(opts.listen);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(opts.metrics.render());
    } else if (path === '/healthz') {
      const h = opts.health();
      res.writeHead(h.ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(h) + '\n');
    } else {
      void answerPage(opts.page, path, res);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${formatHostPort(host, bound)}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
