export { teardown as default } from './shared-dynamodb';
