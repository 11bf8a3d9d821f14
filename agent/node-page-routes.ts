/**
 * The node page's routes on the agent's metrics port (metrics.ts serves them beside /metrics and /healthz):
 * `/` the page (api/web/assets.ts's shell), `/ui/node.js` and `/ui/node.css` its built assets (web/node/), and
 * `/status.json` the read-only view it polls (node-page.ts). Every answer carries the pages' headers: nothing
 * loads from outside, no framing, no caching.
 */
import { PAGE_HEADERS, pageShell, webAssets } from '../api/web/assets.ts';
import type { NodePageStatus } from '../api/meta/node-page.ts';

/** One answer of a page route. */
export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Answers a page route, or undefined when `path` is not one of them. */
export type PageRoutes = (path: string) => Promise<PageResponse | undefined>;

/** Options of `nodePageRoutes`. */
export interface NodePageRoutesOptions {
  node: string;
  /** The view as of now. */
  view(): Promise<NodePageStatus>;
}

const ok = (type: string, body: string): PageResponse => ({
  status: 200,
  headers: { ...PAGE_HEADERS, 'content-type': type },
  body,
});

/** The node page's routes (see the module comment). */
export function nodePageRoutes(opts: NodePageRoutesOptions): PageRoutes {
  return async (path) => {
    switch (path) {
      case '/':
        return ok(
          'text/html; charset=utf-8',
          pageShell({ title: `Node ${opts.node} — meshctl`, base: '/ui/', name: 'node' }),
        );
      case '/ui/node.js':
        return ok('text/javascript; charset=utf-8', (await webAssets('node')).js);
      case '/ui/node.css':
        return ok('text/css; charset=utf-8', (await webAssets('node')).css);
      case '/status.json':
        return ok('application/json', JSON.stringify(await opts.view()) + '\n');
      default:
        return undefined;
    }
  };
}
