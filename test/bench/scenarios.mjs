// Run sizes. quick stays well under its hard limit on the 2-core machine; full takes
// a few minutes more and pools more rounds. Every loop is bounded in count and time.
export const CONFIGS = {
  quick: {
    hardLimitS: 240,
    // Sized for the undici-fwd target added: on the shared 2-core machine at
    // its slowest (c=1 p50 direct ~0.7 ms) a run takes about 140 s. c=1000 has
    // one round here (each of its runs takes ~6 s there); full pools three.
    latency: { rounds: 3, warmup: 80, requests: 250 },
    throughput: { rounds: 2, warmupMs: 300, durationMs: 1500 },
    sse: {
      c1: { streams: 1, repeat: 2, rounds: 2, delayMs: 10 },
      c100: { streams: 100, repeat: 1, rounds: 2, delayMs: 10, rampMs: 250 },
      c1000: { streams: 1000, repeat: 1, rounds: 1, delayMs: 50, rampMs: 1000 },
    },
    big: { rounds: 1 },
    soak: { requests: 2000 },
    otlp: { rounds: 3, warmupMs: 300, durationMs: 1500 },
  },
  full: {
    hardLimitS: 900,
    latency: { rounds: 5, warmup: 300, requests: 2000 },
    throughput: { rounds: 5, warmupMs: 500, durationMs: 3000 },
    sse: {
      c1: { streams: 1, repeat: 10, rounds: 3, delayMs: 10 },
      c100: { streams: 100, repeat: 2, rounds: 3, delayMs: 10, rampMs: 250 },
      c1000: { streams: 1000, repeat: 1, rounds: 3, delayMs: 50, rampMs: 1000 },
    },
    big: { rounds: 2 },
    soak: { requests: 10_000 },
    otlp: { rounds: 5, warmupMs: 500, durationMs: 3000 },
  },
};
