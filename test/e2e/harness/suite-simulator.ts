// The simulator a suite's describe block talks to: started before its tests,
// closed after them.
import { afterAll, beforeAll } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../simulator/index.js';

/** Call inside a describe: returns the getter of a simulator on a free port, up while the block's tests run. */
export function simulatorForSuite(opts: SimulatorOptions = {}): () => Simulator {
  let sim: Simulator | undefined;
  beforeAll(async () => {
    sim = await startSimulator({ ...opts, port: 0 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  return () => {
    if (!sim) throw new Error('the suite simulator did not start: see the hook error above');
    return sim;
  };
}
