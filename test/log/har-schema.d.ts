// har-schema ships JSON Schemas (draft-06) without type declarations.
declare module 'har-schema' {
  const schemas: Record<string, object>;
  export = schemas;
}
