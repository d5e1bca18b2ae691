/**
 * `npm run mutation` reads test/mutation/groups.mjs, which finds its line ranges by the text of the
 * code (a renamed or moved function makes it throw). Nothing else loads it, so this test does: a
 * refactoring that breaks a group fails here, not at the next mutation run.
 */
import { existsSync } from 'node:fs';

test('every mutation group resolves: its ranges found, its files and tests there', async () => {
  const groups = '../mutation/groups.mjs';
  const { MUTATION_GROUPS } = (await import(groups)) as { MUTATION_GROUPS: { name: string; mutate: string[]; tests: string[] }[] };
  expect(MUTATION_GROUPS.length).toBeGreaterThan(0);
  for (const g of MUTATION_GROUPS) {
    for (const m of g.mutate) expect([g.name, existsSync(m.split(':')[0]!)]).toEqual([g.name, true]);
    for (const t of g.tests) expect([g.name, existsSync(t)]).toEqual([g.name, true]);
  }
});
