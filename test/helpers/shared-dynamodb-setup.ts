export { setup as default } from './shared-dynamodb';
