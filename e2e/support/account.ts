import type { Page } from 'playwright-core';

export type Account = { email: string; password: string; apiKey: string };

/**
 * Signs up the first account through the dashboard, as a person does, and continues past the
 * API key shown once; resolves with the key once the signed-in frame shows.
 */
export async function signUpInBrowser(
  page: Page,
  baseUrl: string,
  { email = `admin-${Date.now()}@example.com`, password = 'correct horse battery' } = {},
): Promise<Account> {
  await page.goto(baseUrl);
  await page.waitForURL('**/sign-up');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Your first API key' }).waitFor();
  const apiKey = await page.locator('#api-key').inputValue();
  await page.getByRole('button', { name: 'Continue to gates' }).click();
  // Attached rather than visible: on a phone it waits behind the Menu button.
  await page.getByRole('button', { name: 'Sign out', includeHidden: true }).waitFor({ state: 'attached' });
  return { email, password, apiKey };
}

/** The REST API with the account's key, as an application calls it. */
export function api(baseUrl: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  };
}
