// The 400 every unmappable parameter gets: it names the parameter, never drops it.

import { PROTOCOL_TABLE } from '../../rules/protocols/index.js';

const CHAT = PROTOCOL_TABLE.chat.title;

export class BridgeReject extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'BridgeReject';
  }
}

export function noChatEquivalent(param: string, protocol: string, hint?: string): BridgeReject {
  return new BridgeReject(
    param,
    `Parameter '${param}' has no ${CHAT} equivalent, and this route only offers ${CHAT}, so Loopgate bridges ${protocol} over it. Remove '${param}'${hint ? ` (${hint})` : ''}, or use a key group whose route supports ${protocol}.`,
  );
}

export function wrongType(param: string, expected: string): BridgeReject {
  return new BridgeReject(param, `Parameter '${param}' must be ${expected}.`);
}
