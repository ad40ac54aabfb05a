export { freePort } from './ports';
export { tempDir, removeDir } from './temp';
export { startProcess, tcpProbe, httpProbe } from './process';
export type { StartProcessOptions, RunningProcess, ProcessExit, ReadyProbe } from './process';
export { ensureBinary, ensurePythonModule, findBinary, SYSTEM_PYTHON } from './binaries';
export { startEtcd, startEtcdCluster, startNats, startRedis } from './engines';
export type { TestServer, EtcdServer, EtcdCluster, NatsServer, RedisServer } from './engines';
export { ApiPeer } from './api-peer';
export * from './wait';
