export { ProtobufError } from './convert';
export {
  PROTOBUF_MAGIC,
  ProtobufUnsupportedError,
  hasProtobufSchema,
  encodeProtobuf,
  decodeProtobuf,
  encodeWatchEventProtobuf,
  decodeWatchEventProtobuf,
  splitProtobufFrames,
} from './codec';
export { parseGoDuration, formatGoDuration } from '@orch/apimachinery';
