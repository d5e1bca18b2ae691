import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../quickstart/local-stack';
import { quickStartBlocks, quickStartScript, SKIP_MARKER } from '../quickstart/readme-blocks';

const fence = '```';
const readme = (body: string) => `# Title\n\n${fence}sh\necho before\n${fence}\n\n## Quick start\n\n${body}\n## Next\n\n${fence}sh\necho after\n${fence}\n`;

describe("README.md's Quick start blocks", () => {
  test('only the sh blocks of the Quick start section, in order, with their README line', () => {
    const text = readme(`${SKIP_MARKER}\n${fence}sh\nnpm start\n${fence}\n\n${fence}text\nnot shell\n${fence}\n\n${fence}sh\necho one\n${fence}\n\n${fence}sh\necho two\n${fence}\n`);
    const blocks = quickStartBlocks(text);
    expect(blocks.map((b) => b.code)).toEqual(['echo one', 'echo two']);
    for (const b of blocks) expect(text.split('\n')[b.line - 1]).toBe(b.code);
  });

  test('a README without the section, with no block to run, or with an unclosed block is refused', () => {
    expect(() => quickStartBlocks('# Title\n')).toThrow(/no "## Quick start"/);
    expect(() => quickStartBlocks(readme(`${SKIP_MARKER}\n${fence}sh\nnpm start\n${fence}\n`))).toThrow(/no sh block/);
    expect(() => quickStartBlocks(readme(`${fence}sh\necho open\n`))).toThrow(/not closed/);
  });

  test('the script stops at the first failing command, an unset variable and a failing pipe included', () => {
    const run = (...codes: string[]) =>
      spawnSync('bash', ['-c', quickStartScript(codes.map((code, i) => ({ line: i + 1, code })))], { encoding: 'utf8' });
    expect(run('echo a', 'echo b')).toMatchObject({ status: 0, stdout: 'a\nb\n' });
    expect(run('echo a', 'false', 'echo b')).toMatchObject({ status: 1, stdout: 'a\n' });
    expect(run('echo "$NOT_SET_ANYWHERE"', 'echo b').status).not.toBe(0);
    expect(run('X=$(false | cat)', 'echo b').stdout).toBe('');
    // Blocks share one session: a variable defined in one is there in the next.
    expect(run('X=42', 'echo "$X"')).toMatchObject({ status: 0, stdout: '42\n' });
  });

  test("the README's own Quick start: a block per step, starting the stack left to the runner", () => {
    const blocks = quickStartBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.some((b) => /\bnpm (ci|start|install)\b/.test(b.code))).toBe(false);
    const script = blocks.map((b) => b.code).join('\n');
    expect(script).toMatch(/presentation-valid/);
    expect(script).toMatch(/credential_revoked/);
  });
});
