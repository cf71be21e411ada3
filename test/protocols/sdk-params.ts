// The request parameters the installed official SDKs know, read from their
// type declarations with the TypeScript compiler: the source of truth the
// protocol parameter table is checked against.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const require = createRequire(join(process.cwd(), 'package.json'));

function sdkDir(pkg: string): string {
  // Both SDKs export ./package.json? Not openai: resolve the main entry instead.
  return dirname(require.resolve(pkg));
}

/** Property names of `iface` (and the interfaces it extends) declared in `file`. */
function propertiesOf(file: string, iface: string): string[] {
  const program = ts.createProgram([file], { noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`cannot read ${file}`);
  let found: ts.InterfaceDeclaration | ts.TypeAliasDeclaration | undefined;
  ts.forEachChild(source, (node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === iface) found = node;
  });
  if (!found) throw new Error(`${iface} not found in ${file}: the SDK changed shape; update test/protocols/sdk-params.ts`);
  const type = checker.getTypeAtLocation(found);
  return checker.getPropertiesOfType(type).map((p) => p.getName()).sort();
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
  return {
    chat: propertiesOf(join(openai, 'resources/chat/completions/completions.d.ts'), 'ChatCompletionCreateParamsBase'),
    responses: propertiesOf(join(openai, 'resources/responses/responses.d.ts'), 'ResponseCreateParamsBase'),
    messages: union(
      propertiesOf(join(anthropic, 'resources/messages/messages.d.ts'), 'MessageCreateParamsBase'),
      propertiesOf(join(anthropic, 'resources/beta/messages/messages.d.ts'), 'MessageCreateParamsBase'),
    ),
    countTokens: union(
      propertiesOf(join(anthropic, 'resources/messages/messages.d.ts'), 'MessageCountTokensParams'),
      propertiesOf(join(anthropic, 'resources/beta/messages/messages.d.ts'), 'MessageCountTokensParams'),
    ),
  };
}
