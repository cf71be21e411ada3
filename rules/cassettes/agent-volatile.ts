// What each agent writes into its prompt that changes between two runs of the
// same session for no reason the answer depends on, as found in the requests
// the pinned agents send (test/fixtures/agent-cassettes/, and Claude Code run in a
// git repository): the match (cassette-match.ts) puts a stand-in for each
// before it compares, so a replay in CI, after a commit, in another checkout
// folder, still finds its recording. Data only: one row a block, with the
// agent that sends it, what it is, the pattern and its stand-in.

export interface VolatileBlock {
  /** The client that sends it, as the session book names it. */
  agent: string;
  /** What the block is, as docs/cassettes.md lists it. */
  what: string;
  /** Matched in every string of the body (global). */
  pattern: RegExp;
  /** What it becomes ($1… from the pattern's groups). */
  stand: string;
}

export const AGENT_VOLATILE_BLOCKS: readonly VolatileBlock[] = [
  {
    agent: 'claude-code',
    what: 'the gitStatus snapshot (branch, git user, status, recent commits) it attaches in a git repository',
    // Up to the sentence Claude Code closes it with, else to the end of its <system-reminder>.
    pattern: /(# gitStatus\n)[\s\S]*?(?=\n\nClaude Code attached this context|\n<\/system-reminder>|$)/g,
    stand: '$1<git status>',
  },
  {
    agent: 'claude-code',
    what: 'the working directory in its environment block',
    pattern: /(Primary working directory: )[^\n]*/g,
    stand: '$1<cwd>',
  },
  {
    agent: 'claude-code',
    what: 'its memory folder, named after the working directory (~/.claude/projects/-tmp-work/memory/)',
    pattern: /(\/\.claude\/projects\/)[^/\s`'"]+/g,
    stand: '$1<cwd>',
  },
  {
    agent: 'codex',
    what: 'the working directory and workspace roots in its <environment_context>',
    pattern: /<(cwd|root)>[^<]*<\/(cwd|root)>/g,
    stand: '<$1><cwd></$2>',
  },
  {
    agent: 'codex',
    what: 'the time zone in its <environment_context>',
    pattern: /<timezone>[^<]*<\/timezone>/g,
    stand: '<timezone><zone></timezone>',
  },
];
