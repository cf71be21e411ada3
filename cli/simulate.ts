// `loopgate simulate`: runs the embedded Model-Access API simulator until
// SIGINT/SIGTERM. Wiring only; the simulator lives in proxy/simulator.
import { parseArgs } from 'node:util';
import { FixtureError, startSimulator, type Fixture, type Simulator } from '../simulator/index.js';
import { untilSignal } from './signals.js';
import { PROTOCOL_TABLE, PROTOCOLS, type Protocol } from '../rules/protocols/index.js';
import { EXIT, UsageError, type Command, type Io } from './command.js';

const usage = `Usage: loopgate simulate [--port P] [--host 127.0.0.1] [--fixture FILE]

Runs an offline copy of the Model-Access API (GET /v1/models, POST /v1/chat/completions,
POST /v1/responses, POST /v1/messages) with demo keys. Stops on Ctrl+C.

Options:
  --port P        Port to listen on; 0 picks a free one (default 0)
  --host H        Address to bind (default 127.0.0.1)
  --fixture FILE  JSON fixture with groups and keys (default: the bundled demo fixture)`;

/** A curl line a newcomer can paste: first usable key, first model, a protocol its group has. */
function curlExample(sim: Simulator): string {
  const key = sim.fixture.keys.find((k) => k.status === 'active' && k.balance > 0);
  if (!key) return `curl -s ${sim.baseUrl}/models -H "Authorization: Bearer <API_KEY>"`;
  const group = sim.fixture.groups[key.group]!;
  const first = group.models
    .map((m) => (typeof m === 'string' ? m : m.id))
    .find((id) => !key.models || key.models.includes(id));
  const model = first ?? 'MODEL_ID';
  const auth = `-H "Authorization: Bearer ${key.key}" -H "Content-Type: application/json"`;
  const hello = `[{"role":"user","content":"Hello"}]`;
  const curl: Record<Protocol, () => string> = {
    chat: () =>
      `curl -s ${sim.baseUrl}${PROTOCOL_TABLE.chat.endpoint} ${auth} -d '{"model":"${model}","messages":${hello}}'`,
    responses: () =>
      `curl -s ${sim.baseUrl}${PROTOCOL_TABLE.responses.endpoint} ${auth} -d '{"model":"${model}","input":"Hello"}'`,
    messages: () =>
      `curl -s ${sim.url}${PROTOCOL_TABLE.messages.path} ${auth} -d '{"model":"${model}","max_tokens":64,"messages":${hello}}'`,
  };
  // The table's order (Chat Completions first); a group that lists none gets the last.
  const protocol = PROTOCOLS.find((p) => group.protocols.includes(p)) ?? PROTOCOLS[PROTOCOLS.length - 1]!;
  return curl[protocol]();
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535 (got "${raw}")`);
  return Number(raw);
}

/** The command body; `stop` decides when to shut down (signals in the CLI, a promise in tests). */
export async function runSimulate(argv: string[], io: Io, stop: () => Promise<unknown>): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, host: { type: 'string' }, fixture: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const port = parsePort(values.port);
  let sim: Simulator;
  try {
    sim = await startSimulator({
      port,
      host: values.host ?? '127.0.0.1',
      ...(values.fixture ? { fixture: values.fixture as string | Fixture } : {}),
    });
  } catch (err) {
    if (err instanceof FixtureError) {
      io.err(`loopgate simulate: ${err.message}`);
      return EXIT.config;
    }
    const code = (err as NodeJS.ErrnoException).code;
    io.err(
      `loopgate simulate: cannot listen on ${values.host ?? '127.0.0.1'}:${port}: ${code ?? (err as Error).message}${code === 'EADDRINUSE' ? ' (port in use: choose another --port, or 0)' : ''}`,
    );
    return EXIT.startup;
  }
  io.out(`Simulator listening on ${sim.url}`);
  io.out(`Try: ${curlExample(sim)}`);
  await stop();
  await sim.close();
  return EXIT.ok;
}

export const simulateCommand: Command = {
  name: 'simulate',
  summary: 'Run the embedded Model-Access API simulator (demo keys, offline)',
  usage,
  run(argv, io) {
    return runSimulate(argv, io, untilSignal);
  },
};
