/**
 * A stand-in agent for the list-storm benchmark, in its own process as a real agent is (so the storm's
 * 1,000 readers in the benchmark process do not starve it): with the real client (api/client, which honours
 * `Retry-After` and retries a request that met a kept-alive socket the server had closed), it reads its Node
 * and merge-patches its status in a loop until its stdin ends, then prints `{"ok":N,"failed":N,"why":{…}}`.
 * Environment: STORM_SERVER, STORM_TOKEN, STORM_NODE.
 */
import { createClient } from '../../api/client/http-client.ts';
import { ApiError } from '../../api/meta/api-error.ts';

const client = createClient({ server: String(process.env.STORM_SERVER), token: process.env.STORM_TOKEN });
const name = String(process.env.STORM_NODE);
const counts = { ok: 0, failed: 0, why: {} as Record<string, number> };
let running = true;
process.stdin.on('end', () => (running = false)).resume();

async function counted(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
    counts.ok++;
  } catch (e) {
    counts.failed++;
    const why = e instanceof ApiError ? `${e.code} ${e.reason}` : ((e as { code?: string }).code ?? String(e));
    counts.why[why] = (counts.why[why] ?? 0) + 1;
  }
}

while (running) {
  await counted(() => client.get('nodes', name));
  await counted(() => client.patch('nodes', name, { status: { conditions: [] } }, { subresource: 'status' }));
}
client.close();
process.stdout.write(JSON.stringify(counts) + '\n');
