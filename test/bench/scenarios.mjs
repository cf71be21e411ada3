// Run sizes. quick stays under two minutes on the 2-core machine; full takes
// a few minutes more and pools more rounds. Every loop is bounded in count and time.
export const CONFIGS = {
  quick: {
    hardLimitS: 170,
    latency: { rounds: 3, warmup: 150, requests: 400 },
    throughput: { rounds: 2, warmupMs: 500, durationMs: 2000 },
    sse: {
      c1: { streams: 1, repeat: 3, rounds: 2, delayMs: 10 },
      c100: { streams: 100, repeat: 1, rounds: 2, delayMs: 10, rampMs: 250 },
      c1000: { streams: 1000, repeat: 1, rounds: 2, delayMs: 50, rampMs: 1000 },
    },
    big: { rounds: 1 },
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
  },
};
