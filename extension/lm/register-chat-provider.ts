// Registers the `loopgate` chat vendor where VS Code has the API (1.104+); on
// older versions (down to engines.vscode 1.100) it is simply absent and the
// rest of the extension works as before.
import * as vscode from 'vscode';
import { LoopgateChatProvider, VENDOR, type ChatProviderDeps } from './chat-provider.js';
import { chatProviderRegistry } from './lm-api.js';

export function registerChatProvider(deps: ChatProviderDeps): {
  provider?: LoopgateChatProvider;
  disposables: vscode.Disposable[];
} {
  const registry = chatProviderRegistry(vscode.lm);
  if (!registry) {
    deps.log.info(
      `VS Code ${vscode.version} has no Language Model Chat Provider API (1.104+): Loopgate's models are not offered in the chat.`,
    );
    return { disposables: [] };
  }
  const provider = new LoopgateChatProvider(deps);
  return { provider, disposables: [provider, registry.registerLanguageModelChatProvider(VENDOR, provider)] };
}

/** Loopgate: Manage Chat Models (the chat model picker's gear before VS Code took a `configuration` schema instead): key and base-URL setup, and the per-model limits. */
export async function manageChatModels(): Promise<void> {
  const picks: Array<vscode.QuickPickItem & { run: () => Thenable<unknown> }> = [
    {
      label: '$(key) Set API Key',
      detail: 'The key whose group serves the models (kept in SecretStorage)',
      run: () => vscode.commands.executeCommand('loopgate.setApiKey'),
    },
    {
      label: '$(add) Add API Key',
      detail: "Another group's key: its models join the list",
      run: () => vscode.commands.executeCommand('loopgate.addApiKey'),
    },
    {
      label: '$(link) Set Base URL',
      detail: 'The Model-Access API address, in any form',
      run: () => vscode.commands.executeCommand('loopgate.setBaseUrl'),
    },
    {
      label: '$(settings) Model limits and capabilities',
      detail: 'loopgate.chat.modelOverrides: token limits, image input, tool calling per model',
      run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'loopgate.chat'),
    },
    {
      label: '$(list-tree) Model Explorer',
      detail: "The groups' models and their protocols",
      run: () => vscode.commands.executeCommand('loopgate.models.focus'),
    },
  ];
  const choice = await vscode.window.showQuickPick(picks, {
    title: 'Loopgate models in chat',
    placeHolder: 'Set up the key and base URL behind the Loopgate models',
  });
  await choice?.run();
}
