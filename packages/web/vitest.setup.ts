import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// findBy* and waitFor give up after 1 s by default: on a loaded machine a lazily loaded page can
// take longer to render, and a test must not fail for the machine's speed (CI runs them loaded).
configure({ asyncUtilTimeout: 10_000 });

// Testing Library unmounts by itself only where the test runner has globals; this one has none.
afterEach(() => cleanup());

// happy-dom lacks select.size and option.defaultSelected. Without them react-hook-form takes
// every select for one the user changed before the form was ready, and keeps its first option
// instead of the form's value. Browsers have both: these follow the HTML standard's defaults.
if (typeof HTMLSelectElement !== 'undefined' && !('size' in HTMLSelectElement.prototype)) {
  Object.defineProperty(HTMLSelectElement.prototype, 'size', {
    get(this: HTMLSelectElement) {
      return Number(this.getAttribute('size') ?? 0);
    },
  });
}
if (typeof HTMLOptionElement !== 'undefined' && !('defaultSelected' in HTMLOptionElement.prototype)) {
  Object.defineProperty(HTMLOptionElement.prototype, 'defaultSelected', {
    get(this: HTMLOptionElement) {
      return this.hasAttribute('selected');
    },
  });
}
