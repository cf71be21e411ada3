// Token counts for what the detail panel shows folded (a system prompt, tool
// definitions, a long tool result): counted with OpenAI's o200k_base by the
// tokenizer worker (analysis/tokenizers.ts). For another family's model
// (Claude, Qwen, …) that is an estimate, so the label always says "≈". No I/O.

/** The tokenizer the estimates come from (named where a figure needs its source). */
export const ESTIMATE_TOKENIZER = 'o200k_base';

export type TokenCounter = (text: string) => number;

/** `≈1,234 tokens`: a count for the reader, marked as an estimate. */
export function tokenLabel(tokens: number): string {
  return `≈${tokens.toLocaleString('en-US')} token${tokens === 1 ? '' : 's'}`;
}
