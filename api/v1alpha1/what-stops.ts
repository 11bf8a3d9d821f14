/**
 * ADR 0053's table of what stops while the control plane is down, with each row's state right now — one pure
 * function that `meshctl status` (cli/status-report.ts) and the control plane's status page (web/control-plane/)
 * both print, so the two never disagree. The reason says what is wrong and since when, as far as it is known.
 */
import type { Mesh, Node } from './generated/index.ts';

/** What the table is decided from. */
export interface WhatStopsInput {
  /** True when the control plane cannot be reached (by the CLI, or by the page's watch). */
  controlPlaneDown: boolean;
  /** Since when it has been unreachable (ISO time), when known. */
  downSince?: string;
  mesh?: Mesh;
  /** The nodes as last read (the hub's reachability and since when). */
  nodes: Node[];
}

/** One row: what it is, whether it is stopped now, and why (empty when it works). */
export interface WhatStopsRow {
  what: string;
  stopped: boolean;
  why: string;
  /** Since when it is stopped (ISO time), when known. */
  since?: string;
}

/** The rows of ADR 0053's table, in its order, each stopped or working right now. */
export function whatStops(input: WhatStopsInput): WhatStopsRow[] {
  const down = input.controlPlaneDown;
  const since = down ? input.downSince : undefined;
  const cp = (what: string, why: string): WhatStopsRow => ({
    what,
    stopped: down,
    why: down ? why : '',
    ...(since ? { since } : {}),
  });
  return [
    cp('new assignments, new modules, new versions', 'the API is gone'),
    cp('new grants (routes) and certificate provisioning', 'the control plane issues and renews'),
    cp('a new node joining', 'the join token is checked by the control plane'),
    cp('collection of health, logs and reports', 'agents buffer on disk and flush on return'),
    hubRow(input),
    { what: 'co-located direct peers', stopped: false, why: '' },
    { what: 'everything already assigned, on every node', stopped: false, why: '' },
  ];
}

/** Non-co-located overlay paths: stopped while the hub is unreachable (or the control plane is down). */
function hubRow(input: WhatStopsInput): WhatStopsRow {
  const what = 'non-co-located overlay paths';
  const hub = input.mesh?.status?.hubNode;
  const hubNode = input.nodes.find((n) => n.metadata.name === hub);
  if (hub !== undefined && hubNode?.status?.reachable === false) {
    const since = hubNode.status.since;
    return { what, stopped: true, why: `hub ${hub} unreachable`, ...(since ? { since } : {}) };
  }
  if (input.controlPlaneDown) {
    const since = input.downSince;
    return { what, stopped: true, why: `the hub${hub ? ` (${hub})` : ''} is the route`, ...(since ? { since } : {}) };
  }
  return { what, stopped: false, why: '' };
}
