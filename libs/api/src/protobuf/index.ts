export { ProtobufError } from './compile';
export {
  PROTOBUF_MAGIC,
  ProtobufUnsupportedError,
  hasProtobufSchema,
  encodeProtobuf,
  encodeProtobufEnvelope,
  encodeProtobufListPieces,
  encodeProtobufMessage,
  decodeProtobuf,
  encodeWatchEventProtobuf,
  decodeWatchEventProtobuf,
  splitProtobufFrames,
} from './codec';
export { parseGoDuration, formatGoDuration } from '@orch/apimachinery';
