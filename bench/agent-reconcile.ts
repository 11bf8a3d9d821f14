/**
 * Benchmark 5: an agent's no-op reconcile of 1,000 owned resources. The agent's real engine (createEngine
 * with the real driver registry, process supervisor and durable agent store, wired as agent/agent.ts wires
 * them) applies a stored Declaration of 100 Directories and 900 Files once, then reconciles it again and
 * again with nothing to do: each run observes all 1,000 (lstat, and the content hash when lstat cannot vouch
 * for it), plans, and finds only no-ops.
 * Run alone: `node --import tsx bench/agent-reconcile.ts` prints the markdown section.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../api/meta/logger.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import { declaredResources } from '../agent/declared-resources.ts';
import { createProcessSupervisor } from '../agent/drivers/process-supervisor.ts';
import { createDriverRegistry } from '../agent/drivers/registry.ts';
import { createEngine, type Engine, type ReconcileResult } from '../agent/engine/reconciler.ts';
import { openAgentStore, type AgentStore } from '../agent/store/agent-store.ts';
import { isMain } from './lib/child.ts';
import { dfLine } from './lib/machine.ts';
import { ms, summarize, verdict } from './lib/stats.ts';

const OWNERS = 10;
const DIRS_PER_OWNER = 10;
const FILES_PER_DIR = 9;
const WARMUP = 5;
const RUNS = 200;
const COLD_RUNS = 5;
const TARGET_MS = 50;

/** A Declaration as the controller renders it: 10 assignments × 10 directories × (the directory + 9 files). */
function declaration(): Declaration {
  const resources: DeclaredResource[] = [];
  for (let a = 0; a < OWNERS; a++) {
    const owner = `app-${a}-on-bench`;
    for (let d = 0; d < DIRS_PER_OWNER; d++) {
      const dir = `/srv/app-${a}/d${d}`;
      resources.push({ id: `${owner}/d${d}`, owner, kind: 'Directory', spec: { path: dir, mode: '0755' } });
      for (let f = 0; f < FILES_PER_DIR; f++) {
        const content = `# app ${a}, dir ${d}, file ${f}\n${`key${f}=value-${a}-${d}-${f}\n`.repeat(24)}`;
        resources.push({
          id: `${owner}/d${d}-f${f}`,
          owner,
          kind: 'File',
          dependsOn: [`${owner}/d${d}`],
          spec: { path: `${dir}/f${f}.conf`, content, mode: '0644' },
        });
      }
    }
  }
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: 'bench', uid: '00000000-0000-4000-8000-000000000001', generation: 1, resourceVersion: '1' },
    spec: { generation: 1, resources },
  };
}

/** The engine as the agent assembles it, over the agent's store. */
interface Parts {
  store: AgentStore;
  engine: Engine;
  close(): Promise<void>;
}

async function assemble(stateDir: string, root: string): Promise<Parts> {
  const store = await openAgentStore({ stateDir, logger: silentLogger });
  const supervisor = createProcessSupervisor({ stateDir, logger: silentLogger });
  const engine = createEngine({
    drivers: createDriverRegistry({ supervisor }),
    ctx: { root, stateDir, logger: silentLogger },
    loadInventory: async () => store.inventory(),
    saveInventory: (_all, change) => store.applyInventoryChange(change),
  });
  return {
    store,
    engine,
    close: async () => {
      supervisor.close();
      await store.close();
    },
  };
}

function checkNoop(r: ReconcileResult, n: number): void {
  if (r.steps.length !== n || !r.steps.every((s) => s.action === 'noop') || r.counts.Applied !== n) {
    throw new Error(
      `not a no-op reconcile: ${JSON.stringify(r.counts)}, ${r.steps.filter((s) => s.action !== 'noop').length} other steps`,
    );
  }
}

/** What the section reports. */
interface Figures {
  created: ReconcileResult;
  runs: ReconcileResult[];
  cold: ReconcileResult[];
  owned: number;
  dir: string;
}

