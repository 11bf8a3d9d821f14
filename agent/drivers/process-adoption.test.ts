import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createProcessSupervisor } from './process-supervisor.ts';
import { logPath } from './log-file.ts';
import { procArgv } from './process-record.ts';
import { memoryLogger, tempHost } from '../engine/testing.ts';
import { eventually } from '../../test/eventually.ts';

const supervisorModule = fileURLToPath(new URL('./process-supervisor.ts', import.meta.url));
const tick = "setInterval(() => console.log('tick ' + Date.now()), 20)";

/** Runs a throw-away "agent" process that starts one service through its own supervisor, prints its pid. */
function agentProcess(stateDir: string) {
  const code = `
    const { createProcessSupervisor } = await import(${JSON.stringify(supervisorModule)});
    const sup = createProcessSupervisor({ stateDir: ${JSON.stringify(stateDir)}, logger: { info() {}, error() {} } });
    const st = await sup.ensure('svc', { command: [process.execPath, '-e', ${JSON.stringify(tick)}], env: {}, cwd: '/', restart: 'always', fingerprint: 'f1' });
    console.log(JSON.stringify({ pid: st.pid }));
    setInterval(() => {}, 1e9);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pid = new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { pid: number }).pid);
    });
    child.on('exit', (code) => reject(new Error(`agent process exited early (${code})`)));
  });
  return { child, pid };
}

const isAlive = (pid: number): boolean => (procArgv(pid) ?? []).length > 0;

test('process: after the agent is SIGKILLed, its service keeps running and logging, and a new agent adopts it', async () => {
  const h = tempHost();
  const agent = agentProcess(h.stateDir);
  let servicePid: number | undefined;
  const sup = createProcessSupervisor({ stateDir: h.stateDir, logger: memoryLogger(), pollMs: 50, stopGraceMs: 500 });
  try {
    const pid = await agent.pid;
    servicePid = pid;
    agent.child.kill('SIGKILL');
    await new Promise((r) => agent.child.once('exit', r));
    const size = statSync(logPath(h.stateDir, 'svc')).size;
    // Waited for, not slept: on a loaded machine the service's next line may come hundreds of ms later.
    await eventually(async () => {
      assert.ok(isAlive(pid), 'the service outlived its agent');
      assert.ok(statSync(logPath(h.stateDir, 'svc')).size > size, 'and still writes its log file');
    });
    const st = await sup.ensure('svc', {
      command: [process.execPath, '-e', tick],
      env: {},
      cwd: '/',
      restart: 'always',
      fingerprint: 'f1',
    });
    assert.equal(st.pid, servicePid, 'adopted, not started twice');
    assert.equal(st.adopted, true);
    await sup.stop('svc');
    assert.equal(isAlive(servicePid), false, 'the adopted process is stopped by its recorded pid');
    assert.match(readFileSync(logPath(h.stateDir, 'svc'), 'utf8'), /tick \d+/);
  } finally {
    sup.close();
    agent.child.kill('SIGKILL');
    if (servicePid !== undefined && isAlive(servicePid)) process.kill(servicePid, 'SIGKILL');
    h.cleanup();
  }
});
