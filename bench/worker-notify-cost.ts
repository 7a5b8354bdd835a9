/**
 * Where a notification's cost goes inside workerd (`BENCH_PARTS=outbox`, printed by
 * worker-inbox.ts before the W3 ratios): each piece of a delivery (outbox.ts's send and
 * deliverInOrder) done `count` times in a row inside a run object, timed by the Worker
 * around the object's RPC call (workerd's clock moves on I/O only, so a piece cannot be
 * timed from within; the RPC call is I/O to the Worker, and its own cost is the `rpc`
 * piece, the call with nothing in it). The pieces use the libraries the outbox uses, and
 * the benchmark's notification receiver.
 */
import { Webhook } from 'standardwebhooks';
import type { DoStorage } from '../src/worker/platform-types.ts';

/** The pieces of a delivery, in the order a delivery does them. */
export const NOTIFY_PIECES = ['rpc', 'list-pending', 'body', 'sign', 'request', 'request+timeout', 'fetch', 'transaction', 'set-alarm'] as const;

/** One piece of a delivery. */
export type NotifyPiece = (typeof NOTIFY_PIECES)[number];

/** What a piece is done with: the object's storage, the receiver's URL and the target's secret. */
export interface NotifyCostContext {
  storage: DoStorage;
  url: string;
  secret: string;
}

const DATA = { run_id: 'f'.repeat(64), prompt: 'w3', status: 'completed', result: 'blue', error: null };

/** Does `piece` `count` times, in the run object (the caller times the call). */
export async function doNotifyPiece(context: NotifyCostContext, piece: NotifyPiece, count: number): Promise<void> {
  const { storage, url } = context;
  const webhook = new Webhook(context.secret);
  const body = JSON.stringify({ type: 'run.completed', timestamp: new Date().toISOString(), data: DATA });
  const request = (signal: boolean) =>
    new Request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'x.1',
        'webhook-timestamp': '1',
        'webhook-signature': 'v1,x',
        'user-agent': 'Runvil-Notifications/1',
      },
      body,
      ...(signal ? { signal: AbortSignal.timeout(15_000) } : {}),
    });
  if (piece === 'list-pending') {
    storage.kv.put('bench-notify:000000001:000', 'bench-record:1');
    storage.kv.put('bench-record:1', { url, state: 'retrying', data: DATA });
  }
  for (let i = 0; i < count; i++) {
    switch (piece) {
      case 'rpc':
        break;
      case 'list-pending':
        for (const [, key] of storage.kv.list<string>({ prefix: 'bench-notify:' })) storage.kv.get(key);
        break;
      case 'body':
        JSON.stringify({ type: 'run.completed', timestamp: new Date().toISOString(), data: { ...DATA } });
        break;
      case 'sign':
        webhook.sign(`x.${i}`, new Date(), body);
        break;
      case 'request':
        request(false);
        break;
      case 'request+timeout':
        request(true);
        break;
      case 'fetch': {
        const response = await fetch(request(false));
        await response.body?.cancel();
        break;
      }
      case 'transaction':
        storage.transactionSync(() => {
          storage.kv.put('bench-record:2', { url, state: 'delivered', attempts: i, data: DATA });
          storage.kv.delete('bench-notify:000000002:000');
        });
        break;
      case 'set-alarm':
        await storage.setAlarm(Date.now() + 3_600_000 + i);
        break;
    }
  }
  if (piece === 'set-alarm') await storage.deleteAlarm();
}
