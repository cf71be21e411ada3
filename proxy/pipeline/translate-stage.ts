// A bridged stream: the upstream's chat events become the caller's protocol
// (bridge/). The one stage that writes new text, so the one that encodes it.
import type { StreamTranslator } from '../bridge/index.js';
import type { StreamStage } from './stream-stage.js';

export function translateStage(translator: StreamTranslator): StreamStage {
  return {
    onChunk: (buf) => bytes(translator.push(buf)),
    onEnd: () => bytes(translator.end()),
  };
}

function bytes(text: string): Buffer | undefined {
  return text === '' ? undefined : Buffer.from(text);
}
