import { defineKind } from '../binding';

/** authorization.orch.io/v1 SelfSubjectAccessReviews (virtual): a create answers the review, nothing is stored. */
export const selfSubjectAccessReviews = defineKind({ group: 'authorization.orch.io', resource: 'selfsubjectaccessreviews', virtual: 'selfAccessReview' });