async function measure(dir: string): Promise<Figures> {
  const stateDir = join(dir, 'state');
  const root = join(dir, 'root');
  mkdirSync(stateDir);
  mkdirSync(root);
  let parts = await assemble(stateDir, root);
  try {
    await parts.store.saveDeclaration(declaration());
    const resources: DeclaredResource[] = declaredResources(parts.store.declaration()!.object);
    const created = await parts.engine.reconcile(resources);
    if (created.counts.Applied !== resources.length)
      throw new Error(`initial apply: ${JSON.stringify(created.counts)}`);
    const runs: ReconcileResult[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const r = await parts.engine.reconcile(resources);
      checkNoop(r, resources.length);
      if (i >= WARMUP) runs.push(r);
    }
    const cold: ReconcileResult[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      await parts.close();
      parts = await assemble(stateDir, root);
      const r = await parts.engine.reconcile(declaredResources(parts.store.declaration()!.object));
      checkNoop(r, resources.length);
      cold.push(r);
    }
    return { created, runs, cold, owned: (await parts.engine.inventory()).length, dir };
  } finally {
    await parts.close();
  }
}

function render(f: Figures): string {
  const total = summarize(f.runs.map((r) => r.durationMs));
  const phase = (k: keyof ReconcileResult['timings']) => summarize(f.runs.map((r) => r.timings[k]));
  const [obs, plan, apply] = [phase('observeMs'), phase('planMs'), phase('applyMs')];
  const cold = summarize(f.cold.map((r) => r.durationMs));
  return [
    `## 5. Agent: no-op reconcile of ${f.owned.toLocaleString('en-US')} owned resources`,
    '',
    "The agent's engine as agent/agent.ts assembles it (`createEngine` with `createDriverRegistry` and its process supervisor, the",
    "inventory in the agent's durable store `openAgentStore`), in this process, under a temp root",
    `(\`${dfLine(tmpdir())}\`). A stored Declaration of ${OWNERS} assignments × ${DIRS_PER_OWNER} Directories × (the directory + ${FILES_PER_DIR} Files of`,
    `~0.5 KiB) = ${f.owned.toLocaleString('en-US')} resources, turned into the engine's resources by \`declaredResources\`, was applied once (${(f.created.durationMs / 1000).toFixed(1)} s, one durable`,
    `inventory write per resource); then reconciled ${RUNS} more times after ${WARMUP} warm-up runs, each run checked to be all no-ops with`,
    `every resource Applied. A run observes every resource (lstat; a File's content is read and hashed only when its lstat facts`,
    "differ from those recorded after its apply), plans, and applies nothing. Times are the engine's own `durationMs`.",
    '',
    '| no-op reconcile of 1,000 resources (ms) | p50 | p99 | max |',
    '|---|---|---|---|',
    `| **whole reconcile** (${RUNS} runs) | **${ms(total.p50)}** | **${ms(total.p99)}** | ${ms(total.max)} |`,
    `| observe | ${ms(obs.p50)} | ${ms(obs.p99)} | ${ms(obs.max)} |`,
    `| plan | ${ms(plan.p50)} | ${ms(plan.p99)} | ${ms(plan.max)} |`,
    `| apply (nothing to do) | ${ms(apply.p50)} | ${ms(apply.p99)} | ${ms(apply.max)} |`,
    `| first reconcile after an agent restart (store reopened, inventory reloaded; ${COLD_RUNS} restarts) | ${ms(cold.p50)} | ${ms(cold.p99)} | ${ms(cold.max)} |`,
    '',
    'Target (issue 3), a no-op reconcile of 1,000 owned resources:',
    '',
    `- no-op reconcile of 1,000 owned resources, p99 ≤ ${TARGET_MS} ms: ${ms(total.p99)} ms (p50 ${ms(total.p50)}, max ${ms(total.max)}) — ${verdict(total.p99 <= TARGET_MS)}`,
  ].join('\n');
}

/** Runs the benchmark in a temp dir (removed afterwards) and renders the section. */
export async function agentReconcileSection(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-bench-reconcile-'));
  try {
    return render(await measure(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write((await agentReconcileSection()) + '\n');
}
