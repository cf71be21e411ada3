// Coloured text for a terminal, built from typed parts: Loopgate's own words
// (the template's literal text), outside text (every `${hole}` that is a plain
// string or number, escaped by printable() as it goes in) and colour (only from
// paint()). No marker characters, no pass over the finished text: an SGR code
// is written by paint() alone, so outside text can neither carry one nor break
// one. The CLI prints a TerminalText as it is and escapes every plain string
// (cli/terminal-io.ts). Pure.
import { printable } from './printable.js';

export type Colour = 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'cyan';

const SGR: Record<Colour, string> = { dim: '2', bold: '1', red: '31', green: '32', yellow: '33', cyan: '36' };

/** Only this module makes one: a TerminalText holds nothing unescaped that Loopgate did not write. */
const MINT = Symbol('terminal-text');

export class TerminalText {
  constructor(
    mint: typeof MINT,
    /** What the terminal gets: escaped outside text, SGR codes when painted with colour. */
    readonly text: string,
  ) {
    if (mint !== MINT) throw new Error('TerminalText is made by term(), paint() or joinText()');
  }

  toString(): string {
    return this.text;
  }
}

export type Hole = string | number | TerminalText;

function piece(hole: Hole): string {
  return hole instanceof TerminalText ? hole.text : printable(String(hole));
}

/** `term\`${rec.method} ${paint(...)}\``: the literal text as written, each plain hole escaped. */
export function term(literal: TemplateStringsArray, ...holes: Hole[]): TerminalText {
  let text = literal[0]!;
  holes.forEach((hole, i) => (text += piece(hole) + literal[i + 1]!));
  return new TerminalText(MINT, text);
}

/** `text` in `colour` when `on` (the output is a terminal that wants colour), else as it is. */
export function paint(on: boolean, colour: Colour, hole: Hole): TerminalText {
  const text = piece(hole);
  return new TerminalText(MINT, on ? `\x1b[${SGR[colour]}m${text}\x1b[0m` : text);
}

export function joinText(parts: readonly Hole[], separator = '\n'): TerminalText {
  return new TerminalText(MINT, parts.map(piece).join(separator));
}

/** Outside text over several lines, each line escaped and prefixed with `by` (a body shown indented). */
export function indentLines(text: string, by: string): TerminalText {
  return joinText(text.split('\n').map((line) => term`${by}${line}`));
}
