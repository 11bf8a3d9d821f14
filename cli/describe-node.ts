/**
 * The `Overlay Paths:` section of `meshctl describe node`: for every other node on the overlay, how this
 * node reaches it and which row of ADR 0053's table applies — direct (same site, or one of them is the
 * hub: keeps working while the hub is down) or through the declared hub (stops while the hub is down).
 * The rule is the renderer's (api/v1alpha1/overlay.ts); peers' handshakes and bytes are in the node's
 * status (Node.status.overlay.peers), shown above this section.
 */
import type { Client } from '../api/client/types.ts';
import type { Assignment, Node } from '../api/v1alpha1/generated/index.ts';
import { hubOf, onOverlay, pathBetween } from '../api/v1alpha1/overlay.ts';
import { alignRows } from './printers/table.ts';

/** One row: the peer, its site, the path, and what happens to the path while the hub is down. */
export function overlayPathRows(self: Node, nodes: readonly Node[], hub: string | undefined): string[][] {
  const me = self.metadata.name;
  return nodes
    .filter((n) => n.metadata.name !== me && onOverlay(n))
    .map((n) => {
      const name = n.metadata.name ?? '';
      const site = n.spec?.site ?? '<none>';
      if (name === hub) return [name, site, 'direct (the hub)', 'down with the hub'];
      if (pathBetween(self, n, hub) === 'direct') {
        const why = me === hub ? 'direct (this node is the hub)' : 'direct (same site)';
        return [name, site, why, 'keeps working'];
      }
      return [
        name,
        site,
        hub ? `through the hub "${hub}"` : 'none (no hub is assigned)',
        'stops while the hub is down',
      ];
    });
}

/** The section's text (starting with a newline), or '' when the node is not on the overlay. */
export async function overlayPathsSection(client: Client, self: Node): Promise<string> {
  if (!onOverlay(self)) return '';
  let nodes: Node[];
  let assignments: Assignment[];
  try {
    nodes = (await client.list('nodes')).items;
    assignments = (await client.list('assignments')).items;
  } catch (e) {
    return `\nOverlay Paths:\n  <unable to list nodes: ${(e as Error).message}>`;
  }
  const rows = overlayPathRows(self, nodes, hubOf(assignments));
  if (!rows.length) return '\nOverlay Paths:\n  <none>';
  const table = alignRows([['Peer', 'Site', 'Path', 'While The Hub Is Down'], ...rows])
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => '  ' + l);
  return ['', 'Overlay Paths:', ...table].join('\n');
}
