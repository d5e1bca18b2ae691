/**
 * The Quick start's shell blocks, as README.md shows them: every ```sh block between the
 * "## Quick start" heading and the next level-2 heading, in order, except a block directly preceded by
 * the line `<!-- quickstart: not run -->` (the one that starts the stack, which the runner starts itself).
 */
export interface ShellBlock {
  /** 1-based line of the block's first command in README.md. */
  readonly line: number;
  readonly code: string;
}

export const SKIP_MARKER = '<!-- quickstart: not run -->';

export function quickStartBlocks(readme: string): ShellBlock[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => /^## Quick start\s*$/.test(l));
  if (start < 0) throw new Error('README.md has no "## Quick start" section');
  let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  if (end < 0) end = lines.length;
  const blocks: ShellBlock[] = [];
  for (let i = start + 1; i < end; i++) {
    const fence = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!fence) continue;
    const close = lines.findIndex((l, j) => j > i && l.trim() === fence[2]);
    if (close < 0 || close >= end) throw new Error(`README.md line ${i + 1}: a code block that is not closed inside the Quick start`);
    let before = i - 1;
    while (before > start && lines[before]!.trim() === '') before--;
    if (fence[3]!.trim() === 'sh' && lines[before]!.trim() !== SKIP_MARKER) {
      blocks.push({ line: i + 2, code: lines.slice(i + 1, close).join('\n') });
    }
    i = close;
  }
  if (blocks.length === 0) throw new Error('the Quick start has no sh block to run');
  return blocks;
}

/**
 * One bash script of the blocks, as pasted one after the other into one shell, but stopping at the first
 * failing command (`set -euo pipefail`: an unset variable fails too), each block announced on stderr.
 */
export function quickStartScript(blocks: readonly ShellBlock[]): string {
  const parts = ['set -euo pipefail'];
  for (const b of blocks) parts.push(`printf '\\n=== README.md line %s ===\\n' ${b.line} >&2`, b.code);
  return `${parts.join('\n')}\n`;
}
