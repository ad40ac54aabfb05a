import { defineKind } from '../binding';

/** authentication.orch.io/v1 SelfSubjectReviews (virtual): a create answers the review, nothing is stored. */
export const selfSubjectReviews = defineKind({ group: 'authentication.orch.io', resource: 'selfsubjectreviews', virtual: 'selfSubjectReview' });
