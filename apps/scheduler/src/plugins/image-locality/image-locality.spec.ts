import { makeNode, makeNodeInfo, makePod } from '../../framework/testing';
import { PodInfo } from '../../framework/types';
import { imageLocalityScore, podImages } from './image-locality';

const MB = 1024 * 1024;

describe('ImageLocality', () => {
  it.each<{ name: string; images: Array<{ names: string[]; sizeBytes: number }>; podImage: string; numNodes: number; total: number; want: number }>([
    { name: 'image absent', images: [], podImage: 'nginx', numNodes: 1, total: 1, want: 0 },
    { name: 'small image below threshold', images: [{ names: ['nginx:latest'], sizeBytes: 10 * MB }], podImage: 'nginx', numNodes: 1, total: 1, want: 0 },
    { name: 'large image on every node', images: [{ names: ['big:1'], sizeBytes: 1000 * MB }], podImage: 'big:1', numNodes: 2, total: 2, want: 100 },
    { name: 'spread scales the score', images: [{ names: ['big:1'], sizeBytes: 1000 * MB }], podImage: 'big:1', numNodes: 1, total: 2, want: 48 },
    { name: 'untagged name means latest', images: [{ names: ['registry/app:latest'], sizeBytes: 1000 * MB }], podImage: 'registry/app', numNodes: 1, total: 1, want: 100 },
    { name: 'different tag does not count', images: [{ names: ['app:1'], sizeBytes: 1000 * MB }], podImage: 'app:2', numNodes: 1, total: 1, want: 0 },
  ])('$name', ({ images, podImage, numNodes, total, want }) => {
    const node = makeNodeInfo(makeNode('n', { images }));
    const pod = new PodInfo(makePod('p', { spec: { containers: [{ name: 'c', image: podImage }] } }));
    const counts = new Map([...node.imageSizes.keys()].map((k) => [k, numNodes]));
    expect(imageLocalityScore(podImages(pod, counts, total), node)).toBe(want);
  });
});
