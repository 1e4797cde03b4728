/**
 * What an API key may reach: the gates and task types it was scoped to (empty lists: all of the
 * account's). One rule for every route that runs a request through a gate (dataplane/pipeline.ts).
 */
import { KeyScopeError } from './errors.ts';

type ScopedKey = { name: string; allowedGates: string[]; allowedTaskTypes: string[] };

/** Throws a KeyScopeError (403) naming the gate or the task type the key may not use. */
export function checkKeyScope(key: ScopedKey, gateId: string, taskType: string): void {
  if (key.allowedGates.length > 0 && !key.allowedGates.includes(gateId.toLowerCase())) {
    throw new KeyScopeError(`The API key "${key.name}" may not use gate ${gateId}`, { gateId });
  }
  if (key.allowedTaskTypes.length > 0 && !key.allowedTaskTypes.includes(taskType)) {
    throw new KeyScopeError(`The API key "${key.name}" may not make ${taskType} requests`, { taskType });
  }
}
