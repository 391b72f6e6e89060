import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// Each test renders into a fresh document.
afterEach(() => cleanup());
// The machines these run on are shared: a page that answers in 1.2 s under load has not failed. A wait still ends
// at the first match; only a missing element waits this long.
configure({ asyncUtilTimeout: 4000 });
