import type { KubeObject } from './api';
import type { UsageSample } from './metrics';

const WIDTH = 120;
const HEIGHT = 24;

export const formatCpu = (m: number) => (m >= 1000 ? `${(m / 1000).toFixed(2)} cores` : `${Math.round(m)}m CPU`);
export const formatMemory = (b: number) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${Math.round(b / 2 ** 20)} MiB`);

/**
 * A small line of a usage series (oldest left), scaled to `max` (the capacity when known, else
 * the series' own peak). Its accessible name says the latest value and how many samples it shows.
 */
export function Sparkline({ samples, value, label, format, max }: { samples: UsageSample[]; value: (s: UsageSample) => number; label: string; format: (v: number) => string; max?: number }) {
  if (samples.length === 0) return <span aria-label={`${label}: no metrics yet`}>–</span>;
  const values = samples.map(value);
  const top = Math.max(max ?? 0, ...values) || 1;
  const x = (i: number) => (values.length === 1 ? WIDTH : (i / (values.length - 1)) * WIDTH);
  const y = (v: number) => HEIGHT - 2 - (v / top) * (HEIGHT - 4);
  const latest = values[values.length - 1];
  const minutes = Math.max(0, Math.round((samples[samples.length - 1].at - samples[0].at) / 60_000));
  const name = `${label}: ${format(latest)} now; ${values.length} sample${values.length === 1 ? '' : 's'}${minutes ? ` over ${minutes} min` : ''}`;
  return (
    <span class="spark">
      <svg class="sparkline" role="img" aria-label={name} width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} data-samples={values.length}>
        <title>{name}</title>
        {values.length > 1 && <polyline fill="none" stroke="currentColor" stroke-width="1.5" points={values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')} />}
        <circle cx={x(values.length - 1)} cy={y(latest)} r={2} fill="currentColor" />
      </svg>{' '}
      {format(latest)}
    </span>
  );
}

/** When an event last happened (events.k8s.io `eventTime`, core `lastTimestamp`, or its first time). */
export function eventTime(e: KubeObject): number {
  return Date.parse(String(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '')) || 0;
}

/**
 * Events on a time line, oldest left, now at the right: a mark per event (Warning marks red and
 * taller), a bar from its first to its last time when it repeated. Mouse users read each mark's
 * title; the events table beside it carries the same facts for everyone.
 */
export function EventTimeline({ events, width = 640 }: { events: KubeObject[]; width?: number }) {
  const times = events.map(eventTime).filter((t) => t > 0);
  if (times.length === 0) return null;
  const now = Date.now();
  const start = Math.min(...times, ...events.map((e) => Date.parse(String(e.firstTimestamp ?? '')) || now));
  const span = Math.max(60_000, now - start);
  const x = (t: number) => 8 + ((t - start) / span) * (width - 16);
  const warnings = events.filter((e) => e.type === 'Warning').length;
  const minutes = Math.round(span / 60_000);
  const name = `Timeline of ${events.length} event${events.length === 1 ? '' : 's'} (${warnings} warning${warnings === 1 ? '' : 's'}) over the last ${minutes} min`;
  return (
    <svg class="timeline" role="img" aria-label={name} width={width} height={44} viewBox={`0 0 ${width} 44`} data-events={events.length}>
      <title>{name}</title>
      <line x1={8} x2={width - 8} y1={30} y2={30} stroke="#8c959f" />
      <text x={8} y={42} font-size="9" fill="#57606a">
        {minutes} min ago
      </text>
      <text x={width - 8} y={42} font-size="9" fill="#57606a" text-anchor="end">
        now
      </text>
      {events.map((e) => {
        const last = eventTime(e);
        const first = Date.parse(String(e.firstTimestamp ?? '')) || last;
        const warning = e.type === 'Warning';
        const color = warning ? '#cf222e' : '#0969da';
        return (
          <g class={`mark ${warning ? 'warning' : 'normal'}`} key={e.metadata.uid}>
            <title>{`${e.type ?? 'Normal'} ${String(e.reason ?? '')} ×${String(e.count ?? 1)}: ${String(e.message ?? '')}`}</title>
            {first < last && <line x1={x(first)} x2={x(last)} y1={30} y2={30} stroke={color} stroke-width={4} opacity={0.5} />}
            <line x1={x(last)} x2={x(last)} y1={warning ? 8 : 16} y2={30} stroke={color} stroke-width={2} />
          </g>
        );
      })}
    </svg>
  );
}
