import type { Page } from 'playwright-core';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** An option of the open model picker whose model id is `id` (its name goes on with prices). */
export const modelOption = (page: Page, id: string) =>
  page.getByRole('option', { name: new RegExp(`^${escapeRegExp(id)}(?![\\w./:-])`) });

/** Chooses a model in the gate form's model picker labelled `label`, as a person does: types, then clicks. */
export async function chooseModel(page: Page, label: string, id: string): Promise<void> {
  const picker = page.getByRole('combobox', { name: label, exact: true });
  await picker.fill(id);
  await modelOption(page, id).click();
  await page.waitForFunction(
    ([selector, value]) =>
      (document.querySelector(selector as string) as HTMLInputElement | null)?.value === value,
    [`#${await picker.getAttribute('id')}`.replace(/\./g, '\\.'), id],
  );
}
