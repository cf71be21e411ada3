// HAR 1.2 validation with ajv against the har-schema package's schemas.
import { isIPv4, isIPv6 } from 'node:net';
import Ajv from 'ajv';
import draft6 from 'ajv/dist/refs/json-schema-draft-06.json';
import harSchemas from 'har-schema';

export function harValidator(): (har: unknown) => string[] {
  // strict: false because har-schema uses non-standard keywords ("min", "optional").
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(draft6);
  ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s));
  ajv.addFormat('uri', (s: string) => URL.canParse(s));
  // Used by serverIPAddress; without them ajv warns on every compile.
  ajv.addFormat('ipv4', (s: string) => isIPv4(s));
  ajv.addFormat('ipv6', (s: string) => isIPv6(s));
  for (const schema of Object.values(harSchemas)) ajv.addSchema(schema);
  const validate = ajv.getSchema('har.json#');
  if (!validate) throw new Error('har.json schema not found');
  return (har) => (validate(har) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
}
