import { useEffect, useRef, useState } from 'preact/hooks';
import type { KubeObject } from './api';

/** Channels of the `v4.channel.k8s.io` WebSocket protocol (first byte of each binary message). */
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;

/**
 * A terminal on a container: xterm.js over a WebSocket to the pod's exec subresource (through
 * the dashboard, which adds the user's token; the gateway decides whether they may exec).
 */
export function Terminal({ pod, container, command }: { pod: KubeObject; container: string; command: string[] }) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    let socket: WebSocket | undefined;
    let disposed = false;
    let dispose = () => {};
    void (async () => {
      const [{ Terminal: XTerm }] = await Promise.all([import('@xterm/xterm'), import('@xterm/xterm/css/xterm.css')]);
      if (disposed || !host.current) return;
      const term = new XTerm({ rows: 20, cols: 100, convertEol: false, screenReaderMode: true });
      term.open(host.current);
      const q = new URLSearchParams({ container, stdin: 'true', stdout: 'true', tty: 'true' });
      for (const c of command) q.append('command', c);
      const url = `wss://${location.host}/k8s/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata.name)}/exec?${q}`;
      socket = new WebSocket(url, ['v4.channel.k8s.io']);
      socket.binaryType = 'arraybuffer';
      const encoder = new TextEncoder();
      const send = (channel: number, data: Uint8Array) => {
        if (socket?.readyState !== WebSocket.OPEN) return;
        const frame = new Uint8Array(data.length + 1);
        frame[0] = channel;
        frame.set(data, 1);
        socket.send(frame);
      };
      socket.onopen = () => {
        setState('connected');
        send(RESIZE, encoder.encode(JSON.stringify({ Width: term.cols, Height: term.rows })));
        term.focus();
      };
      socket.onmessage = (m) => {
        const data = new Uint8Array(m.data as ArrayBuffer);
        if (data[0] === STDOUT || data[0] === STDERR) term.write(data.subarray(1));
        else if (data[0] === ERROR && data.length > 1) {
          const status = JSON.parse(new TextDecoder().decode(data.subarray(1))) as { status?: string; message?: string };
          if (status.status !== 'Success') term.write(`\r\n[${status.message ?? 'exec failed'}]\r\n`);
        }
      };
      socket.onclose = (e) => setState(e.code === 1000 ? 'ended' : `closed (${e.code}${e.reason ? `: ${e.reason}` : ''})`);
      socket.onerror = () => setState('could not connect (no permission, or the pod is not running)');
      const input = term.onData((d) => send(STDIN, encoder.encode(d)));
      dispose = () => {
        input.dispose();
        term.dispose();
      };
    })();
    return () => {
      disposed = true;
      socket?.close();
      dispose();
    };
  }, [pod.metadata.uid, container, command.join(' ')]);
  return (
    <div class="terminal">
      <p role="status">Terminal: {state}</p>
      <div ref={host} class="terminal-host" aria-label={`Terminal on ${pod.metadata.name}/${container}`} />
    </div>
  );
}
