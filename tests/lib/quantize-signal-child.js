// tests/model-signals.test.js's child: quantizes IN to OUT (Q8_0) as a command line would, with
// trapSignals(): prints "writing" at the first progress call, and on a signal exits with the
// signal's status once quantizeModel has removed its temporary file. argv: IN OUT
import { quantizeModel, trapSignals, Interrupted } from '../../js/node.js';

const [input, output] = process.argv.slice(2);
const trap = trapSignals();
let said = false;
try {
  await quantizeModel(input, output, {
    ftype: 'Q8_0',
    signal: trap.signal,
    onProgress: () => {
      if (!said) console.log('writing');
      said = true;
    },
  });
  console.log('done');
} catch (e) {
  if (!(e instanceof Interrupted)) throw e;
  console.log(`stopped by ${e.signal}`);
  process.exitCode = e.status;
} finally {
  trap.release();
}
