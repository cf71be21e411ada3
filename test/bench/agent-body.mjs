// The bench's agent-sized request body, shared by run.mjs and profile.mjs.

/**
 * Issue 40: an agent-sized request (87 KiB), as coding agents send on every turn: a system prompt of
 * tool output, with URLs holding `%20` and terminal output holding ANSI colours (`\u001b` in the
 * JSON), the escapes the redactor's escaped-secret pass looks at. The same bytes every run.
 */
export function agentBody(bytes = 87 * 1024) {
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 7 === 0
        ? `\u001b[32m✓\u001b[0m fetched https://docs.example.test/guide/page%20${i}?q=tool%20output%20${i} (${i % 97} ms)`
        : `src/module${i}.ts:${i % 400}:${i % 80}  const value${i} = await load("item-${i}", { retries: ${i % 5} });`;
    lines.push(line);
    size += line.length + 1;
  }
  const body = (content) =>
    JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: `You are a coding agent. Tool output so far:\n${content}` },
        { role: 'user', content: 'Hello' },
      ],
    });
  let text = lines.join('\n');
  // Trimmed to the size asked, in bytes of the JSON sent.
  while (Buffer.byteLength(body(text)) > bytes) text = text.slice(0, text.length - 64);
  return body(text);
}
