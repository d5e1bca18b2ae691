// Loads the anoncreds-rs vectors in test/helpers/anoncreds-vectors/ (see SOURCE.md there).
import { readFileSync } from 'node:fs';

export function loadVector<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./anoncreds-vectors/${name}`, import.meta.url), 'utf8')) as T;
}
