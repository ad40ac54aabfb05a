// Which admission plugins run: upstream's default set, changed by --enable-admission-plugins
// and --disable-admission-plugins. A name that is not an admission plugin of this gateway
// fails start-up, as upstream's does.

/**
 * Every plugin name upstream knows, in upstream's order (AllOrderedPlugins): the chain runs
 * plugins in this order. The ones this gateway does not provide are refused by name.
 */
export const UPSTREAM_PLUGIN_ORDER: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  // webhook, policy and quota plugins go last
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** Upstream's default-off plugins (kube-apiserver 1.32 DefaultOffAdmissionPlugins). */
const DEFAULT_OFF_PLUGINS: ReadonlySet<string> = new Set([
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'NodeRestriction',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodNodeSelector',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'OwnerReferencesPermissionEnforcement',
  'DenyServiceExternalIPs',
  'AlwaysDeny',
]);

/** Upstream's default-on plugins, in upstream's order: every other one. */
export const DEFAULT_ENABLED_PLUGINS: readonly string[] = UPSTREAM_PLUGIN_ORDER.filter((n) => !DEFAULT_OFF_PLUGINS.has(n));

/** The plugins of this gateway that take a configuration from --admission-control-config-file. */
export const CONFIGURABLE_PLUGINS: readonly string[] = ['PodSecurity', 'PodNodeSelector'];

/**
 * The names of the plugins to run, in chain order: the default set (those this gateway
 * provides), plus `enable`, minus `disable`. Throws (a start-up error) for a name this gateway
 * does not provide, a name in both lists, or a configuration (`configured`) for a plugin that
 * runs here without taking one (a configuration of a plugin that is off is not refused, as
 * upstream).
 */
export function selectAdmissionPlugins(provided: readonly string[], enable: readonly string[], disable: readonly string[], configured: readonly string[] = []): string[] {
  const available = new Set(provided);
  const unknown = [...enable, ...disable].filter((n) => !available.has(n));
  if (unknown.length) {
    const known = [...available].sort().join(', ');
    throw new Error(`unknown admission plugin(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}: the admission plugins of this gateway are ${known}`);
  }
  const both = enable.filter((n) => disable.includes(n));
  if (both.length) throw new Error(`admission plugin(s) ${both.join(', ')} appear in both --enable-admission-plugins and --disable-admission-plugins`);
  const chosen = new Set([...DEFAULT_ENABLED_PLUGINS.filter((n) => available.has(n)), ...enable]);
  for (const n of disable) chosen.delete(n);
  const unconfigurable = configured.filter((n) => chosen.has(n) && !CONFIGURABLE_PLUGINS.includes(n));
  if (unconfigurable.length) throw new Error(`--admission-control-config-file configures admission plugin(s) ${unconfigurable.join(', ')}, which take no configuration here (configurable: ${CONFIGURABLE_PLUGINS.join(', ')})`);
  return orderPlugins([...chosen]);
}

/** Upstream's order; names it does not list follow, by name. */
export function orderPlugins(names: readonly string[]): string[] {
  const rank = (n: string) => {
    const i = UPSTREAM_PLUGIN_ORDER.indexOf(n);
    return i < 0 ? UPSTREAM_PLUGIN_ORDER.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
