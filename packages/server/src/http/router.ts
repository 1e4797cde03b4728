import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** The paths whose match is kept; past it the memory starts over (a client sending random paths). */
const MAX_REMEMBERED = 512;

const withoutParams = <T>(result: Result<T>): boolean =>
  result[1] === undefined &&
  (result[0] as [T, Record<string, string>][]).every(([, params]) => {
    for (const _ in params) return false;
    return true;
  });

/**
 * Hono's own routers, the matches of parameterless paths remembered. The API has a static path
 * beside a parameter at the same place (`/v1/gates/suggestions` and `/v1/gates/:id`, `/v1/logs/summary`
 * and `/v1/logs/:id`), which Hono's RegExpRouter refuses, so every request went through the
 * TrieRouter's search, its arrays and its sort: the data plane's routes are all static, and a
 * method and path always match the same handlers. A match with parameters (a gate's id in the
 * path) is searched each time, as before. Hono reads a match and never changes it (its RegExpRouter
 * hands out shared ones too).
 */
export class RememberingRouter<T> implements Router<T> {
  name = 'RememberingRouter';
  readonly #router: Router<T> = new SmartRouter({ routers: [new RegExpRouter(), new TrieRouter()] });
  readonly #matches = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.#matches.clear();
    this.#router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    const known = this.#matches.get(key);
    if (known) return known;
    const result = this.#router.match(method, path);
    if (withoutParams(result)) {
      if (this.#matches.size >= MAX_REMEMBERED) this.#matches.clear();
      this.#matches.set(key, result);
    }
    return result;
  }
}
