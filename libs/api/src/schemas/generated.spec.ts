import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The generated schemas are exactly what the generator makes of the fact extracts in the
// repository (libs/api/tools/facts): nobody edits generated/ by hand, and a fact changed without
// regenerating (or the reverse) fails here.
describe('libs/api/src/schemas/generated', () => {
  const out = mkdtempSync(join(tmpdir(), 'orch-gen-schemas-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const committed = join(__dirname, 'generated');

  it('is what tools/gen-schemas.mjs writes from tools/facts, byte for byte', () => {
    const r = spawnSync(process.execPath, [join(__dirname, '..', '..', 'tools', 'gen-schemas.mjs'), '--out', out], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readdirSync(out).sort()).toEqual(readdirSync(committed).sort());
    for (const file of readdirSync(committed)) {
      expect({ file, text: readFileSync(join(committed, file), 'utf8') }).toEqual({ file, text: readFileSync(join(out, file), 'utf8') });
    }
  });
});
