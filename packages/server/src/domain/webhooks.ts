/**
 * Spending alerts to webhooks. When a request takes an alert_only gate over its limit, first in
 * the period (the ledger says so once: Settlement.crossed), one delivery row is written with the
 * body to send, off the request's path. Every gateway process looks for deliveries due; a claim
 * moves the row's next_attempt_at past the attempt's time in one statement (FOR UPDATE SKIP
 * LOCKED), so a delivery is sent by one process at a time, on PGlite and PostgreSQL alike. A
 * non-2xx answer or a network error is retried after retryBaseMs, doubled each time, up to
 * maxAttempts in all; each attempt's status or error is kept on the row.
 *
 * Signed as Stripe does: `x-gatehouse-signature: sha256=<hex>`, the HMAC-SHA256 with the
 * account's signing secret of `<timestamp>.<body>`, the timestamp (Unix seconds) sent in
 * `x-gatehouse-timestamp`; a receiver refuses an old timestamp, so a captured call cannot be
 * replayed later.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { isUuid } from '@gatehouse/rules/ids';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, webhookUrlSchema } from '@gatehouse/rules/webhooks';
import { z } from 'zod';
import { sql } from '../db/client.ts';
import type { Gate } from '../generated/prisma/client.ts';
import { parseWith } from './errors.ts';
import { periodStart, type SpendingPeriod } from './spending.ts';

export type WebhookSettings = {
  /** The first retry's delay; each later one doubles it. */
  retryBaseMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** How often this process looks for deliveries due. */
  pollMs: number;
  /** One attempt's time, connection to answer. */
  timeoutMs: number;
};

/** What an alert says. */
export type SpendingAlert = {
  type: 'spending.limit_crossed';
  gateId: string;
  gateName: string;
  enforcement: string;
  limitUsd: number;
  spentUsd: number;
  period: string;
  periodStart: string;
  crossedAt: string;
  /** The log entry of the request that crossed the limit. */
  entryId: string;
};

/** The signature header's value for `body` sent at `timestamp` (Unix seconds). */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const newSecret = () => `whsec_${randomBytes(32).toString('hex')}`;

/** The account's signing secret, made now if it has none yet. */
export async function signingSecretOf(userId: string): Promise<string> {
  const [row] = await sql().query<{ secret: string }>(
    `UPDATE users SET webhook_signing_secret = coalesce(webhook_signing_secret, $2)
     WHERE id = $1::uuid RETURNING webhook_signing_secret AS secret`,
    [userId, newSecret()],
  );
  if (!row) throw new Error(`no account ${userId}`);
  return row.secret;
}

/** A new signing secret: deliveries from now on (retries included) are signed with it. */
export async function rotateSigningSecret(userId: string): Promise<string> {
  const [row] = await sql().query<{ secret: string }>(
    `UPDATE users SET webhook_signing_secret = $2 WHERE id = $1::uuid RETURNING webhook_signing_secret AS secret`,
    [userId, newSecret()],
  );
  if (!row) throw new Error(`no account ${userId}`);
  return row.secret;
}

/** The account's default webhook, where alerts of gates without one of their own go. */
export async function accountWebhookOf(userId: string): Promise<string | null> {
  const [row] = await sql().query<{ url: string | null }>(
    'SELECT spending_alert_webhook AS url FROM users WHERE id = $1::uuid',
    [userId],
  );
  return row?.url ?? null;
}

const accountWebhookInput = z.object({ url: webhookUrlSchema.nullable() });

/** Sets (or, with null, clears) the account's default webhook. */
export async function setAccountWebhook(userId: string, raw: unknown): Promise<string | null> {
  const { url } = parseWith(accountWebhookInput, raw);
  await sql().query('UPDATE users SET spending_alert_webhook = $2 WHERE id = $1::uuid', [userId, url]);
  return url;
}

