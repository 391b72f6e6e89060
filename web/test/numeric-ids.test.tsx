import { render, screen } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { describe, expect, it } from 'vitest';
import { NumericIds } from '../src/pages/NotFound';

function renderAt(path: string) {
  render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route element={<NumericIds />}>
          <Route path="/projects/:projectId/tests" element={<p>the tests page</p>} />
          <Route path="/projects/:projectId/tests/:testId" element={<p>a test's history</p>} />
        </Route>
      </Routes>
    </MemoryRouter>,
  );
}

describe('NumericIds', () => {
  it('renders the page of a path whose ids are numbers', () => {
    renderAt('/projects/3/tests/42');
    expect(screen.getByText("a test's history")).toBeTruthy();
  });

  it.each(['/projects/abc/tests', '/projects/3/tests/x1', '/projects/-1/tests', '/projects/1e3/tests'])(
    'says there is no page at %s, rather than ask the API for id NaN',
    (path) => {
      renderAt(path);
      expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
      expect(screen.queryByText(/the tests page|a test's history/)).toBeNull();
    },
  );
});
