// A Prisma generator that writes the schema's DMMF (models with their database names, native
// types, indexes and relations) as JSON, so the migration drift test can read schema.prisma
// without Prisma's native schema engine (which these machines cannot download).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import generatorHelper from '@prisma/generator-helper';

generatorHelper.generatorHandler({
  onManifest: () => ({ prettyName: 'DMMF JSON', defaultOutput: './dmmf.json' }),
  onGenerate: async (options) => {
    const output = options.generator.output?.value;
    if (!output) throw new Error('dmmf generator: no output path');
    await mkdir(path.dirname(output), { recursive: true });
    await writeFile(output, `${JSON.stringify({ datamodel: options.dmmf.datamodel }, null, 2)}\n`);
  },
});
