// The pieces every protocol's conversation reader shares: content blocks of
// any protocol turned into the GenAI conventions' parts (rules/wire/conversation.ts
// rebuilds exchanges from the modules' readers). Pure, no I/O.
import type { Part } from './spec.js';
import { stringifyWithin } from '../json/nesting.js';

/** The content part type of the model's text in Responses (in `output[].content[]`, and in assistant turns sent back as input). */
export const OUTPUT_TEXT = 'output_text';

export function obj(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function textPart(content: string): Part {
  return { type: 'text', content };
}

/** A value as text; one nested too deeply to print is TOO_DEEP. */
export function stringify(v: unknown): string {
  return typeof v === 'string' ? v : stringifyWithin(v ?? null);
}

/** Content part types that carry plain text: Responses' input_text/output_text, and the `text` of Chat, Messages and lenient clients. */
export function isTextPart(type: unknown): boolean {
  return type === 'input_text' || type === OUTPUT_TEXT || type === 'text';
}

/** One content block of any protocol → a conventions part. */
export function toPart(block: unknown): Part {
  if (typeof block === 'string') return textPart(block);
  const b = obj(block) ?? {};
  const type = typeof b.type === 'string' ? b.type : 'unknown';
  if (isTextPart(type)) return textPart(typeof b.text === 'string' ? b.text : '');
  switch (type) {
    case 'tool_use':
      return { type: 'tool_call', id: b.id, name: b.name, arguments: b.input };
    case 'tool_result':
      return {
        type: 'tool_call_response',
        id: b.tool_use_id,
        response: stringify(Array.isArray(b.content) ? b.content.map((c) => obj(c)?.text ?? '').join('') : b.content),
      };
    case 'thinking':
      return { type: 'reasoning', content: typeof b.thinking === 'string' ? b.thinking : '' };
    default:
      // Images, files, audio: named, not copied.
      return { type };
  }
}

export function partsOf(content: unknown): Part[] {
  if (content === undefined || content === null) return [];
  if (Array.isArray(content)) return content.map(toPart);
  return [toPart(content)];
}
