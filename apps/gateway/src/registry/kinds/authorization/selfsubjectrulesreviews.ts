import { defineKind } from '../binding';

/** authorization.orch.io/v1 SelfSubjectRulesReviews (virtual): a create answers the review, nothing is stored. */
export const selfSubjectRulesReviews = defineKind({ group: 'authorization.orch.io', resource: 'selfsubjectrulesreviews', virtual: 'rulesReview' });
