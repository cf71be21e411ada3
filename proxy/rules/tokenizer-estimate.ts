// Token counts for what the detail panel shows folded (a system prompt, tool
// definitions, a long tool result): counted with OpenAI's o200k_base
// (gpt-tokenizer). For another family's model (Claude, Qwen, …) that is an
// estimate, so the label always says "≈". No I/O; the tokenizer's tables are
// loaded on first use, not with the module (they take a second or more to
// load: never on the extension's activation path).

/** The tokenizer the estimates come from (named where a figure needs its source). */
export const ESTIMATE_TOKENIZER = 'o200k_base';

export type TokenCounter = (text: string) => number;

let loading: Promise<TokenCounter> | undefined;

/** The o200k_base counter, loaded once. */
export function tokenCounter(): Promise<TokenCounter> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then(
    (m) => (text: string) => (text ? m.countTokens(text) : 0),
  );
  return loading;
}

/** `≈1,234 tokens`: a count for the reader, marked as an estimate. */
export function tokenLabel(tokens: number): string {
  return `≈${tokens.toLocaleString('en-US')} token${tokens === 1 ? '' : 's'}`;
}
