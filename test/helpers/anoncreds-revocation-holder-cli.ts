// Runs holderCheckNonRevocation outside Jest (see holderCheckBatch): reads a JSON array of inputs on
// stdin (tails files in base64), writes the array of results on stdout.
import { readFileSync } from 'node:fs';
import { holderCheckNonRevocation, type HolderRevocationInputs } from './anoncreds-revocation-holder';

const inputs = JSON.parse(readFileSync(0, 'utf8')) as (Omit<HolderRevocationInputs, 'tailsFile'> & { tailsFile: string })[];
const results = inputs.map((i) => holderCheckNonRevocation({ ...i, tailsFile: Buffer.from(i.tailsFile, 'base64') }));
process.stdout.write(JSON.stringify(results));
