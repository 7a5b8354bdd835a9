/**
 * Where a deployment's run events are pushed: the `notify:` entries of its runvil.yaml
 * (DESIGN.md Part 2, "Notifications"), and the scale of the retry schedule.
 */
import type { NotifyTarget } from '../../config/deployment-config.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import type { Env } from '../env.ts';

/** The notify targets of the deployment's bundled configuration. */
export function notifyTargetsOf(_env: Env): readonly NotifyTarget[] {
  return deploymentConfig().notify;
}

/**
 * The factor the notification retry schedule (10 s, 1 min, 10 min, 1 h, 6 h) is multiplied
 * by: `RUNVIL_NOTIFY_RETRY_SCALE`, a number above 0 and at most 1, for tests that cannot
 * wait 10 s for a retry; 1 (the documented schedule) when unset or not such a number.
 */
export function notifyRetryScale(env: Env): number {
  const text = Object.hasOwn(env, 'RUNVIL_NOTIFY_RETRY_SCALE') ? env.RUNVIL_NOTIFY_RETRY_SCALE : undefined;
  const scale = Number(text);
  return typeof text === 'string' && Number.isFinite(scale) && scale > 0 && scale <= 1 ? scale : 1;
}
