// Text from outside (a model, a key name, an error message) in a hover's
// markdown: its markdown and theme-icon syntax escaped, its spaces kept.
// MarkdownString.appendText turns every space into &nbsp;, which leaves the
// hover no place to wrap but inside a word (issue 42: the status-bar tooltip).

/** `value` as literal text in markdown that supports theme icons: `$(zap)` stays text, `**` stays stars. */
export function markdownText(value: string): string {
  return value.replace(/[\\`*_{}[\]()#+\-.!~|<>$&]/g, '\\$&').replace(/\r?\n/g, '\n\n');
}
