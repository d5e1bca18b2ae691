export { DCQL_FORMATS, validateDcqlQuery, validatePresentationDefinition } from './definition';
export type { DcqlValidation, DefinitionValidation, FormatMap, InputDescriptor, Issue, PresentationDefinition } from './definition';
export { PE_FORMATS } from './formats';
export { locateSubmission, matchDcql, matchDcqlForDefinition, matchDefinition } from './match';
export type { MatchDcqlOptions, MatchedCredential, MatchedCredentials, SubmissionLocation } from './match';
export { dcqlFromDefinition } from './translate';
export type { Translation } from './translate';
