/**
 * The recovery clock on the agent's /metrics, with the names issue 10 gives (the same on the control plane):
 *
 *   meshctl_control_plane_last_contact_timestamp_seconds          gauge (absent before the first contact)
 *   meshctl_certificate_expiration_timestamp_seconds{name,node}   gauge, one per certificate held
 *   meshctl_recovery_deadline_timestamp_seconds                   gauge (absent when no certificate is held)
 *
 * Timestamps, not durations, as Prometheus convention wants: `time() - last_contact` is the unreachable time
 * and `deadline - time()` the remaining budget, both growing/shrinking while the control plane is down.
 */
import { escapeLabel as esc, metricFamily as family } from '../../api/meta/prometheus-text.ts';
import type { ClockReport } from '../../api/wire/node-clock.ts';

const seconds = (iso: string): number => Date.parse(iso) / 1000;

/** The exposition text of the clock families for one report. */
export function renderClockMetrics(r: ClockReport): string {
  return [
    family(
      'meshctl_control_plane_last_contact_timestamp_seconds',
      'gauge',
      'When this node last reached the control plane (Unix seconds).',
      r.lastContact ? [['', seconds(r.lastContact)]] : [],
    ),
    family(
      'meshctl_certificate_expiration_timestamp_seconds',
      'gauge',
      'notAfter of each certificate this node holds (Unix seconds).',
      r.certificates.map((c) => [`{name="${esc(c.name)}",node="${esc(r.node)}"}`, seconds(c.notAfter)]),
    ),
    family(
      'meshctl_recovery_deadline_timestamp_seconds',
      'gauge',
      "This node's recovery deadline: the earliest notAfter it holds (Unix seconds).",
      r.deadline ? [['', seconds(r.deadline)]] : [],
    ),
  ].join('');
}
