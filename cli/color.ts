// Colour only on a terminal, and never with NO_COLOR set (no-color.org).
import type { Io } from './command.js';

export function useColor(io: Io): boolean {
  return io.isTTY === true && !io.env.NO_COLOR;
}
