// The relaxed build beside simd128 in headless Chromium (make bench): the Q4_0 . Q8_0 matvec at
// 4096 columns (ROWS rows, default 1024 and 4096) and the other relaxed matvecs (Q4_1, Q5_0, Q5_1,
// MXFP4, IQ4_NL, Q2_K..Q6_K; 1024 rows; FMTS=q6_K,q5_K times only those); median ms per call, the ratio
// simd128 / relaxed, and the ratio to the relaxed build's own SIMD128 kernel (same compiler, so
// the relaxed dot alone).
// Runs tests/relaxed/page.js with ?bench=1; the two builds' outputs must be the same bits.
import { runPage } from '../tests/relaxed/run.js';

const rowsList = process.env.ROWS ? [Number(process.env.ROWS)] : [1024, 4096];
const others = (
  process.env.FMTS
    ? process.env.FMTS.split(',')
    : ['q4_1', 'q5_0', 'q5_1', 'mxfp4', 'iq4_nl', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K']
).map((f) => [f, rowsList[0]]);
const q40 = process.env.FMTS ? [] : rowsList.map((n) => ['q4_0', n]);
for (const [fmt, rows] of [...q40, ...others]) {
  const r = await runPage(`?bench=1&fmt=${fmt}&rows=${rows}`);
  if (r.error || !r.sameOutput || r.relaxed?.backend !== 'relaxed') {
    console.error('relaxed bench failed:', JSON.stringify(r));
    process.exit(1);
  }
  console.log(
    `${r.pair} ${rows}x${r.cols} in Chromium: relaxed ${r.relaxed.ms.toFixed(3)} ms, ` +
      `simd128 ${r.simd128.ms.toFixed(3)} ms (${r.ratio.toFixed(2)}x); ` +
      `the relaxed build's SIMD128 kernel ${r.relaxedBuildSimd128.ms.toFixed(3)} ms (${r.ratioSameBuild.toFixed(2)}x)`,
  );
}

// The relaxed threads build: init({ threads: 2 }) against one relaxed thread, 4096x4096, alternating
// rounds (tests/relaxed/threads.js ?bench=1; both must give the same bits).
const rt = await runPage('?bench=1', 'threads.html');
if (rt.error || rt.backend !== 'relaxed' || rt.threads !== 2) {
  console.error('relaxed threads bench failed:', JSON.stringify(rt));
  process.exit(1);
}
for (const [t, r] of Object.entries(rt.types)) {
  if (r.rowsDiffering !== 0) {
    console.error(`relaxed threads ${t}: ${r.rowsDiffering} rows differ from one relaxed thread`);
    process.exit(1);
  }
  console.log(
    `${t} 4096x4096 in Chromium: relaxed threads, 2 threads ${r.twoMs.toFixed(3)} ms, one relaxed thread ` +
      `${r.oneMs.toFixed(3)} ms (${r.ratio.toFixed(2)}x median, ${r.minRatio.toFixed(2)}x fastest)`,
  );
}
