// The processes of a local mesh (`npm start`) that are not its children: the pid file that says a local mesh
// runs in this MESHCTL_HOME, and the services an agent killed with `kill -9` left running (re-parented to PID
// 1), found by the pid records its supervisor keeps in <state-dir>/services/*.json. Plain JavaScript, as
// hack/local-mesh.mjs runs without tsx; the same-process check is agent/drivers/process-record.ts's
// isSameProcess (pid, start time and boot id), so a pid reused by another process is never signalled.
import { openSync, readdirSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/** Field 22 of /proc/<pid>/stat and the state, or undefined when there is no such process. */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], startTime: fields[19] };
  } catch {
    return undefined;
  }
}

function bootId() {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether a pid record still names the live process it recorded. */
function isRecordedProcess(rec) {
  if (rec.bootId !== undefined && rec.bootId !== bootId()) return false;
  const st = procStat(rec.pid);
  return !!st && st.state !== 'Z' && st.state !== 'X' && st.startTime === rec.startTime;
}

function isAlive(pid) {
  const st = procStat(pid);
  return !!st && st.state !== 'Z' && st.state !== 'X';
}

/** The pid records of an agent's supervised services. */
function serviceRecords(stateDir) {
  let names;
  try {
    names = readdirSync(join(stateDir, 'services')).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      return [JSON.parse(readFileSync(join(stateDir, 'services', n), 'utf8'))];
    } catch {
      return [];
    }
  });
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal); // a service leads its own process group (agent/drivers/process-spawn.ts)
  } catch {
    /* already gone */
  }
}

/**
 * Stops every recorded service of these state dirs that is still running — SIGTERM to its process group,
 * SIGKILL after `graceMs` — and resolves with what it stopped: `[{ node, id, pid }]`.
 */
export async function stopRecordedServices(stateDirs, graceMs = 5000) {
  const running = Object.entries(stateDirs).flatMap(([node, dir]) =>
    serviceRecords(dir)
      .filter(isRecordedProcess)
      .map((rec) => ({ node, id: rec.id, pid: rec.pid })),
  );
  for (const s of running) signalGroup(s.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (running.some((s) => isAlive(s.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const s of running) if (isAlive(s.pid)) signalGroup(s.pid, 'SIGKILL');
  return running;
}

/**
 * Takes `<home>/local-mesh.pid` for this process. Returns the pid of the local mesh that already runs in
 * `home` (the file names a live `local-mesh.mjs`), or undefined once the file is ours. A stale file is replaced.
 */
export function claimHome(home) {
  const file = join(home, 'local-mesh.pid');
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return undefined;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    const pid = Number(readFileSync(file, 'utf8').trim());
    let argv = '';
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      /* not running */
    }
    if (pid > 0 && isAlive(pid) && argv.includes('local-mesh.mjs')) return pid;
    try {
      unlinkSync(file);
    } catch {
      /* another start took it first: try again */
    }
  }
}

/** Removes `<home>/local-mesh.pid` if it is ours. */
export function releaseHome(home) {
  const file = join(home, 'local-mesh.pid');
  try {
    if (Number(readFileSync(file, 'utf8').trim()) === process.pid) unlinkSync(file);
  } catch {
    /* gone */
  }
}
