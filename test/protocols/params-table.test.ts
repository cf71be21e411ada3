// The protocol parameter table (rules/wire/protocol-params.ts) against the
// installed official SDKs: every request parameter an SDK knows must be
// classified, so bumping `openai` or `@anthropic-ai/sdk` fails here until the
// new parameters are given a bridge action.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHAT_PARAMS,
  COUNT_TOKENS_PARAMS,
  MESSAGES_PARAMS,
  RESPONSES_PARAMS,
} from '../../rules/wire/protocol-params.js';
import { sdkParams, type SdkParams } from './sdk-params.js';

let sdk: SdkParams;
beforeAll(() => {
  sdk = sdkParams();
}, 60_000);

const missing = (known: readonly string[], table: readonly string[]) => known.filter((p) => !table.includes(p));

describe('the parameter table covers the official SDKs', () => {
  it('reads a real parameter list from each SDK (the reader itself works)', () => {
    expect(sdk.chat).toEqual(expect.arrayContaining(['model', 'messages', 'tools', 'stream']));
    expect(sdk.responses).toEqual(expect.arrayContaining(['model', 'input', 'instructions', 'reasoning']));
    expect(sdk.messages).toEqual(
      expect.arrayContaining(['model', 'messages', 'max_tokens', 'thinking', 'context_management', 'output_config']),
    );
    expect(sdk.countTokens).toEqual(expect.arrayContaining(['model', 'messages']));
  });

  it('Chat Completions: every SDK parameter is known', () => {
    expect(missing(sdk.chat, CHAT_PARAMS)).toEqual([]);
  });

  it('Responses: every SDK parameter has a bridge action', () => {
    expect(missing(sdk.responses, Object.keys(RESPONSES_PARAMS))).toEqual([]);
  });

  it('Anthropic Messages (beta included): every SDK parameter has a bridge action', () => {
    expect(missing(sdk.messages, Object.keys(MESSAGES_PARAMS))).toEqual([]);
  });

  it('Anthropic count_tokens: every SDK parameter is known', () => {
    expect(missing(sdk.countTokens, COUNT_TOKENS_PARAMS)).toEqual([]);
  });
});
