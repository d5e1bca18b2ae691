import {
  AccountSendingPausedException,
  ConfigurationSetDoesNotExistException,
  ConfigurationSetSendingPausedException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  SendRawEmailCommand,
  SESServiceException,
  type SESClient,
} from '@aws-sdk/client-ses';
import { MailerRejectedError, MailerThrottledError, type Mailer } from '../email/mailer';

/** What SendRawEmail models as failures that no retry of this message can cure. */
const REJECTED = [
  MessageRejected,
  MailFromDomainNotVerifiedException,
  ConfigurationSetDoesNotExistException,
  ConfigurationSetSendingPausedException,
  AccountSendingPausedException,
] as const;

/**
 * SES v1 does not model its throttling: "Maximum sending rate exceeded" (and "Daily message quota
 * exceeded") come as code `Throttling` with HTTP 400, which the SDK turns into a bare
 * SESServiceException named after the code, with no `$retryable` trait. So the name decides, as it
 * does in the SDK's own retry classification.
 */
const THROTTLING_NAMES = new Set(['Throttling', 'ThrottlingException', 'TooManyRequestsException']);

/** Unmodeled too: a malformed address or message ("Missing final '@domain'", "Illegal content"). */
const INVALID_MESSAGE_NAMES = new Set(['InvalidParameterValue']);

function mapSesError(err: unknown): unknown {
  if (!(err instanceof SESServiceException)) return err;
  const what = `${err.name}: ${err.message}`;
  if (err.$retryable?.throttling || err.$metadata?.httpStatusCode === 429 || THROTTLING_NAMES.has(err.name)) {
    return new MailerThrottledError(`SES throttled the send (${what})`, { cause: err });
  }
  if (REJECTED.some((cls) => err instanceof cls) || INVALID_MESSAGE_NAMES.has(err.name)) {
    return new MailerRejectedError(`SES rejected the message (${what})`, { cause: err });
  }
  return err;
}

/** {@link Mailer} on SES SendRawEmail (recipients from the message's headers). */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESClient,
    private readonly opts: { configurationSet?: string } = {},
  ) {}

  async send(raw: Buffer): Promise<{ messageId: string }> {
    let out;
    try {
      out = await this.ses.send(
        new SendRawEmailCommand({
          RawMessage: { Data: raw },
          ...(this.opts.configurationSet ? { ConfigurationSetName: this.opts.configurationSet } : {}),
        }),
      );
    } catch (err) {
      throw mapSesError(err);
    }
    if (!out.MessageId) throw new Error('SES answered SendRawEmail without a MessageId');
    return { messageId: out.MessageId };
  }
}
