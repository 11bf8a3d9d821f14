/**
 * An automation script on the client of api/client/index.ts: it labels a Node
 * `example.meshctl.dev/unreachable=true` while its `Reachable` condition is False, and removes the label when the
 * node returns. Run it beside a mesh (it needs only a meshconfig):
 *
 *     npx tsx hack/examples/label-unreachable.ts [MESHCONFIG]      # default: $MESHCONFIG
 *     meshctl get nodes -l example.meshctl.dev/unreachable=true    # in another terminal
 *
 * It has a controller's shape: an informer keeps a cache of the nodes and puts the name of each changed node on a
 * work queue; one worker takes a name, reads the node from the cache and makes its label agree with its condition,
 * whatever happened before (so a missed event or a restart of this script or of the control plane loses nothing:
 * the informer's relist reports every node again). A failed write is retried with the queue's per-key backoff.
 * It logs one JSON line per change it makes; SIGINT or SIGTERM stop it.
 */
import { pathToFileURL } from 'node:url';
import {
  WorkQueue,
  createClient,
  createInformer,
  createJsonLogger,
  isReason,
  loadMeshconfig,
  type Client,
  type Logger,
  type Node,
} from '../../api/client/index.ts';

/** The label it keeps. */
export const LABEL = 'example.meshctl.dev/unreachable';

/** The label value a node should carry: 'true' while its Reachable condition is False, none otherwise (pure). */
export function desiredLabel(node: Node): string | undefined {
  const reachable = node.status?.conditions?.find((c) => c.type === 'Reachable');
  return reachable?.status === 'False' ? 'true' : undefined;
}

/** A running labeler. */
export interface Labeler {
  /** Stops the worker (after its current node) and the informer. */
  stop(): Promise<void>;
}

/** Starts the informer and the worker; resolves once the first list is in the cache. */
export async function startLabeler(opts: { client: Client; logger?: Logger }): Promise<Labeler> {
  const { client } = opts;
  const logger = opts.logger ?? createJsonLogger();
  const queue = new WorkQueue({ baseDelayMs: 200, maxDelayMs: 30_000 });
  const nodes = createInformer<Node>({ client, plural: 'nodes', logger });
  nodes.addEventHandler((_type, node) => queue.add(node.metadata.name as string));
  nodes.start();
  await nodes.waitForSync();

  /** Makes one node's label agree with its condition. */
  async function reconcile(name: string): Promise<void> {
    const node = nodes.get(name);
    if (!node) return; // deleted: nothing to label
    const want = desiredLabel(node);
    if (node.metadata.labels?.[LABEL] === want) return;
    try {
      await client.patch('nodes', name, { metadata: { labels: { [LABEL]: want ?? null } } });
    } catch (e) {
      if (isReason(e, 'NotFound')) return;
      throw e;
    }
    logger.info(want ? 'Labelled node unreachable' : 'Removed unreachable label', { node: name, label: LABEL });
  }

  const worker = (async () => {
    for (let name = await queue.get(); name !== undefined; name = await queue.get()) {
      try {
        await reconcile(name);
        queue.forget(name);
      } catch (error) {
        logger.error('Labelling failed, will retry', { node: name, error });
        queue.addRateLimited(name);
      } finally {
        queue.done(name);
      }
    }
  })();
  return {
    async stop() {
      queue.shutDown();
      await worker;
      await nodes.stop();
    },
  };
}

/** The script: connects with the meshconfig given (or $MESHCONFIG) and runs until SIGINT or SIGTERM. */
async function main(): Promise<void> {
  const path = process.argv[2] ?? process.env.MESHCONFIG;
  if (!path) throw new Error('usage: label-unreachable.ts MESHCONFIG (or set $MESHCONFIG)');
  const client = createClient(loadMeshconfig(path));
  const labeler = await startLabeler({ client });
  const logger = createJsonLogger();
  logger.info('Started labeler', { label: LABEL });
  const stop = async (): Promise<void> => {
    await labeler.stop();
    client.close();
    logger.info('Stopped labeler', {});
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 1;
  });
}
