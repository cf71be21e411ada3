// The traffic log: writer, reader, exports.
export type { TrafficRecord } from '../core/record.js';
export type { TokenUsage } from '../rules/usage.js';
export { openTrafficLog, describeLogHealth, LOG_DEFAULTS, type TrafficLog, type TrafficLogOptions, type LogHealth } from './traffic-log.js';
export { readTrafficLog, parseTrafficLines, isTrafficRecord, LogReadError, type ReadResult } from './reader.js';
export { rotatedFile, rotatedFiles } from './files.js';
export { toHar, toJsonl } from './har.js';
export { sanitizeRecords, appliedRules, type SanitizeOptions } from './sanitize.js';
export { exportTrafficLog, writePrivateFile, type ExportFormat, type ExportOptions, type ExportResult } from './export.js';
export { parseSince } from './since.js';
