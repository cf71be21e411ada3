// Terminal exports for this platform's usual shell; the rules live in rules/project/client-env.ts.
import { exportLines as lines } from '../rules/project/client-env.js';

export function exportLines(env: Record<string, string>, platform: NodeJS.Platform = process.platform): string {
  return lines(env, platform === 'win32' ? 'powershell' : 'sh').join('\n') + '\n';
}
