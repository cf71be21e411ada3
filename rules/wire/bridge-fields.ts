// The fields of the nested objects of a bridged request (tools, messages,
// content blocks, input items) that the protocol bridge carries over to Chat
// Completions, or that mean nothing there (ids and statuses of replayed items,
// output-only annotations). Any other field that is set is left out and named in
// x-loopgate-bridge-dropped as `<where>.<field>` (`tools[].eager_input_streaming`):
// nothing is dropped without a notice. The top-level parameters have their own
// table (protocol-params.ts). test/protocols/bridge-fields.test.ts reads the
// official SDKs' types of these objects and checks that each of their fields is
// either listed here or reported when set. Pure: no I/O.

export const BRIDGE_FIELDS = {
  // Anthropic Messages
  'messages.tool': ['type', 'name', 'description', 'input_schema'],
  'messages.message': ['role', 'content'],
  'messages.system_message': ['role', 'content', 'output_config'], // output_config is reported on its own
  'messages.text': ['type', 'text'],
  'messages.image': ['type', 'source'],
  'messages.tool_use': ['type', 'id', 'name', 'input'],
  'messages.tool_result': ['type', 'tool_use_id', 'content', 'is_error'],
  'messages.thinking': ['type', 'budget_tokens'],
  'messages.tool_choice': ['type', 'name', 'disable_parallel_tool_use'],
  // OpenAI Responses
  'responses.function': ['type', 'name', 'description', 'parameters', 'strict'],
  'responses.custom': ['type', 'name', 'description', 'format'],
  'responses.namespace': ['type', 'name', 'tools'],
  'responses.message': ['type', 'role', 'content', 'id', 'status'],
  // annotations and logprobs describe an earlier answer; as input they carry nothing.
  'responses.text_part': ['type', 'text', 'annotations', 'logprobs'],
  'responses.image_part': ['type', 'image_url', 'detail'],
  'responses.function_call': ['type', 'call_id', 'name', 'namespace', 'arguments', 'id', 'status'],
  'responses.custom_tool_call': ['type', 'call_id', 'name', 'namespace', 'input', 'id', 'status'],
  'responses.tool_output': ['type', 'call_id', 'output', 'id', 'status'],
} as const satisfies Record<string, readonly string[]>;

export type BridgeObject = keyof typeof BRIDGE_FIELDS;

const SETS = new Map<string, ReadonlySet<string>>(
  Object.entries(BRIDGE_FIELDS).map(([k, v]) => [k, new Set<string>(v)]),
);

/** A value whose loss changes nothing: unset, off or empty. */
function unset(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === '' || (Array.isArray(v) && v.length === 0);
}

/** The fields of `obj` the bridge leaves out, each as `<at>.<field>`, added to `dropped` (once). */
export function noteDroppedFields(
  obj: Record<string, unknown>,
  kind: BridgeObject,
  at: string,
  dropped: string[],
): void {
  const known = SETS.get(kind)!;
  for (const key of Object.keys(obj)) {
    if (known.has(key) || unset(obj[key])) continue;
    const name = `${at}.${key}`;
    if (!dropped.includes(name)) dropped.push(name);
  }
}
