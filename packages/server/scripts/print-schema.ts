// Prints the GraphQL schema, sorted, to schema.graphql at the repo root; with --check, fails
// when the committed file differs from what the code builds.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/graphql/schema/index.ts';

const file = path.resolve(import.meta.dirname, '../../../schema.graphql');
const printed = `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv.includes('--check')) {
  const committed = await readFile(file, 'utf8').catch(() => '');
  if (committed !== printed) {
    console.error(
      'schema.graphql is stale: run `pnpm --filter @gatehouse/server schema:print` and commit it.',
    );
    process.exit(1);
  }
  console.log('schema.graphql is up to date');
} else {
  await writeFile(file, printed);
  console.log(`wrote ${file}`);
}
