// A window attaches only to a proxy on its own upstream: loopgate.baseUrl is
// derived with the shared URL rules before it is compared with what the proxy reports.
import { describe, expect, it } from 'vitest';
import { upstreamMismatch, type ProxyHealth } from '../../extension/probe-proxy.js';

const health = (h: Partial<ProxyHealth>): ProxyHealth => ({
  loopgate: '0.1.0',
  pid: 4242,
  siteUrl: 'https://api.example.com',
  baseUrl: 'https://api.example.com/v1',
  simulator: false,
  ...h,
});

describe('upstreamMismatch', () => {
  it('accepts the same upstream however it was typed', () => {
    for (const typed of [
      'https://api.example.com',
      'https://api.example.com/v1',
      'https://api.example.com/v1/chat/completions',
      'https://api.example.com/',
    ]) {
      expect(upstreamMismatch(health({}), typed, 8787), typed).toBeUndefined();
    }
    expect(
      upstreamMismatch(
        health({ simulator: true, siteUrl: 'http://127.0.0.1:5000', baseUrl: 'http://127.0.0.1:5000/v1' }),
        undefined,
        8787,
      ),
    ).toBeUndefined();
  });

  it('names both upstreams and what to do when they differ', () => {
    const m = upstreamMismatch(health({}), 'https://other.example.org/v1', 8787);
    expect(m).toMatch(
      /^Port 8787 is used by a Loopgate proxy \(pid 4242\) that forwards to \{base_url\} https:\/\/api\.example\.com\/v1, but this window's loopgate\.baseUrl gives \{base_url\} https:\/\/other\.example\.org\/v1\./,
    );
    expect(m).toMatch(/loopgate serve.*set loopgate\.proxy\.port to another port/);
  });

  it('tells demo mode and a real upstream apart, both ways', () => {
    expect(upstreamMismatch(health({}), undefined, 8787)).toMatch(
      /forwards to \{base_url\} https:\/\/api\.example\.com\/v1, but loopgate\.baseUrl is empty here \(demo mode\)/,
    );
    expect(
      upstreamMismatch(
        health({ simulator: true, siteUrl: 'http://127.0.0.1:5000', baseUrl: 'http://127.0.0.1:5000/v1' }),
        'https://api.example.com',
        8787,
      ),
    ).toMatch(
      /runs the embedded simulator \(demo mode\), but this window's loopgate\.baseUrl gives \{base_url\} https:\/\/api\.example\.com\/v1/,
    );
  });
});
