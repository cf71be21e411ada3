// A small real upstream for the routing tests: each key has its own /models
// list (with or without `supported_endpoint_types`), serves the protocols its
// group really has (which a list that does not say them hides), and answers
// 404 endpoint_not_supported for the others, 503 "No available channel" for a
// model its group lacks, as new-api relays do. A key's /models answer can be
// held until the test releases it (the start-up race), or fail.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENDPOINT_TYPE, PROTOCOL_TABLE, type Protocol } from '../../rules/protocols/index.js';

export interface UpstreamModel {
  id: string;
  /** What the list says; undefined: the list does not say (no supported_endpoint_types). */
  listed?: Protocol[];
  /** What the group really serves; default: `listed`, or every protocol when the list does not say. */
  serves?: Protocol[];
}

export interface UpstreamKey {
  key: string;
  models: UpstreamModel[];
  /** GET /models answers 500 (the proxy's list for this key stays unknown). */
  listFails?: boolean;
}

export interface SeenRequest {
  key: string;
  path: string;
  model?: string;
}

export interface RoutingUpstream {
  url: string;
  seen: SeenRequest[];
  /** Holds this key's GET /models answer until release(key). */
  hold(key: string): void;
  release(key: string): void;
  /** GET /models requests received (held or not), by key. */
  listRequests: string[];
  close(): Promise<void>;
}

const PATHS: Record<string, Protocol> = {
  [PROTOCOL_TABLE.chat.path]: 'chat',
  [PROTOCOL_TABLE.responses.path]: 'responses',
  [PROTOCOL_TABLE.messages.path]: 'messages',
};

const ALL: Protocol[] = ['chat', 'responses', 'messages'];

function keyOf(req: IncomingMessage): string {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7);
  return typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : '';
}

/** The smallest well-formed answer of each protocol (the bridge translates the chat one). */
function answer(protocol: Protocol, model: string): unknown {
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (protocol === 'chat') {
    return {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage,
    };
  }
  if (protocol === 'responses') {
    return {
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model,
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'ok', annotations: [] }],
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
  }
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

export async function startRoutingUpstream(keys: readonly UpstreamKey[]): Promise<RoutingUpstream> {
  const byKey = new Map(keys.map((k) => [k.key, k]));
  const held = new Map<string, Array<() => void>>();
  const seen: SeenRequest[] = [];
  const listRequests: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const key = byKey.get(keyOf(req));
    const path = (req.url ?? '/').split('?')[0]!;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!key)
      return json(401, { error: { message: 'Invalid token', type: 'invalid_request_error', code: 'invalid_api_key' } });
    if (req.method === 'GET' && path === '/v1/models') {
      listRequests.push(key.key);
      const gate = held.get(key.key);
      if (gate) await new Promise<void>((resolve) => gate.push(resolve));
      if (key.listFails) return json(500, { error: { message: 'list unavailable', type: 'server_error' } });
      const data = key.models.map((m) => ({
        id: m.id,
        object: 'model',
        owned_by: 'test',
        ...(m.listed ? { supported_endpoint_types: m.listed.map((p) => ENDPOINT_TYPE[p]) } : {}),
      }));
      return json(200, { object: 'list', data });
    }
    const protocol = PATHS[path];
    if (req.method !== 'POST' || !protocol)
      return json(404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
    let model: string | undefined;
    try {
      model = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string }).model;
    } catch {
      // left undefined
    }
    seen.push({ key: key.key, path, model });
    const entry = key.models.find((m) => m.id === model);
    if (!entry)
      return json(503, {
        error: {
          message: `No available channel for model "${model}" in this group`,
          type: 'new_api_error',
          code: 'model_not_found',
        },
      });
    const serves = entry.serves ?? entry.listed ?? ALL;
    if (!serves.includes(protocol)) {
      return json(404, {
        error: {
          message: `This route does not support ${PROTOCOL_TABLE[protocol].title}`,
          type: 'invalid_request_error',
          code: 'endpoint_not_supported',
        },
      });
    }
    json(200, answer(protocol, model!));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const release = (key: string) => {
    const waiting = held.get(key) ?? [];
    held.delete(key);
    for (const go of waiting) go();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    listRequests,
    hold: (key) => void held.set(key, held.get(key) ?? []),
    release,
    async close() {
      for (const k of [...held.keys()]) release(k);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
