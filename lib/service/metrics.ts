/**
 * Custom CloudWatch metrics (EMF, namespace = the service name) that the stack's alarms read. Refusals
 * are ordinary (wrong or revoked keys); failures mean every authenticated request may be failing.
 */
export const AUTHORIZER_METRICS = { failures: 'AuthorizerFailures', refusals: 'AuthorizerRefusals' } as const;
