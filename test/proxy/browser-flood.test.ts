// Issue 31 §4 G-3: any web page could flood the traffic ring. `<img src="http://127.0.0.1:P/v1/models?note=…">`
// carries no token and no Origin, passed the Host/Origin guard, got 401 and was kept: 520 of them evicted all of
// the user's rows and planted 500 of the page's choosing. Credential-less browser requests (Sec-Fetch-Site
// cross-site/same-site, Sec-Fetch-Mode no-cors/navigate) are now refused (403 browser-request) and never recorded:
// no ring row, no log line, no console line; /_loopgate/stats counts them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, TOKEN, until, type Stack } from './stack.js';

const CHROMIUM = '/usr/bin/chromium';

/** What Chromium 156 (headless, /usr/bin/chromium here) sent for an `<img>` on a localhost page, header for header. */
const IMG_HEADERS = {
  'sec-ch-ua-platform': '"Linux"',
  'user-agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36',
  'sec-ch-ua': '"Not:A-Brand";v="8", "Chromium";v="156"',
  'sec-ch-ua-mobile': '?0',
  accept: 'image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8',
  'sec-fetch-site': 'cross-site',
  'sec-fetch-mode': 'no-cors',
  'sec-fetch-dest': 'image',
  'sec-fetch-storage-access': 'none',
  referer: 'http://localhost:35897/',
  'accept-encoding': 'gzip, deflate, br, zstd',
  'accept-language': 'en-US,en;q=0.9',
};

let s: Stack;
const agent = new Agent({ connections: 8 });

beforeAll(async () => {
  // The default ring: 500 rows.
  s = await startStack();
});
afterAll(async () => {
  await agent.close();
  await s.close();
});

/** The user's own traffic: a few real requests with the token. */
async function userRows(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { response } = await s.openai().models.list().withResponse();
    ids.push(response.headers.get('x-loopgate-request-id')!);
  }
  return ids;
}

function ringPaths(): string[] {
  return s.proxy.traffic!.list().map((e) => e.record.path);
}

describe("a web page cannot plant rows or evict the user's", () => {
  it("600 image requests with the headers Chromium sends: all refused, none kept, the user's rows stay", async () => {
    const mine = await userRows(3);
    const before = s.proxy.stats.browserRefused;
    const linesBefore = s.traffic.length;
    const statuses: string[] = await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        const res = await request(`${s.proxy.url}/v1/models?note=planted-${i}`, {
          headers: { ...IMG_HEADERS, host: `127.0.0.1:${s.proxy.port}` },
          dispatcher: agent,
        });
        const body = await res.body.text();
        return `${res.statusCode} ${JSON.parse(body).error.code}`;
      }),
    );
    // Navigations too (a link, a form, the address bar), same-site pages (another port of 127.0.0.1) and no-cors fetch().
    for (const headers of [
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
    ]) {
      const res = await request(`${s.proxy.url}/v1/models?note=planted-nav`, { headers, dispatcher: agent });
      await res.body.text();
      statuses.push(`${res.statusCode} ${res.headers['x-loopgate-diagnosis']}`);
    }
    // One more request of the user's: it is recorded (so the log has caught up), and nothing of the page's is.
    mine.push(...(await userRows(1)));
    await until(() => (readFileSync(s.logFile, 'utf8').includes(mine.at(-1)!) ? true : undefined), 5000, 'the log');
    expect(ringPaths().filter((p) => p.includes('planted'))).toEqual([]);
    const ids = s.proxy.traffic!.list().map((e) => e.record.id);
    for (const id of mine) expect(ids).toContain(id);
    expect(readFileSync(s.logFile, 'utf8')).not.toContain('planted');
    expect(s.traffic.slice(linesBefore).join('\n')).not.toContain('planted');
    expect(new Set(statuses)).toEqual(new Set(['403 browser-request']));
    expect(s.proxy.stats.browserRefused - before).toBe(604);
    // Told once, not per request.
    expect(s.hints.filter((h) => h.includes('web page')).length).toBe(1);
    // The stats show the count.
    const stats = await request(`${s.proxy.url}/_loopgate/stats`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      dispatcher: agent,
    });
    expect((await stats.body.json()) as { browserRefused: number }).toMatchObject({
      browserRefused: s.proxy.stats.browserRefused,
    });
  });

  it("a request with the token is served as before, whatever its Sec-Fetch headers (the SDKs' fetch sends Sec-Fetch-Mode: cors)", async () => {
    const res = await request(`${s.proxy.url}/v1/models`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'sec-fetch-mode': 'cors' },
      dispatcher: agent,
    });
    await res.body.text();
    expect(res.statusCode).toBe(200);
  });

  it.skipIf(!existsSync(CHROMIUM))(
    'a real Chromium page on another origin with 30 images plants nothing',
    async () => {
      const before = s.proxy.stats.browserRefused;
      const target = `http://127.0.0.1:${s.proxy.port}/v1/models`;
      const images = Array.from({ length: 30 }, (_, i) => `<img src="${target}?note=chromium-planted-${i}">`).join(
        '\n',
      );
      const site: Server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><html><body>${images}</body></html>`);
      });
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      // localhost vs 127.0.0.1: another site, as a page on a dev server or anywhere else would be.
      const pageUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
      });
      try {
        const page = await browser.newPage();
        await page.goto(pageUrl);
        // Every image settled (each fails to load: the answer is JSON, and a 403).
        await page.waitForFunction('[...document.images].every((img) => img.complete)', undefined, { timeout: 20_000 });
      } finally {
        await browser.close();
        await new Promise((r) => site.close(r));
      }
      // A request of the user's after them: once it is logged, theirs would be too.
      const [mine] = await userRows(1);
      await until(() => (readFileSync(s.logFile, 'utf8').includes(mine!) ? true : undefined), 5000, 'the log');
      expect(ringPaths().filter((p) => p.includes('chromium-planted'))).toEqual([]);
      expect(readFileSync(s.logFile, 'utf8')).not.toContain('chromium-planted');
      expect(s.proxy.stats.browserRefused - before).toBe(30);
    },
    60_000,
  );
});
