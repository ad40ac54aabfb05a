import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The generated schemas and types are exactly what the generator makes of the fact extracts in
// the repository (libs/api/tools/facts): nobody edits generated/ by hand, and a fact changed
// without regenerating (`npm run gen`), or the reverse, fails here.
describe('generated schemas and types', () => {
  const out = mkdtempSync(join(tmpdir(), 'orch-gen-schemas-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [join(__dirname, '..', '..', 'tools', 'gen-schemas.mjs'), '--out', join(out, 'schemas'), '--types-out', join(out, 'types')], { encoding: 'utf8' });

  it('the generator runs cleanly', () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it.each([
    { name: 'libs/api/src/schemas/generated', committed: join(__dirname, 'generated'), fresh: join(out, 'schemas') },
    { name: 'libs/api/src/types/generated', committed: join(__dirname, '..', 'types', 'generated'), fresh: join(out, 'types') },
  ])('$name is what tools/gen-schemas.mjs writes from tools/facts, byte for byte', ({ committed, fresh }) => {
    expect(readdirSync(fresh).sort()).toEqual(readdirSync(committed).sort());
    for (const file of readdirSync(committed)) {
      expect({ file, text: readFileSync(join(committed, file), 'utf8') }).toEqual({ file, text: readFileSync(join(fresh, file), 'utf8') });
    }
  });
});
