// What our child reports about traffic, as the views receive it: the IPC
// messages of these kinds (core/ipc.ts). The proxy decides the kind and
// whether a request failed; the views switch on `kind` and read nothing from the line.
import type { FromProxy } from '../../core/ipc.js';

export type TrafficEvent = Extract<FromProxy, { kind: 'request' | 'health-probe' | 'hint' | 'alias' }>;
