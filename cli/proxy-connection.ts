// Finding a running proxy for the commands that talk to one (`tail`, `show`,
// `replay`): --proxy URL, else --port/--host, else 127.0.0.1:8787, as `run`
// and `doctor --proxy` find it. The local token is sent only to a proxy that
// proved it knows it (the health challenge), so a program squatting on the
// port learns nothing; a --no-token proxy cannot prove that and is used only
// when the user says so (--no-token), as `run` does.
import { isIP } from 'node:net';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { proxyOrigin } from '../rules/addresses/urls.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';
import { EXIT, UsageError, type Io } from './command.js';
import { checkProxy } from './health-probe.js';
import { portOption } from './int-options.js';
import { localApi, type LocalApiClient } from '../client/local-api-client.js';
import { LOCAL_PATHS } from '../core/local-api.js';

/** What a --no-token proxy is sent instead of the token: it accepts any credential. */
const NO_TOKEN_PLACEHOLDER = 'loopgate-no-token';

export const CONNECTION_OPTIONS = {
  proxy: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'no-token': { type: 'boolean' },
} as const;

export const CONNECTION_USAGE = `  --proxy URL    The proxy's address (default http://${DEFAULT_HOST}:${DEFAULT_PORT}, as serve's banner shows).
  --port N       Its port on ${DEFAULT_HOST}, instead of --proxy.
  --host ADDR    Its loopback address, with --port.
  --no-token     Accept a proxy started with --no-token (it cannot prove it is Loopgate).`;

export interface ProxyConnection {
  url: string;
  /** What goes in `Authorization: Bearer`: the local token, or a placeholder for a --no-token proxy. */
  credential: string;
}

/** The proxy's own API (the traffic ring, …) on this connection. */
export function localApiOf(conn: ProxyConnection): LocalApiClient {
  return localApi({ url: conn.url, token: conn.credential });
}

/** The proxy address the options give (--proxy URL, else --port/--host, else the default). */
export function proxyUrlOf(values: { proxy?: string; port?: string; host?: string }): string {
  if (values.proxy !== undefined) {
    if (values.port !== undefined || values.host !== undefined)
      throw new UsageError('give --proxy URL, or --port/--host, not both.');
    let u: URL;
    try {
      u = new URL(values.proxy);
    } catch {
      throw new UsageError(`--proxy must be a URL like http://127.0.0.1:8787 (got "${values.proxy.slice(0, 100)}").`);
    }
    if (u.protocol !== 'http:')
      throw new UsageError(
        '--proxy: Loopgate listens on plain http on a loopback address, e.g. http://127.0.0.1:8787.',
      );
    // The proof holds for the address that gave it; a host name could resolve elsewhere for the requests that follow.
    if (isIP(u.hostname.replace(/^\[|\]$/g, '')) === 0)
      throw new UsageError(
        `--proxy takes an IP address, as serve prints it (http://${DEFAULT_HOST}:${DEFAULT_PORT}), not a host name.`,
      );
    return u.origin;
  }
  const port = portOption(values.port) ?? DEFAULT_PORT;
  if (port === 0) throw new UsageError('--port: give the port the proxy listens on (serve prints it), not 0.');
  const host = values.host ?? DEFAULT_HOST;
  if (isIP(host.replace(/^\[|\]$/g, '')) === 0)
    throw new UsageError(`--host takes an IP address such as ${DEFAULT_HOST}, not a host name.`);
  return proxyOrigin(host, port);
}

/** The proxy to talk to, or the exit code after a message that says what to do. */
export async function connectToProxy(
  name: string,
  values: { proxy?: string; port?: string; host?: string; 'no-token'?: boolean },
  io: Io,
): Promise<ProxyConnection | number> {
  const url = proxyUrlOf(values);
  const token = loadOrCreateToken(io.env);
  const check = await checkProxy(url, token);
  if (check.kind === 'unreachable') {
    io.err(
      `loopgate ${name}: no Loopgate proxy answers on ${url} (${check.reason}). Start one with \`loopgate serve\`, or pass --proxy/--port where it listens.`,
    );
    return EXIT.config;
  }
  if (check.kind === 'unproven') {
    io.err(
      `loopgate ${name}: something answers on ${url}${check.status ? ` (HTTP ${check.status} on ${LOCAL_PATHS.health})` : ''} but it is not a Loopgate proxy that knows this local token, so the token was not sent. ` +
        'Was the proxy started with another LOOPGATE_HOME or LOOPGATE_TOKEN? Or pass --proxy/--port where `loopgate serve` listens.',
    );
    return EXIT.config;
  }
  if (!check.requireToken && !values['no-token']) {
    io.err(
      `loopgate ${name}: what answers on ${url} says it is a Loopgate proxy started with --no-token, which cannot prove it. If you started it so, add --no-token; otherwise something else holds the port.`,
    );
    return EXIT.config;
  }
  return { url, credential: check.requireToken ? token : NO_TOKEN_PLACEHOLDER };
}
