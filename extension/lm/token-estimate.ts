// provideTokenCount's answer is an estimate, documented as one: about four
// characters per token for English text and code (OpenAI's and Anthropic's
// rule of thumb), at least one token per non-empty text. No tokenizer is
// bundled: the real count differs per model and only the upstream knows it.
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}
