import { request } from 'undici';
import { EXIT, type Command, type Io } from './command.js';
import { parseUpstream } from '../rules/addresses/urls.js';
import { diagnose, parseErrorBody } from '../rules/diagnosis/diagnose.js';
import { parseModelList } from '../rules/wire/model-list.js';
import { withUpstream, type UpstreamConfig, type UpstreamFlags } from './upstream-config.js';
import { MODELS_PATH, protocolOfEndpointType } from '../rules/protocols/index.js';
import { printable } from '../rules/terminal/printable.js';
import { type ModelEntry } from '../core/routing-facts.js';

/** The upstream's IDs and owners escaped before the columns are measured, so a cell stays one cell. */
export function formatModelTable(models: ModelEntry[]): string {
  const rows = models.map((m) =>
    [
      m.id,
      m.owned_by ?? '',
      (m.supported_endpoint_types ?? []).map((t) => protocolOfEndpointType(t) ?? t).join(', '),
    ].map((c) => printable(String(c))),
  );
  const head = ['MODEL ID', 'OWNED BY', 'PROTOCOLS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)].join('\n');
}

export const modelsCommand: Command = {
  name: 'models',
  summary: "List the models the key's group can use (copy IDs from here)",
  usage: `Usage: loopgate models [--proxy URL | --port N [--host ADDR] | --upstream URL | --direct]
                       [--key-stdin] [--allow-http] [--json]

Prints GET {base_url}/models as a table (or the raw list with --json).
Upstream from --upstream or LOOPGATE_UPSTREAM; key from LOOPGATE_API_KEY or --key-stdin.
--proxy URL (or --port N, --host ADDR, as tail and run take them) asks a running
Loopgate proxy (every key's models, as your tools see them). With no upstream configured, a Loopgate proxy on the default port
(127.0.0.1:8787) is asked; otherwise (or with --direct) the embedded simulator.

Exit codes: 0 listed, 1 the upstream refused (the diagnosis is printed), 2 bad usage, 3 bad configuration.`,
  run: (argv, io) => withUpstream(argv, io, (cfg, flags) => listModels(cfg, flags, io)),
};

async function listModels(cfg: UpstreamConfig, flags: UpstreamFlags, io: Io): Promise<number> {
  const parsed = parseUpstream(cfg.upstream, { allowHttp: flags['allow-http'] });
  if (!parsed.ok) {
    io.err(`loopgate models: ${parsed.problems.map((p) => p.message).join(' ')}`);
    return EXIT.config;
  }
  if (!cfg.key) {
    io.err('loopgate models: no API key. Set LOOPGATE_API_KEY or use --key-stdin.');
    return EXIT.config;
  }
  let res;
  try {
    res = await request(`${parsed.baseUrl}/models`, {
      headers: { authorization: `Bearer ${cfg.key}` },
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  } catch (err) {
    io.err(
      `loopgate models: ${parsed.baseUrl}/models did not answer (${(err as { code?: string }).code ?? 'error'}). Check the URL and the network.`,
    );
    return EXIT.failed;
  }
  const text = await res.body.text();
  if (res.statusCode !== 200) {
    const d = diagnose(parseErrorBody(res.statusCode, text), {
      method: 'GET',
      originalPath: MODELS_PATH,
      canonicalPath: MODELS_PATH,
      time: new Date(),
    });
    io.err(`loopgate models: ${res.statusCode}: ${d?.hint ?? 'unexpected answer'}`);
    return EXIT.failed;
  }
  const list = parseModelList(text);
  if (!list.ok) {
    const what = list.reason === 'not-json' ? 'JSON' : 'a model list';
    io.err(
      `loopgate models: ${parsed.baseUrl}/models answered 200 but not with ${what}: is this the Model-Access API?`,
    );
    return EXIT.failed;
  }
  io.out(flags.json ? JSON.stringify(list.models, null, 2) : formatModelTable(list.models));
  return EXIT.ok;
}