/**
 * Writes the alert of a gate whose limit `crossed`, to the gate's webhook or the account's; none
 * set, nothing is written. Returns the delivery's id, or null.
 */
export async function enqueueSpendingAlert(crossed: {
  gate: Gate;
  spent: number;
  entryId: string;
  at?: Date;
}): Promise<string | null> {
  const { gate, spent, entryId } = crossed;
  const at = crossed.at ?? new Date();
  const alert: SpendingAlert = {
    type: 'spending.limit_crossed',
    gateId: gate.id,
    gateName: gate.name,
    enforcement: gate.spendingEnforcement,
    limitUsd: Number(gate.spendingLimit),
    spentUsd: Number(spent.toFixed(8)),
    period: gate.spendingLimitPeriod,
    periodStart: periodStart(gate.spendingLimitPeriod as SpendingPeriod, at).toISOString(),
    crossedAt: at.toISOString(),
    entryId,
  };
  const id = randomUUID();
  // The secret first: the row is due at once, and another process may claim it before a
  // statement after the insert has run.
  await signingSecretOf(gate.userId);
  const rows = await sql().query<{ id: string }>(
    `INSERT INTO spending_alert_deliveries (id, user_id, gate_id, url, payload, next_attempt_at)
     SELECT $1::uuid, u.id, $3::uuid, coalesce(g.spending_alert_webhook, u.spending_alert_webhook), $4, clock_timestamp()
     FROM users u LEFT JOIN gates g ON g.id = $3::uuid AND g.user_id = u.id
     WHERE u.id = $2::uuid AND coalesce(g.spending_alert_webhook, u.spending_alert_webhook) IS NOT NULL
     RETURNING id`,
    [id, gate.userId, gate.id, JSON.stringify(alert)],
  );
  return rows.length === 0 ? null : id;
}

export type Delivery = {
  id: string;
  gateId: string;
  gateName: string | null;
  url: string;
  payload: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  /** delivered; pending (a next attempt is due); failed (every attempt made, none answered 2xx). */
  status: 'delivered' | 'pending' | 'failed';
};

type DeliveryRow = {
  id: string;
  gate_id: string;
  gate_name: string | null;
  url: string;
  payload: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | string | null;
  delivered_at: Date | string | null;
  created_at: Date | string;
};

const dateOrNull = (v: Date | string | null) => (v === null ? null : new Date(v));

function deliveryOf(row: DeliveryRow): Delivery {
  const deliveredAt = dateOrNull(row.delivered_at);
  const nextAttemptAt = dateOrNull(row.next_attempt_at);
  return {
    id: row.id,
    gateId: row.gate_id,
    gateName: row.gate_name,
    url: row.url,
    payload: row.payload,
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt,
    deliveredAt,
    createdAt: new Date(row.created_at),
    status: deliveredAt ? 'delivered' : nextAttemptAt ? 'pending' : 'failed',
  };
}

/** The account's deliveries, newest first; `gateId` keeps one gate's. */
export async function listDeliveries(
  userId: string,
  opts: { gateId?: string | null; limit?: number } = {},
): Promise<Delivery[]> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 200);
  // No gate has an id that is not a UUID: it has no deliveries either.
  if (opts.gateId && !isUuid(opts.gateId)) return [];
  const rows = await sql().query<DeliveryRow>(
    `SELECT d.id, d.gate_id, g.name AS gate_name, d.url, d.payload, d.attempts, d.last_status, d.last_error,
            d.next_attempt_at, d.delivered_at, d.created_at
     FROM spending_alert_deliveries d LEFT JOIN gates g ON g.id = d.gate_id
     WHERE d.user_id = $1::uuid AND ($2::uuid IS NULL OR d.gate_id = $2::uuid)
     ORDER BY d.created_at DESC, d.id LIMIT $3`,
    [userId, opts.gateId ?? null, limit],
  );
  return rows.map(deliveryOf);
}

type Claimed = { id: string; url: string; payload: string; attempts: number; secret: string | null };

