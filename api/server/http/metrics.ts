/**
 * The control plane's own metrics, served as `GET /metrics` on the API listener to the admin only
 * (Prometheus text format, api/meta/prometheus-text.ts):
 *
 *   meshctl_apiserver_rejected_requests_total{code, reason}   counter: requests a limit refused, by limit —
 *       429: inflight, watches_per_client, event_quota, join_rate, list_bytes; 413: body_size;
 *       parser limits: parser_depth (400), parser_aliases (400), parser_size (413)
 *   meshctl_apiserver_current_inflight_requests               gauge: short requests being served
 *   meshctl_apiserver_open_watches                            gauge: watches and followed logs open
 *   meshctl_apiserver_requests_total{client, verb, resource}  counter: authenticated requests by caller kind
 *       (admin, node), HTTP method and what they address (`declarations`, `nodes/status`, `logs`, `discovery`…)
 *   process_* and nodejs_*                                    the process's CPU, RSS and V8 heap, as prom-client
 *       names them (api/meta/process-metrics.ts)
 *
 * A refusal is counted where every error becomes a Status (app.ts), from the ApiError's `limit`.
 */
import type { ApiError, LimitName } from '../../meta/api-error.ts';
import { processMetrics } from '../../meta/process-metrics.ts';
import { metricFamily } from '../../meta/prometheus-text.ts';

/** Every limit, with the HTTP code it answers; each is reported (0 until it refuses something). */
const LIMITS: Record<LimitName, number> = {
  inflight: 429,
  watches_per_client: 429,
  event_quota: 429,
  join_rate: 429,
  list_bytes: 429,
  body_size: 413,
  parser_depth: 400,
  parser_aliases: 400,
  parser_size: 413,
};

/** The gauges, read when scraped. */
export interface MetricGauges {
  requestsInflight: number;
  requestsQueued: number;
  watchesOpen: number;
}

/** Counts refusals by limit and renders the exposition text. */
export class ApiServerMetrics {
  readonly #rejected = new Map<LimitName, number>();
  /** Requests by their label set (`{client="…",verb="…",resource="…"}`). */
  readonly #requests = new Map<string, number>();

  /** Counts one authenticated request of a `client` kind, by HTTP method and what it addresses. */
  request(client: string, verb: string, resource: string): void {
    const labels = `{client="${client}",verb="${verb}",resource="${resource}"}`;
    this.#requests.set(labels, (this.#requests.get(labels) ?? 0) + 1);
  }

  /** Counts `err` when a limit refused the request. */
  counted(err: ApiError): void {
    if (err.limit !== undefined) this.#rejected.set(err.limit, (this.#rejected.get(err.limit) ?? 0) + 1);
  }

  /** How many requests `limit` refused so far. */
  rejected(limit: LimitName): number {
    return this.#rejected.get(limit) ?? 0;
  }

  /** The `/metrics` text. */
  render(gauges: MetricGauges): string {
    const names = Object.keys(LIMITS) as LimitName[];
    return [
      metricFamily(
        'meshctl_apiserver_rejected_requests_total',
        'counter',
        'Requests refused by one of the server limits, by HTTP code and limit.',
        names.map((n) => [`{code="${LIMITS[n]}",reason="${n}"}`, this.rejected(n)]),
      ),
      metricFamily('meshctl_apiserver_current_inflight_requests', 'gauge', 'Short requests being served.', [
        ['', gauges.requestsInflight],
      ]),
      metricFamily(
        'meshctl_apiserver_current_inqueue_requests',
        'gauge',
        'Short requests waiting for an in-flight slot.',
        [['', gauges.requestsQueued]],
      ),
      metricFamily('meshctl_apiserver_open_watches', 'gauge', 'Watches and followed logs open.', [
        ['', gauges.watchesOpen],
      ]),
      metricFamily(
        'meshctl_apiserver_requests_total',
        'counter',
        'Authenticated requests by caller kind, HTTP method and what they address.',
        [...this.#requests].sort(([a], [b]) => (a < b ? -1 : 1)),
      ),
      processMetrics(),
    ].join('');
  }
}
