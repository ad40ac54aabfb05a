import { defineKind } from '../binding';

/** authentication.orch.io/v1 TokenReviews (virtual): a create answers the review, nothing is stored. */
export const tokenReviews = defineKind({ group: 'authentication.orch.io', resource: 'tokenreviews', virtual: 'tokenReview' });