/**
 * Claims up to $1 deliveries due: their next attempt is pushed past this one's time ($2 ms), so
 * no other process takes them meanwhile, and their attempt counted. SKIP LOCKED: processes
 * claiming at once take different rows.
 */
const CLAIM = `UPDATE spending_alert_deliveries d
  SET attempts = d.attempts + 1, next_attempt_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000)
  FROM users u
  WHERE d.id IN (SELECT id FROM spending_alert_deliveries
                 WHERE next_attempt_at <= clock_timestamp()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
    AND u.id = d.user_id
  RETURNING d.id, d.url, d.payload, d.attempts, u.webhook_signing_secret AS secret`;

/** Records an attempt's outcome, unless another process has taken the delivery over since. */
const DELIVERED = `UPDATE spending_alert_deliveries SET last_status = $3, last_error = NULL,
    delivered_at = clock_timestamp(), next_attempt_at = NULL
  WHERE id = $1::uuid AND attempts = $2`;
const FAILED = `UPDATE spending_alert_deliveries SET last_status = $3, last_error = $4,
    next_attempt_at = CASE WHEN $5::float8 < 0 THEN NULL
                           ELSE clock_timestamp() + make_interval(secs => $5::float8 / 1000) END
  WHERE id = $1::uuid AND attempts = $2`;

const BATCH = 20;
const ERROR_CHARS = 500;

/** The delay before attempt `attempts + 1`, or -1 when `attempts` were all there are. */
export function retryDelayMs(settings: WebhookSettings, attempts: number): number {
  if (attempts >= settings.maxAttempts) return -1;
  return settings.retryBaseMs * 2 ** (attempts - 1);
}

async function attempt(settings: WebhookSettings, d: Claimed): Promise<void> {
  let status: number | null = null;
  let error: string | null = null;
  try {
    if (!d.secret) throw new Error('the account has no signing secret');
    const timestamp = Math.floor(Date.now() / 1000);
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Gatehouse-Webhooks/1',
        'x-gatehouse-delivery': d.id,
        [TIMESTAMP_HEADER]: String(timestamp),
        [SIGNATURE_HEADER]: signatureOf(d.secret, timestamp, d.payload),
      },
      body: d.payload,
      // A redirect is an answer that is not 2xx: the body is not sent to another place.
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    status = res.status;
    await res.body?.cancel().catch(() => {});
    if (res.ok) {
      await sql().query(DELIVERED, [d.id, d.attempts, status]);
      return;
    }
    error = `answered HTTP ${status}`;
  } catch (e) {
    const cause = (e as { cause?: { message?: string } }).cause?.message;
    error = (e instanceof Error ? `${e.message}${cause ? `: ${cause}` : ''}` : String(e)).slice(
      0,
      ERROR_CHARS,
    );
  }
  await sql().query(FAILED, [d.id, d.attempts, status, error, retryDelayMs(settings, d.attempts)]);
}

/**
 * Sends this process's share of the deliveries due, every pollMs and when `kick`ed (an alert
 * written here). Never throws: a database that cannot be read is reported and tried again.
 */
export function startWebhookDeliveries(settings: WebhookSettings) {
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  let failing = false;
  const run = async () => {
    do {
      again = false;
      try {
        const claimed = await sql().query<Claimed>(CLAIM, [BATCH, settings.timeoutMs + 5_000]);
        failing = false;
        await Promise.all(claimed.map((d) => attempt(settings, d)));
        if (claimed.length === BATCH) again = true;
      } catch (error) {
        if (!failing) console.error('webhooks: cannot look for deliveries due', error);
        failing = true;
      }
    } while (again && !closed);
  };
  const tick = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = run().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(tick, settings.pollMs);
  timer.unref();
  return {
    kick: tick,
    /** Stops looking; an attempt under way finishes (or times out) first. */
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}

export type WebhookDeliveries = ReturnType<typeof startWebhookDeliveries>;
