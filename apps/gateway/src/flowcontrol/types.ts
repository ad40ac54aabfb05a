import type { KubeObject } from '@orch/apimachinery';

// flowcontrol.apiserver.orch.io/v1 objects as API Priority and Fairness reads them.

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  user?: { name: string };
  group?: { name: string };
  serviceAccount?: { namespace: string; name: string };
}

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchema extends KubeObject {
  spec: {
    priorityLevelConfiguration: { name: string };
    matchingPrecedence?: number;
    distinguisherMethod?: { type: 'ByUser' | 'ByNamespace' };
    rules?: PolicyRulesWithSubjects[];
  };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }[] };
}

export interface QueuingConfiguration {
  queues?: number;
  handSize?: number;
  queueLengthLimit?: number;
}

export interface PriorityLevelConfiguration extends KubeObject {
  spec: {
    type: 'Exempt' | 'Limited';
    limited?: {
      nominalConcurrencyShares?: number;
      lendablePercent?: number;
      borrowingLimitPercent?: number;
      limitResponse: { type: 'Queue' | 'Reject'; queuing?: QueuingConfiguration };
    };
    exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
  };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }[] };
}

/** What classification looks at (upstream RequestDigest: the request info and the user). */
export interface RequestDigest {
  user: { username: string; groups: string[] };
  isResourceRequest: boolean;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  path: string;
  /** A list's `limit` query parameter (its cost estimate), when set. */
  limit?: number;
}
