// Entry of dist/server.js: the language server the VS Code extension starts.
// The transport (--node-ipc or --stdio) comes from the command line.
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startLintServer } from './lint-server.js';

startLintServer(createConnection(ProposedFeatures.all));
