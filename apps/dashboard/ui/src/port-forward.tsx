import { useState } from 'preact/hooks';
import type { KubeObject } from './api';

interface Forward {
  port: number;
  label: string;
  command: string;
}

/**
 * The `kubectl port-forward` commands of a pod's container ports or a Service's ports. The
 * dashboard gives the command rather than a link that opens the forwarded port in the browser:
 * such a page would be served from the dashboard's origin (or the gateway's proxy) and its
 * scripts could then call the dashboard with the viewer's session; kubectl forwards to the
 * user's own machine, with their own credentials, and what is served there stays apart.
 */
export function forwardsOf(obj: KubeObject): Forward[] {
  const ns = obj.metadata.namespace ?? 'default';
  const target = obj.kind === 'Service' ? `service/${obj.metadata.name}` : `pod/${obj.metadata.name}`;
  const ports: { port: number; name?: string; protocol?: string }[] =
    obj.kind === 'Service'
      ? (obj.spec?.ports ?? []).map((p: { port: number; name?: string; protocol?: string }) => p)
      : (obj.spec?.containers ?? []).flatMap((c: { name: string; ports?: { containerPort: number; name?: string; protocol?: string }[] }) => (c.ports ?? []).map((p) => ({ port: p.containerPort, name: p.name ?? c.name, protocol: p.protocol })));
  return ports
    .filter((p) => (p.protocol ?? 'TCP') === 'TCP')
    .map((p) => ({ port: p.port, label: `${p.port}${p.name ? ` (${p.name})` : ''}`, command: `kubectl -n ${ns} port-forward ${target} ${p.port}:${p.port}` }));
}

/** One command per forwardable port, each with a copy button; nothing when there is none. */
export function PortForward({ obj }: { obj: KubeObject }) {
  const [copied, setCopied] = useState('');
  const forwards = forwardsOf(obj);
  if (forwards.length === 0) return null;
  return (
    <section class="port-forward" aria-labelledby="port-forward-title">
      <h3 id="port-forward-title">Port forward</h3>
      <ul>
        {forwards.map((f) => (
          <li key={f.command}>
            <label for={`pf-${f.port}`}>Port {f.label}</label> <input id={`pf-${f.port}`} class="command" readOnly value={f.command} size={f.command.length} onFocus={(e) => (e.target as HTMLInputElement).select()} />{' '}
            <button type="button" onClick={() => void navigator.clipboard.writeText(f.command).then(() => setCopied(f.command), () => setCopied(''))}>
              Copy
            </button>
            {copied === f.command && <span role="status"> Copied.</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}
