import { defineKind } from '../binding';

/** authorization.orch.io/v1 SubjectAccessReviews (virtual): a create answers the review, nothing is stored. */
export const subjectAccessReviews = defineKind({ group: 'authorization.orch.io', resource: 'subjectaccessreviews', virtual: 'accessReview' });
