import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import schema from '../../src/prompt/frontmatter-schema.json';
import { ALIAS_PATTERN } from '../../src/prompt/index.ts';

const root = new URL('../../', import.meta.url);

describe('the generated frontmatter validator', () => {
  it('is what scripts/gen-validators.mjs generates now (run npm run gen after editing the schema)', async () => {
    // A non-literal specifier: the script is plain JS with no type declarations.
    const script: string = new URL('scripts/gen-validators.mjs', root).href;
    const { generateValidators } = (await import(script)) as {
      generateValidators: () => { path: string; text: string }[];
    };
    const files = generateValidators();
    expect(files.map((file) => file.path)).toContain('src/prompt/frontmatter-validator.generated.js');
    for (const file of files) {
      expect(readFileSync(new URL(file.path, root), 'utf8'), file.path).toBe(file.text);
    }
  });

  it('is pure ESM with no require() calls', () => {
    const code = readFileSync(new URL('src/prompt/frontmatter-validator.generated.js', root), 'utf8');
    expect(code).not.toMatch(/\brequire\s*\(/);
    expect(code).toMatch(/export default/);
  });

  it('checks role labels and arg names with the name grammar’s alias pattern', () => {
    expect(schema.properties.models.propertyNames.pattern).toBe(ALIAS_PATTERN.source);
    expect(schema.properties.args.propertyNames.pattern).toBe(ALIAS_PATTERN.source);
  });
});
