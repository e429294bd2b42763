// Preloaded (`node -r`) by bench/claims-batch.mjs under CLAIMS_BENCH_ALLOC: samples every allocation
// of the process, the objects the garbage collector already took included, and writes the sampled
// profile to $CLAIMS_BENCH_ALLOC_OUT/heap-<pid>.json at exit (the batch's own process is the largest).
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const out = process.env.CLAIMS_BENCH_ALLOC_OUT;
if (out) {
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  process.on('exit', () => {
    // The inspector answers a session of the same thread at once, so the profile is written before the process ends.
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(join(out, `heap-${process.pid}.json`), JSON.stringify(result.profile));
    });
  });
}
