import { encodeProtobufEnvelope, encodeProtobufListPieces, encodeProtobufMessage } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { KeyValue } from '@orch/storage';

/** Bytes of messages kept by default (about a tenth of the gateway's heap at 100,000 small objects). */
export const STORED_PROTOBUF_BYTES = 32 * 1024 * 1024;

interface Encoded {
  revision: number;
  apiVersion: string;
  kind: string;
  message: Buffer;
}

/** A list page of stored values (GenericStore.listVerbatim). */
export interface StoredList {
  apiVersion: string;
  kind: string;
  metadata: object;
  items: readonly KeyValue[];
}

/**
 * The protobuf messages of stored objects served verbatim (GenericStore.getVerbatim and
 * listVerbatim), each encoded once per stored revision and reused by every protobuf GET and
 * list page that serves it until the object changes (issue 16 item 4; JSON already serves the
 * stored text). Messages are kept by storage key, at most `maxBytes` of them: past that the
 * ones encoded longest ago go first. One per gateway (its storage keys name one store).
 */
export class StoredProtobuf {
  private readonly byKey = new Map<string, Encoded>();
  private bytes = 0;

  constructor(private readonly maxBytes = STORED_PROTOBUF_BYTES) {}

  /** Bytes of the messages held. */
  get size(): number {
    return this.bytes;
  }

  /** The protobuf body of a GET of `kv`, in the envelope's `apiVersion` (a `*.k8s.io` alias may ask for another group). Throws ProtobufError as encodeProtobuf. */
  object(kv: KeyValue, apiVersion: (stored: string) => string): Buffer {
    const e = this.encoded(kv);
    return encodeProtobufEnvelope({ apiVersion: apiVersion(e.apiVersion), kind: e.kind }, e.message);
  }

  /**
   * The protobuf body of a list page (its apiVersion, kind and metadata as given) in pieces of about
   * `pieceBytes`. Every item's message is encoded (or found) here: throws ProtobufError as encodeProtobuf.
   */
  list(page: StoredList, pieceBytes: number): Generator<Buffer, void, undefined> {
    const messages = page.items.map((kv) => this.encoded(kv).message);
    return encodeProtobufListPieces(page, messages, pieceBytes);
  }

  /** The stored objects as the registry would serve them (for a body that is written otherwise). */
  static objects(kvs: readonly KeyValue[]): KubeObject[] {
    return kvs.map(parseStored);
  }

  private encoded(kv: KeyValue): Encoded {
    const hit = this.byKey.get(kv.key);
    if (hit && hit.revision === kv.modRevision) return hit;
    const obj = parseStored(kv);
    const e: Encoded = { revision: kv.modRevision, apiVersion: obj.apiVersion, kind: obj.kind, message: encodeProtobufMessage(obj) };
    if (hit) {
      this.byKey.delete(kv.key);
      this.bytes -= hit.message.length;
    }
    if (e.message.length <= this.maxBytes) {
      this.byKey.set(kv.key, e);
      this.bytes += e.message.length;
      for (const [key, old] of this.byKey) {
        if (this.bytes <= this.maxBytes) break;
        this.byKey.delete(key);
        this.bytes -= old.message.length;
      }
    }
    return e;
  }
}

/** A stored value as the registry reads it: parsed, its modRevision as resourceVersion. */
function parseStored(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value) as KubeObject;
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}
