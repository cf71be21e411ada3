// The tool definitions a request offers the model, by name, in any of the
// three protocols: Messages' `{name, input_schema}`, Chat's
// `{type: 'function', function: {name}}`, Responses' `{type: 'function', name}`
// and built-ins such as `{type: 'web_search'}`. Pure, no I/O.

export interface ToolDefinition {
  name: string;
  /** The definition as sent, pretty-printed (what the model reads of it). */
  text: string;
}

export function toolDefinitions(body: Record<string, unknown> | undefined): ToolDefinition[] {
  const tools = body?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((t: unknown) => {
    const tool = (t && typeof t === 'object' ? t : {}) as Record<string, unknown>;
    const fn = tool.function && typeof tool.function === 'object' ? (tool.function as Record<string, unknown>) : {};
    const name = [tool.name, fn.name, tool.type].find((n): n is string => typeof n === 'string') ?? '(unnamed)';
    return { name, text: JSON.stringify(t, null, 2) };
  });
}
