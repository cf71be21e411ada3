// The registry of CLI commands. Each lives in its own module.
import type { Command } from './command.js';
import { doctorCommand } from './doctor.js';
import { envCommand } from './env.js';
import { exportCommand } from './export.js';
import { faultsCommand } from './fault-command.js';
import { budgetCommand } from './budget-command.js';
import { lspCommand } from './lsp.js';
import { mcpCommand } from './mcp.js';
import { modelsCommand } from './models.js';
import { mcpWrapCommand } from './mcp-wrap.js';
import { runCommand } from './run.js';
import { replayCommand } from './replay.js';
import { showCommand } from './show.js';
import { tailCommand } from './tail.js';
import { serveCommand } from './serve.js';
import { sessionsCommand } from './sessions.js';
import { simulateCommand } from './simulate.js';
import { tokenCommand } from './token.js';
import { usageCommand } from './usage-report.js';

export const commands: Command[] = [
  serveCommand,
  simulateCommand,
  doctorCommand,
  modelsCommand,
  envCommand,
  runCommand,
  mcpWrapCommand,
  tailCommand,
  showCommand,
  sessionsCommand,
  faultsCommand,
  budgetCommand,
  usageCommand,
  replayCommand,
  tokenCommand,
  exportCommand,
  lspCommand,
  mcpCommand,
];
