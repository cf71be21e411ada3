// The request parameters the installed official SDKs know, read from their
// type declarations with the TypeScript compiler: the source of truth the
// protocol parameter table is checked against.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const require = createRequire(join(process.cwd(), 'package.json'));

export function sdkDir(pkg: string): string {
  // Both SDKs export ./package.json? Not openai: resolve the main entry instead.
  return dirname(require.resolve(pkg));
}

/**
 * Property names of interfaces (with what they extend), each looked up in its declaration file; one compiler
 * program for all. `A.B` is interface B inside `declare namespace A`.
 */
export function propertiesOf(wanted: Array<{ file: string; iface: string }>): string[][] {
  const program = ts.createProgram([...new Set(wanted.map((w) => w.file))], {
    noEmit: true,
    skipLibCheck: true,
    noResolve: false,
    types: [],
  });
  const checker = program.getTypeChecker();
  return wanted.map(({ file, iface }) => {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`cannot read ${file}`);
    let found: ts.InterfaceDeclaration | ts.TypeAliasDeclaration | undefined;
    const [outer, inner] = iface.includes('.') ? iface.split('.') : [undefined, iface];
    const look = (node: ts.Node) => {
      if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === inner)
        found = node;
    };
    ts.forEachChild(source, (node) => {
      if (outer === undefined) look(node);
      else if (ts.isModuleDeclaration(node) && node.name.text === outer && node.body && ts.isModuleBlock(node.body))
        node.body.statements.forEach(look);
    });
    if (!found)
      throw new Error(`${iface} not found in ${file}: the SDK changed shape; update test/protocols/sdk-params.ts`);
    return checker
      .getPropertiesOfType(checker.getTypeAtLocation(found))
      .map((p) => p.getName())
      .sort();
  });
}

export interface SdkParams {
  chat: string[];
  responses: string[];
  messages: string[];
  countTokens: string[];
}

export function sdkParams(): SdkParams {
  const openai = sdkDir('openai');
  const anthropic = sdkDir('@anthropic-ai/sdk');
  const union = (...lists: string[][]) => [...new Set(lists.flat())].sort();
  const [chat, responses, messages, betaMessages, count, betaCount] = propertiesOf([
    { file: join(openai, 'resources/chat/completions/completions.d.ts'), iface: 'ChatCompletionCreateParamsBase' },
    { file: join(openai, 'resources/responses/responses.d.ts'), iface: 'ResponseCreateParamsBase' },
    { file: join(anthropic, 'resources/messages/messages.d.ts'), iface: 'MessageCreateParamsBase' },
    { file: join(anthropic, 'resources/beta/messages/messages.d.ts'), iface: 'MessageCreateParamsBase' },
    { file: join(anthropic, 'resources/messages/messages.d.ts'), iface: 'MessageCountTokensParams' },
    { file: join(anthropic, 'resources/beta/messages/messages.d.ts'), iface: 'MessageCountTokensParams' },
  ]);
  return {
    chat: chat!,
    responses: responses!,
    messages: union(messages!, betaMessages!),
    countTokens: union(count!, betaCount!),
  };
}
