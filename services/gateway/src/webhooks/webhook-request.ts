import { AppError } from '@tailor/proto'
import { checkDestination } from '@tailor/proto/net'
import type { Principal } from '../access/access-control.ts'
import type { Config } from '../config.ts'
import type { JobWebhook } from '../jobs/job-store.ts'

/**
 * A request's `webhook_url`, checked at submission (every edge calls this before creating the
 * job): the caller's key must have a signing secret (its own, from `tailor keys`, or the
 * server's WEBHOOK_SECRET), and the URL must pass the destination rules
 * that can be checked without a connection (http/https, no credentials, no private IP literal;
 * host names are checked again on every address at each delivery). Refused → invalid_parameter.
 * `resultBaseUrl` is the origin the webhook's result_url will be built on.
 */
export function webhookForRequest(
  config: Pick<Config, 'webhookSecrets' | 'allowLoopback'>,
  caller: Pick<Principal, 'ownWebhookSecret'>,
  webhookUrl: string | undefined,
  resultBaseUrl: string,
): JobWebhook | undefined {
  if (webhookUrl === undefined) return undefined
  if (config.webhookSecrets.length === 0 && caller.ownWebhookSecret !== true) {
    throw new AppError(
      'invalid_parameter',
      'webhook_url was given, but this API key has no webhook signing secret (keys made by `tailor keys create` have one; the server has no WEBHOOK_SECRET for the others); poll the job instead.',
    )
  }
  checkDestination(webhookUrl, config.allowLoopback, 'webhook_url')
  return { url: webhookUrl, resultBaseUrl }
}
