import axe from 'axe-core';
import type { Page } from 'playwright-core';

/** The WCAG 2.0 and 2.1 rules at levels A and AA: what the dashboard promises. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

type Found = { id: string; help: string; nodes: { target: string; summary: string }[] };

declare global {
  interface Window {
    axe?: typeof axe;
  }
}

/**
 * Runs axe-core on the page as it is now, in the light theme and the dark one (the browser's
 * `prefers-color-scheme`), and fails with every violation named, its elements and why. The page
 * goes back to the light scheme afterwards. Call it once the page shows what it is for.
 */
export async function expectNoAxeViolations(page: Page, where: string) {
  try {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      // Evaluated rather than added as a <script>, so no Content-Security-Policy stands in the way.
      if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axe.source);
      const found = await page.evaluate(async (tags): Promise<Found[]> => {
        const checker = window.axe;
        if (!checker) throw new Error('axe-core did not load');
        const { violations } = await checker.run(document, { runOnly: { type: 'tag', values: tags } });
        return violations.map((violation) => ({
          id: violation.id,
          help: violation.help,
          nodes: violation.nodes.map((node) => ({
            target: node.target.join(' '),
            summary: (node.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 300),
          })),
        }));
      }, TAGS);
      const report = found.flatMap(({ id, help, nodes }) =>
        nodes.map(({ target, summary }) => `${id} (${help}) at ${target}: ${summary}`),
      );
      if (report.length > 0) {
        throw new Error(`axe-core on ${where}, ${colorScheme} theme:\n${report.join('\n')}`);
      }
    }
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
}
