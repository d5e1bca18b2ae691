import { Logger } from '@aws-lambda-powertools/logger';

/** One Powertools logger per function. Never log keys, tokens, codes or credential contents. */
export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName });
}
