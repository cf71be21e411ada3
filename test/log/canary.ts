// Canary sweep helpers: plant a unique fake secret, then search every sink for
// it in every encoding it could travel in. Written independently of
// rules/redaction/redact.ts on purpose: the redactor is not checked with itself.
import { randomBytes } from 'node:crypto';

/** A unique fake secret with a recognisable shape (e.g. `sk-` → a provider key). */
export function makeCanary(prefix = 'sk-canary-'): string {
  return prefix + randomBytes(18).toString('base64url').replace(/[-_]/g, 'Z');
}

// base64 of the secret at each alignment inside a longer payload, without the
// characters that also depend on the neighbouring bytes.
function base64Cores(secret: string, encoding: 'base64' | 'base64url'): string[] {
  const out: string[] = [];
  for (const pad of [0, 1, 2]) {
    const buf = Buffer.concat([Buffer.alloc(pad), Buffer.from(secret)]);
    const enc = buf.toString(encoding).replace(/=+$/, '');
    const head = [0, 2, 3][pad];
    const tail = buf.length % 3 === 0 ? 0 : 1;
    out.push(enc.slice(head, enc.length - tail));
  }
  return out;
}

/** Every encoding to search for: plain, JSON-escaped, URL-encoded, base64, base64url (all alignments), hex, and the random tail alone. */
export function canaryForms(secret: string): string[] {
  const forms = new Set<string>([
    secret,
    JSON.stringify(secret).slice(1, -1),
    JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/'),
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(secret).toString('hex'),
    ...base64Cores(secret, 'base64'),
    ...base64Cores(secret, 'base64url'),
    ...base64Cores(secret, 'base64').map(encodeURIComponent),
  ]);
  // A partial leak (e.g. a secret split across stream chunks) still shows its tail.
  if (secret.length >= 24) forms.add(secret.slice(-12));
  return [...forms].filter((f) => f.length >= 8);
}

/** Throws, naming the encoding and showing a little context, when any form of any secret occurs in text. */
export function assertNoCanary(text: string, secrets: string[]): void {
  for (const secret of secrets) {
    for (const form of canaryForms(secret)) {
      const at = text.indexOf(form);
      if (at >= 0) {
        const context = text.slice(Math.max(0, at - 40), at + form.length + 40);
        throw new Error(`canary leaked as "${form}" at offset ${at}: …${context}…`);
      }
    }
  }
}
