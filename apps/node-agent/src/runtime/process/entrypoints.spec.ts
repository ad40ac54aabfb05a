import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, tempDir } from '@orch/testing';
import { commandLine, imageRepository, loadEntrypointTable, lookupEntrypoint } from './entrypoints';
import { ContainerConfigError } from './env';

describe('image entrypoints of the process runtime', () => {
  it.each([
    { image: 'python', want: 'python' },
    { image: 'python:3.12-slim', want: 'python' },
    { image: 'docker.io/library/busybox:1.36', want: 'busybox' },
    { image: 'registry.example.com:5000/team/app@sha256:abc', want: 'team/app' },
    { image: 'localhost/tool:dev', want: 'tool' },
    { image: 'team/app:1', want: 'team/app' },
  ])('imageRepository($image) = $want', ({ image, want }) => {
    expect(imageRepository(image)).toBe(want);
  });

  const table = new Map([
    ['python', { cmd: ['python3'] }],
    ['team/app', { entrypoint: ['/app/run'], cmd: ['--serve'] }],
  ]);

  it.each([
    { name: 'command and args', c: { command: ['sh', '-c'], args: ['echo hi'], image: 'python' }, want: ['sh', '-c', 'echo hi'] },
    { name: 'command drops the image cmd', c: { command: ['/bin/true'], image: 'team/app' }, want: ['/bin/true'] },
    { name: 'args alone (image not in the table)', c: { args: ['node', '-e', '1'], image: 'example/x' }, want: ['node', '-e', '1'] },
    { name: 'image cmd', c: { image: 'python:3' }, want: ['python3'] },
    { name: 'image entrypoint and cmd', c: { image: 'ghcr.io/team/app:2' }, want: ['/app/run', '--serve'] },
    { name: 'args replace the image cmd', c: { image: 'team/app', args: ['--once'] }, want: ['/app/run', '--once'] },
    { name: 'last component of the repository', c: { image: 'mirror.example.com/library/python' }, want: ['python3'] },
  ])('commandLine: $name', ({ c, want }) => {
    expect(commandLine({ name: 'c', ...c }, table)).toEqual(want);
  });

  it('nothing to run is a CreateContainerConfigError naming the container and image', () => {
    expect(() => commandLine({ name: 'web', image: 'example/x' }, table)).toThrow(ContainerConfigError);
    expect(() => commandLine({ name: 'web', image: 'example/x' }, table)).toThrow(/container "web" has no command and no args, and image "example\/x"/);
  });

  describe('--image-entrypoints file', () => {
    let dir: string;
    beforeEach(async () => (dir = await tempDir('entrypoints-')));
    afterEach(() => removeDir(dir));

    it('adds to and overrides the defaults', async () => {
      const file = join(dir, 'e.yaml');
      await writeFile(file, 'python:\n  cmd: [python3.12]\nghcr.io/team/tool:1:\n  entrypoint: [/opt/tool]\n');
      const t = await loadEntrypointTable(file);
      expect(lookupEntrypoint(t, 'python')).toEqual({ cmd: ['python3.12'] });
      expect(lookupEntrypoint(t, 'team/tool')).toEqual({ entrypoint: ['/opt/tool'] });
      expect(lookupEntrypoint(t, 'busybox')).toEqual({ cmd: ['sh'] });
    });

    it.each([
      { name: 'not a map', text: '- a\n', want: /want a map/ },
      { name: 'not a list of strings', text: 'x:\n  cmd: 3\n', want: /x.cmd must be a list of strings/ },
      { name: 'bad YAML', text: 'x: [\n', want: /--image-entrypoints/ },
    ])('rejects $name', async ({ text, want }) => {
      const file = join(dir, 'e.yaml');
      await writeFile(file, text);
      await expect(loadEntrypointTable(file)).rejects.toThrow(want);
    });
  });
});
