// The traffic log: writer, reader, exports.
// The record, its usage, LogHealth and LOG_DEFAULTS are core/'s (record.ts, health.ts, options.ts).
export { openTrafficLog, type TrafficLog, type TrafficLogOptions } from './traffic-log.js';
export { readTrafficLog, LogReadError, type ReadResult } from './reader.js';
export { rotatedFile } from './files.js';
export { toHar, toJsonl } from './har.js';
export { type SanitizeOptions } from './sanitize.js';
export { exportTrafficLog, type ExportFormat, type ExportOptions, type ExportResult } from './export-file.js';
export { parseSince } from './since.js';
