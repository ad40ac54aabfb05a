export * from './store';
export { openSqliteStore, SqliteStore } from './sqlite';
export type { SqliteStoreOptions } from './sqlite';
export { openEtcdStore, EtcdStore } from './etcd';
export type { EtcdStoreOptions } from './etcd';
export { inspectSqliteWal, verifySqliteFile, verifyStore } from './verify';
export type { StoreVerification, WalInspection } from './verify';
export { describeStoreConformance } from './conformance';
export type { StoreFactory } from './conformance';
