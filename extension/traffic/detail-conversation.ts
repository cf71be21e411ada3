// The request panel's Conversation tab: the new turn and the answer first, then what was sent with them (the
// system prompt, the tool definitions, the earlier messages) folded under their sizes. Pure, escaped by html``.
import type { FollowUp } from '../../core/traffic-entry.js';
import { conversationOf } from '../../rules/wire/follow-ups.js';
import { shortId } from '../../presentation/render.js';
import type { Message, Part } from '../../rules/protocols/index.js';
import { ESTIMATE_TOKENIZER, tokenLabel, type TokenCounter } from '../../rules/sessions/tokenizer-estimate.js';
import { toolDefinitions } from '../../rules/wire/tool-definitions.js';
import { stringifyWithin } from '../../rules/json/nesting.js';
import { html, type SafeHtml } from './html.js';
import type { TrafficDetail } from '../../core/local-api.js';

/** A tool result (or argument list) past either of these is folded: a whole file read, a long command output. */
const FOLD_CHARS = 1200;
const FOLD_LINES = 20;

function args(v: unknown): string {
  if (typeof v !== 'string') return stringifyWithin(v ?? {}, undefined, 2);
  try {
    return JSON.stringify(JSON.parse(v), null, 2);
  } catch {
    return v;
  }
}

/** A link that opens request `id` in this panel (detail-page.ts posts it back to the host). */
export function requestLink(id: string): SafeHtml {
  return html`<a href="#" class="open" data-open="${id}" title="Open request ${id}"><code>${shortId(id)}</code></a>`;
}

/** A text's size as the panel labels it: `≈1,234 tokens`, or in characters without a tokenizer. */
type Sizer = (text: string) => string;

export function sizer(count: TokenCounter | undefined): Sizer {
  return count ? (text) => tokenLabel(count(text)) : (text) => `${text.length.toLocaleString('en-US')} characters`;
}

/** Text shown whole when short, folded under `label` with its size when long. */
function foldable(label: SafeHtml, text: string, size: Sizer): SafeHtml {
  const lines = text.split('\n').length;
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return html`${label}<pre>${text}</pre>`;
  return html`<details class="fold"><summary>${label} <span class="dim">${lines} lines, ${size(text)}</span></summary><pre>${text}</pre></details>`;
}

function partText(p: Part): string {
  if (p.type === 'tool_call') return `${String(p.name ?? '')} ${args(p.arguments)}`;
  if (p.type === 'tool_call_response') return String(p.response ?? '');
  return typeof p.content === 'string' ? p.content : '';
}

function part(p: Part, followUps: Record<string, FollowUp>, size: Sizer): SafeHtml {
  switch (p.type) {
    case 'text':
      return html`<div class="text">${p.content}</div>`;
    case 'reasoning':
      return html`<details class="reasoning"><summary>Reasoning (${String(p.content ?? '').length} characters)</summary><pre>${p.content}</pre></details>`;
    case 'tool_call': {
      const f = typeof p.id === 'string' ? followUps[p.id] : undefined;
      const result = f
        ? html`<div class="result">${foldable(html`<span class="label">Result</span> (sent in request ${requestLink(f.id)})`, String(f.result.response ?? ''), size)}</div>`
        : '';
      return html`<div class="tool">${foldable(html`<span class="label">Tool call</span> <code>${p.name}</code>${p.id ? html` <span class="dim">${p.id}</span>` : ''}`, args(p.arguments), size)}${result}</div>`;
    }
    case 'tool_call_response':
      return html`<div class="tool">${foldable(html`<span class="label">Tool result</span>${p.id ? html` <span class="dim">${p.id}</span>` : ''}`, String(p.response ?? ''), size)}</div>`;
    default:
      return html`<div class="dim">[${p.type}]</div>`;
  }
}

function message(m: Message, followUps: Record<string, FollowUp>, size: Sizer): SafeHtml {
  return html`<div class="msg ${m.role}"><div class="role"><span class="name">${m.role}</span>${m.finish_reason ? html` <span class="dim">finish: ${m.finish_reason}</span>` : ''}</div>${m.parts.map((p) => part(p, followUps, size))}</div>`;
}

function textOf(parts: Part[]): string {
  return parts.map(partText).join('\n');
}

function parseObject(body: string | undefined): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body ?? '');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a real agent sends is mostly context (Claude Code: a ~20 KB system prompt, dozens of tool
 * definitions, the whole history): the new turn and the answer come first, the rest is folded under
 * its size. Token counts are o200k_base's, an estimate for other families' models (hence "≈").
 */
export function conversation(e: TrafficDetail, size: Sizer): SafeHtml {
  const c = conversationOf(e);
  if (!c.requestProtocol) return html`<p class="dim">Not a conversation (see Wire).</p>`;
  let lastAssistant = -1;
  c.input.forEach((m, i) => {
    if (m.role === 'assistant') lastAssistant = i;
  });
  const history = c.input.slice(0, lastAssistant + 1);
  const newTurn = c.input.slice(lastAssistant + 1);
  const tools = toolDefinitions(parseObject(e.requestBody));
  const out: SafeHtml[] = [
    html`<p class="dim">${c.requestProtocol}${c.responseProtocol !== c.requestProtocol ? ` → ${c.responseProtocol} (bridged)` : ''}. Token counts (≈) are estimates (${ESTIMATE_TOKENIZER}).</p>`,
    html`<h3>New turn</h3>`,
  ];
  if (newTurn.length) out.push(...newTurn.map((m) => message(m, {}, size)));
  else if (!c.requestNote) out.push(html`<p class="dim">None: the request ends on the assistant's turn.</p>`);
  if (c.requestNote) out.push(html`<p class="dim">${c.requestNote}</p>`);
  out.push(html`<h3>Answer</h3>`);
  if (c.output) out.push(...c.output.map((m) => message(m, e.followUps ?? {}, size)));
  else out.push(html`<p class="dim">${c.responseNote ?? 'no answer'}</p>`);
  if (c.system?.length || tools.length || history.length) out.push(html`<h3>Sent with it</h3>`);
  if (c.system?.length)
    out.push(
      html`<details class="context system"><summary><span class="label">System prompt</span> <span class="dim">${c.system.length} block${c.system.length === 1 ? '' : 's'}, ${size(textOf(c.system))}</span></summary><div class="msg system">${c.system.map((p) => part(p, {}, size))}</div></details>`,
    );
  if (tools.length) {
    out.push(
      html`<details class="context tools"><summary><span class="label">Tool definitions</span> <span class="dim">${tools.length}, ${size(tools.map((t) => t.text).join('\n'))}</span></summary>${tools.map((t) => html`<details class="tool-def"><summary><code>${t.name}</code> <span class="dim">${size(t.text)}</span></summary><pre>${t.text}</pre></details>`)}</details>`,
    );
  }
  if (history.length)
    out.push(
      html`<details class="context history"><summary><span class="label">Earlier messages</span> <span class="dim">${history.length}, ${size(textOf(history.flatMap((m) => m.parts)))}</span></summary>${history.map((m) => message(m, {}, size))}</details>`,
    );
  return html`${out}`;
}
