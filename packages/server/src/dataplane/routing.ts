/** The order in which a gate's models are tried. */

export type RoutingStrategy = 'single' | 'fallback' | 'round-robin';

function shuffled<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * single: the primary only. fallback: the primary, then each fallback in order. round-robin:
 * the first pick uniformly random among all, then the others in random order.
 */
export function attemptOrder(
  strategy: RoutingStrategy,
  primary: string,
  fallbacks: string[],
  random: () => number = Math.random,
): string[] {
  const rest = fallbacks.filter((m) => m !== primary);
  switch (strategy) {
    case 'single':
      return [primary];
    case 'fallback':
      return [primary, ...rest];
    case 'round-robin':
      return shuffled([primary, ...rest], random);
  }
}
