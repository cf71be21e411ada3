// Which chat models take `reasoning_effort` (and `verbosity`): the ones that
// reason. A chat route refuses these parameters for other models, so the
// bridge only carries effort over where it can work and reports it dropped
// elsewhere. A guess from the model ID, the only thing a relay tells us.
const REASONING_MODEL =
  /^(?:[\w.-]+\/)?(?:o\d|gpt-[5-9]|gpt-\d{2,}|deepseek-reasoner|deepseek-r\d|grok-[34]-mini|qwq|qwen3)|(?:^|[-_])(?:reasoner|reasoning|thinking)(?:$|[-_])/i;

export function takesReasoningEffort(model: string): boolean {
  return REASONING_MODEL.test(model);
}

/** Anthropic efforts (`output_config.effort`, including `max`) as chat `reasoning_effort` values. */
export function chatEffort(effort: string): string {
  return effort === 'max' ? 'high' : effort;
}

/** An Anthropic thinking budget in tokens as a chat effort. */
export function effortForBudget(budgetTokens: number): string {
  if (budgetTokens < 4096) return 'low';
  if (budgetTokens < 16384) return 'medium';
  return 'high';
}
