import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAdmissionConfiguration } from './admission-config';

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'orch-admission-config-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const PSA = 'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n';

describe('--admission-control-config-file', () => {
  it('no file: no configuration', () => {
    expect(readAdmissionConfiguration('').size).toBe(0);
  });

  it.each([
    { name: 'inline configuration, k8s.io spelling', apiVersion: 'apiserver.config.k8s.io/v1' },
    { name: 'orch spelling', apiVersion: 'apiserver.config.orch.io/v1' },
    { name: 'v1alpha1', apiVersion: 'apiserver.k8s.io/v1alpha1' },
  ])('reads $name', ({ apiVersion }) => {
    const file = write('inline.yaml', `apiVersion: ${apiVersion}\nkind: AdmissionConfiguration\nplugins:\n- name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig:\n      clusterDefaultNodeSelector: pool=general\n`);
    expect([...readAdmissionConfiguration(file)]).toEqual([['PodNodeSelector', { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'pool=general' } }]]);
  });

  it('reads a path relative to the configuration file', () => {
    write('psa.yaml', PSA);
    const file = write('by-path.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n');
    expect(readAdmissionConfiguration(file).get('PodSecurity')).toEqual({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' } });
  });

  it.each([
    { name: 'a missing file', text: undefined, want: /cannot read the file/ },
    { name: 'not YAML', text: 'plugins: [', want: /not YAML or JSON/ },
    { name: 'not an object', text: '- a', want: /the document must be an object/ },
    { name: 'a wrong apiVersion', text: 'apiVersion: v1\nkind: AdmissionConfiguration\n', want: /apiVersion: Unsupported value: "v1": supported values: "apiserver.config.orch.io\/v1"/ },
    { name: 'a wrong kind', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: Config\n', want: /kind: Unsupported value: "Config"/ },
    { name: 'an unknown field', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n', want: /plugin: unknown field/ },
    { name: 'plugins not a list', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: {}\n', want: /plugins: must be a list/ },
    { name: 'a plugin without a name', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- configuration: {}\n', want: /plugins\[0\].name: Required value/ },
    { name: 'a plugin twice', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n- name: PodSecurity\n', want: /plugins\[1\].name: Duplicate value: "PodSecurity"/ },
    { name: 'path and configuration', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n  configuration: {}\n', want: /plugins\[0\]: path and configuration are mutually exclusive/ },
    { name: 'a path that cannot be read', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: nowhere.yaml\n', want: /plugins\[0\].path: cannot read the file/ },
    { name: 'a configuration that is not an object', text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: restricted\n', want: /plugins\[0\].configuration: must be an object/ },
  ])('refuses $name, naming the file and the field', ({ text, want }) => {
    const file = text === undefined ? join(dir, 'absent.yaml') : write('bad.yaml', text);
    expect(() => readAdmissionConfiguration(file)).toThrow(want);
    expect(() => readAdmissionConfiguration(file)).toThrow(`${file}: invalid admission configuration: `);
  });
});
