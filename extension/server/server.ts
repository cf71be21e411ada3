// Entry of the Loopgate language server (stdio). Filled in by the language-server work.
export {};
