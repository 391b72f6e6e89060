// @ts-check
// Flat config (ESLint 10). `npm run lint` runs it with --max-warnings 0, so every rule below is an error in effect.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import jsxA11y from 'eslint-plugin-jsx-a11y-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', 'coverage/', 'data/', '.tmp/', 'bench/results/', 'web/dist/']),

  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'migrations/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The promise rules are the point of type-aware linting here: a forgotten await in a guard, a
      // repository call or a shutdown hook fails silently at runtime.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function passed where a void callback is expected (event listener, Express middleware)
      // loses its rejection. `attributes` only concerns JSX props, which this code base has none of.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      curly: ['error', 'all'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      // class-validator's MaxLength does not count U+FE0E/U+FE0F, so a value it passes can overflow the
      // varchar(n) it is checked for and come back as a database error instead of a 400 naming the field.
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              importNames: ['MaxLength', 'Length'],
              message: 'Use MaxChars from src/common/formats.ts: it counts characters as PostgreSQL does.',
            },
            {
              name: 'class-validator',
              importNames: ['IsEmail'],
              message:
                'Use IsEmailAddress from src/common/formats.ts: IsEmail throws (a 500) on an unpaired surrogate.',
            },
          ],
        },
      ],

      // `any` here only ever comes from libraries typed loosely (Express `req.route`, supertest `res.body`,
      // `Array.isArray` narrowing to any[]); the no-unsafe-* family then reports every use of such a value,
      // which is noise, not defects. Explicit `any` in our own code stays forbidden (rule above).
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Comparing a numeric HTTP status with Nest's `HttpStatus` enum is the framework's own idiom.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },

  // The `tms` command: plain modern JavaScript for Node 20 (its JSDoc types are checked by `npx tsc -p cli`).
  {
    files: ['cli/bin/**/*.js', 'cli/src/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        Response: 'readonly',
        console: 'readonly',
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { curly: ['error', 'all'] },
  },

  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      // `expect(repo.save).toHaveBeenCalled()` passes a method reference on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // Fakes of async collaborators are written `jest.fn(async () => value)`, without an await.
      '@typescript-eslint/require-await': 'off',
    },
  },

  // The web UI: accessibility (jsx-a11y; eslint-plugin-jsx-a11y itself does not support ESLint 10 yet, its fork
  // -x does) and the rules of hooks.
  {
    files: ['web/src/**/*.{ts,tsx}', 'web/test/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked, jsxA11y.configs.strict],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: {
      parserOptions: {
        project: ['./web/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
        ecmaFeatures: { jsx: true },
      },
    },
    rules: {
      ...reactHooks.configs.recommended.rules,
      curly: ['error', 'all'],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      // Autofocus on the first field of a sign-in form is what people expect there.
      'jsx-a11y-x/no-autofocus': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['web/test/**/*.{ts,tsx}'],
    rules: {
      // Fakes of fetch are `vi.fn(async () => response)` and read the request as String(input).
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
);
