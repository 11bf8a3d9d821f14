/**
 * Probe preload (issue 14): which allocations of a running control plane live long enough to be promoted to V8's
 * old space and then die there — the garbage its full collections free. Load it into the control plane of a probe,
 * e.g. `SCALE_CP_NODE_ARGS="--require ./bench/heap-sample.cjs" N=5000 node --import tsx bench/hb-probe.ts`; then
 * `kill -USR2 <control-plane pid>` starts V8's sampling heap profiler (a sample every 16 KiB allocated), keeping the
 * samples of objects a full collection freed and dropping those a scavenge freed, and the next SIGUSR2 writes the
 * samples, by allocation stack, to `HEAP_SAMPLE_OUT` (default `control-plane.heapprofile` in the control plane's
 * directory), a file Chrome DevTools' Memory tab opens. Objects still alive when it is written are in it too.
 * CommonJS, so that `--require` loads it into the bundle as shipped.
 */
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');

const out = process.env.HEAP_SAMPLE_OUT || 'control-plane.heapprofile';
const session = new inspector.Session();
session.connect();
let sampling = false;
const report = (what) => (e) => process.stderr.write(`heap-sample: ${what}${e ? `: ${e.message}` : ''}\n`);

process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    const params = {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    };
    session.post('HeapProfiler.startSampling', params, report('started'));
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (e, r) => {
    if (e) return report('stopping failed')(e);
    writeFileSync(out, JSON.stringify(r.profile));
    report(`wrote ${out}`)();
  });
});
