// Kept so existing imports stay valid: the protocol table and its helpers now
// live in one module per protocol under ./protocols/ (see its index.ts).
export * from './protocols/index.js';
