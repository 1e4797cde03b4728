/**
 * The control plane's transactions (a gate's change, a sign-up), each within a time limit that a
 * wait for a locked row counts towards too. Prisma ends a transaction that passes its timeout
 * (P2028), but only once the statement it is waiting on returns: a change waiting for a row that
 * another holds would wait as long as the holder does. So PostgreSQL's lock_timeout is set to the
 * same limit, and a lock waited for longer fails the statement at once (55P03).
 *
 * A transaction that fails either way is tried once more (the other change has usually finished),
 * then answered 503 service_unavailable: the server is busy, the input is fine, nothing was
 * written. Never a 500. Work that costs CPU (compiling a schema, encoding) belongs before the
 * transaction opens: under load its time is what makes a transaction expire.
 */
import { ServiceUnavailableError } from '../domain/errors.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { prisma, transactionTimeoutMs } from './client.ts';

/** PostgreSQL's lock_not_available: a lock waited for longer than lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A transaction that ran out of time, or waited too long for a lock: worth one more try. */
export function isTransactionBusy(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2028') return true;
  const cause = (error.meta?.driverAdapterError as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === LOCK_NOT_AVAILABLE;
}

/** Runs `work` in a transaction; tries once more if it was busy, then throws ServiceUnavailableError. */
export async function transaction<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  const timeout = transactionTimeoutMs();
  const attempt = () =>
    prisma.$transaction(
      async (tx) => {
        // A whole number of milliseconds, from the configuration: no client text reaches SQL here.
        await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = ${Math.round(timeout)}`);
        return work(tx);
      },
      { timeout, maxWait: timeout },
    );
  try {
    return await attempt();
  } catch (error) {
    if (!isTransactionBusy(error)) throw error;
  }
  try {
    return await attempt();
  } catch (error) {
    if (isTransactionBusy(error)) throw new ServiceUnavailableError();
    throw error;
  }
}
