// Probe of a Loopgate proxy already on the port (started by another window).

export interface ProxyHealth {
  loopgate: string;
  pid?: number;
  siteUrl: string;
  baseUrl: string;
  simulator: boolean;
}

/** Resolves to the health document, or undefined when what answers is not a Loopgate proxy that knows our token. */
export async function probeHealth(proxyUrl: string, token: string, timeoutMs = 3000): Promise<ProxyHealth | undefined> {
  try {
    const res = await fetch(`${proxyUrl}/_loopgate/health`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    if (res.status !== 200) return undefined;
    const body = (await res.json()) as Partial<ProxyHealth>;
    if (typeof body.loopgate !== 'string') return undefined;
    return {
      loopgate: body.loopgate,
      pid: body.pid,
      siteUrl: String(body.siteUrl ?? ''),
      baseUrl: String(body.baseUrl ?? ''),
      simulator: Boolean(body.simulator),
    };
  } catch {
    return undefined;
  }
}
