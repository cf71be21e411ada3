// Issue 23 F-K: with the log on, a request sent the moment the port accepted
// got `403 … answers only to 127.0.0.1:0`: the Host guard learnt the port only
// after the log had opened. Clients are started before the proxy and hammer
// the port until it is connectable; every answer must be the real one.
import { connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { KEYS, TOKEN, until } from './stack.js';
import { freePort } from '../cli/io.js';

interface Answer {
  status: number;
  /** The connection was accepted before startProxy had returned. */
  early: boolean;
}

/** One request on a fresh connection, retried while the port refuses connections; resolves with the status line's code. */
function askWhenConnectable(port: number, isStarted: () => boolean, stop: () => boolean): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const attempt = () => {
      if (stop()) return resolve(undefined);
      const socket = connect(port, '127.0.0.1');
      let text = '';
      let early = false;
      socket.on('connect', () => {
        early = !isStarted();
        socket.write(
          `GET /_loopgate/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`,
        );
      });
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (m) resolve({ status: Number(m[1]), early });
        else setImmediate(attempt); // refused (not listening yet): try again at once
      });
    };
    attempt();
  });
}

let sim: Simulator | undefined;
let proxy: RunningProxy | undefined;
afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

describe('the first requests after start', () => {
  it('a request sent the moment the port accepts is served, not refused by the Host guard (log on)', async () => {
    sim = await startSimulator({ port: 0 });
    const port = await freePort();
    // A log in a folder that does not exist yet: opening it takes several file-system round trips.
    const logFile = join(mkdtempSync(join(tmpdir(), 'loopgate-first-')), 'new', 'dir', 'traffic.jsonl');
    let started = false;
    let giveUp = false;
    const clients = Array.from({ length: 16 }, () =>
      askWhenConnectable(
        port,
        () => started,
        () => giveUp,
      ),
    );
    proxy = await startProxy({
      upstream: sim.baseUrl,
      key: KEYS.default,
      token: TOKEN,
      port,
      allowHttp: true,
      logFile,
    });
    started = true;
    const timer = setTimeout(() => (giveUp = true), 10_000);
    const answers = (await Promise.all(clients)).filter((a): a is Answer => a !== undefined);
    clearTimeout(timer);
    expect(answers).toHaveLength(16);
    // The race really was run: connections were accepted while startProxy was still opening the log.
    expect(answers.filter((a) => a.early).length).toBeGreaterThan(0);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // And every one of them is in the log.
    await until(() => proxy!.stats.requests >= 16 || undefined, 5000, 'the requests counted');
  });
});
