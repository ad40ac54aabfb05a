import { defineKind } from '../binding';

/** authorization.orch.io/v1 LocalSubjectAccessReviews (virtual): a create answers the review, nothing is stored. */
export const localSubjectAccessReviews = defineKind({ group: 'authorization.orch.io', resource: 'localsubjectaccessreviews', virtual: 'localAccessReview' });
