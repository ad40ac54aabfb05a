import { DEFAULT_ENABLED_PLUGINS, orderPlugins, selectAdmissionPlugins } from './plugins';

const PROVIDED = ['NamespaceLifecycle', 'LimitRanger', 'PodSecurity', 'Priority', 'ResourceQuota', 'PodNodeSelector', 'DefaultTolerationSeconds', 'ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'];

describe('--enable-admission-plugins / --disable-admission-plugins', () => {
  it.each([
    { name: 'defaults that are provided, in upstream order', enable: [], disable: [], want: ['NamespaceLifecycle', 'LimitRanger', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota'] },
    { name: 'enable an off-by-default plugin', enable: ['PodNodeSelector'], disable: [], want: ['NamespaceLifecycle', 'LimitRanger', 'PodSecurity', 'PodNodeSelector', 'Priority', 'DefaultTolerationSeconds', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota'] },
    { name: 'disable defaults', enable: [], disable: ['PodSecurity', 'ResourceQuota'], want: ['NamespaceLifecycle', 'LimitRanger', 'Priority', 'DefaultTolerationSeconds', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] },
  ])('$name', ({ enable, disable, want }) => {
    expect(selectAdmissionPlugins(PROVIDED, enable, disable)).toEqual(want);
  });

  it.each([
    [['Bogus'], [], /unknown admission plugin\(s\) "Bogus"/],
    [[], ['AlwaysPullImages'], /unknown admission plugin\(s\) "AlwaysPullImages"/],
    [['PodNodeSelector'], ['PodNodeSelector'], /appear in both/],
  ])('enable %j disable %j fails start-up', (enable, disable, message) => {
    expect(() => selectAdmissionPlugins(PROVIDED, enable, disable)).toThrow(message);
  });

  it.each([
    { name: 'a configurable plugin that runs', configured: ['PodSecurity'], want: undefined },
    { name: 'a plugin that does not run (not read, as upstream)', configured: ['PodNodeSelector'], want: undefined },
    { name: 'a running plugin that takes no configuration', configured: ['LimitRanger'], want: /configures admission plugin\(s\) LimitRanger, which take no configuration here/ },
  ])('configuration file naming $name', ({ configured, want }) => {
    const select = () => selectAdmissionPlugins(PROVIDED, [], [], configured);
    if (want) expect(select).toThrow(want);
    else expect(select).not.toThrow();
  });

  it('orders webhooks, policies and quota last, as upstream', () => {
    expect(orderPlugins(['ResourceQuota', 'ValidatingAdmissionWebhook', 'NamespaceLifecycle', 'ValidatingAdmissionPolicy', 'MutatingAdmissionWebhook'])).toEqual(['NamespaceLifecycle', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
    expect(DEFAULT_ENABLED_PLUGINS).toContain('ServiceAccount');
  });

  it("is on by default: upstream's default-on plugins, in upstream's order", () => {
    expect(DEFAULT_ENABLED_PLUGINS).toEqual([
      'NamespaceLifecycle',
      'LimitRanger',
      'ServiceAccount',
      'TaintNodesByCondition',
      'PodSecurity',
      'Priority',
      'DefaultTolerationSeconds',
      'DefaultStorageClass',
      'StorageObjectInUseProtection',
      'PersistentVolumeClaimResize',
      'RuntimeClass',
      'CertificateApproval',
      'CertificateSigning',
      'ClusterTrustBundleAttest',
      'CertificateSubjectRestriction',
      'DefaultIngressClass',
      'MutatingAdmissionPolicy',
      'MutatingAdmissionWebhook',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionWebhook',
      'ResourceQuota',
    ]);
  });
});
