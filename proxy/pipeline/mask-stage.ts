// Known secrets masked where they stand in each chunk (relays quote the key
// they were given): before a WebSocket message reaches the record or the
// client. (An HTTP answer is masked in its sink, client-reply.ts, the one way
// out for every answer.) A chunk without one passes on as the same Buffer.
import type { Redactor } from '../../rules/redaction/redact.js';
import type { StreamStage } from './stream-stage.js';

export function maskStage(redactor: Pick<Redactor, 'knownSecretsIn'>): StreamStage {
  return {
    onChunk: (buf) => redactor.knownSecretsIn(buf),
    onEnd: () => undefined,
  };
}
