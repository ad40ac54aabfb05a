import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiRequest } from './api-request';
import { newApiRequest, runPipeline, type Stage } from './pipeline';

describe('runPipeline', () => {
  const request = () => newApiRequest({ method: 'GET', url: '/api/v1/pods?limit=1', headers: {} } as unknown as FastifyRequest, {} as FastifyReply);
  const stage = (name: string, seen: string[], effect?: (r: ApiRequest) => void): Stage => ({
    name,
    run: async (r) => {
      seen.push(name);
      effect?.(r);
    },
  });

  it('runs the stages in order', async () => {
    const seen: string[] = [];
    await runPipeline([stage('a', seen), stage('b', seen), stage('c', seen)], request());
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('stops after the stage that answered', async () => {
    const seen: string[] = [];
    await runPipeline([stage('a', seen), stage('b', seen, (r) => (r.done = true)), stage('c', seen)], request());
    expect(seen).toEqual(['a', 'b']);
  });

  it('stops at a stage that throws', async () => {
    const seen: string[] = [];
    const boom = stage('b', seen, () => {
      throw new Error('denied');
    });
    await expect(runPipeline([stage('a', seen), boom, stage('c', seen)], request())).rejects.toThrow('denied');
    expect(seen).toEqual(['a', 'b']);
  });

  it('newApiRequest splits path and query', () => {
    const r = request();
    expect(r.path).toBe('/api/v1/pods');
    expect(r.query.get('limit')).toBe('1');
  });
});
