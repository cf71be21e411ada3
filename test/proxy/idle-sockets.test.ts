// Issue 23 F-F: sockets that never read and never close got a 408 and end(),
// then stayed half-open for as long as the peer liked (fds 28 → 177, still
// held after 74 s). They must be destroyed after the headers timeout. The
// peers here are paused sockets in this process: they never read (so they
// never see the server's FIN) and never close; only the server can let go.
import { readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startStack, until } from './stack.js';
import { hostOf, openSocket } from './raw.js';
import { sharedForAll } from '../kit/lifecycle.js';

// Long enough for every peer to be accepted before the first is let go, even on a busy machine.
const HEADERS_TIMEOUT_MS = 1000;
const PEERS = 150;

const stack = sharedForAll(() =>
  startStack({
    logFile: false,
    limits: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 2 * HEADERS_TIMEOUT_MS },
  }),
);

const openFds = () => readdirSync('/proc/self/fd').length;

describe('idle sockets', () => {
  it.skipIf(process.platform !== 'linux')(
    `${PEERS} peers that never read or close are destroyed after the headers timeout (fds back to baseline)`,
    async () => {
      const host = hostOf(stack.proxy.url);
      const baseline = openFds();
      const peers: Socket[] = [];
      try {
        // All at once: the proxy accepts them in a burst, so all are held together for a while.
        const opened = await Promise.all(Array.from({ length: PEERS }, () => openSocket(stack.proxy.url)));
        opened.forEach((socket, i) => {
          socket.on('error', () => undefined);
          // Half send an unfinished request head, half nothing at all; none ever reads.
          if (i % 2 === 0) socket.write(`GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nX-Slow: a`);
          socket.pause();
          peers.push(socket);
        });
        // Each connection holds two fds here: the peer's and the proxy's.
        await until(() => openFds() >= baseline + 2 * PEERS - 5 || undefined, 10_000, 'the proxy to accept every peer');
        // The proxy's side of every one is gone (the peers' own fds stay: they never close).
        const after = await until(
          () => {
            const n = openFds();
            return n <= baseline + PEERS + 5 ? n : undefined;
          },
          15_000,
          `the proxy to let go of ${PEERS} idle sockets (fds: ${openFds()}, baseline ${baseline})`,
        );
        expect(after).toBeLessThanOrEqual(baseline + PEERS + 5);
      } finally {
        for (const p of peers) p.destroy();
      }
      await until(() => openFds() <= baseline + 5 || undefined, 10_000, 'fds back to baseline');
    },
  );
});
