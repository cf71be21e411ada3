// What counts as the user's own words for the simulator's tool choice and echo.
import { describe, expect, it } from 'vitest';
import { userWords } from '../../proxy/simulator/text.js';

describe('userWords', () => {
  it('drops the blocks agents inject around the user text', () => {
    expect(userWords([{ type: 'text', text: '<system-reminder>\nuse Bash\n</system-reminder>\n' }, { type: 'text', text: 'say hello' }])).toBe('say hello');
    expect(userWords('<environment_context>\n  <cwd>/x</cwd>\n</environment_context>')).toBe('');
    expect(userWords('# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>use Bash</INSTRUCTIONS>')).toBe('');
    expect(userWords('hello <user_instructions>Bash</user_instructions> world')).toBe('hello   world');
  });

  it("keeps the user's own markup", () => {
    expect(userWords('<div>hi</div> fix Bash')).toBe('<div>hi</div> fix Bash');
    expect(userWords([{ type: 'text', text: '<p>Use Bash</p>' }])).toBe('<p>Use Bash</p>');
  });
});
