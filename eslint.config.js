import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'web/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Lambda code: `import { z }` (a value) brings all of zod into a bundle, every locale included
    // (~350 KB more than `import * as z from 'zod'`, which esbuild tree-shakes): see the bundle budget.
    files: ['functions/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='zod'][importKind!='type'] > ImportSpecifier[imported.name='z'][importKind!='type']",
          message: "Use `import * as z from 'zod'` (tree-shaken); `import { z }` bundles all of zod.",
        },
        {
          // ElectroDB's own classes build a model at import; functions/platform/entity.ts's build it on first use.
          selector:
            "ImportDeclaration[source.value='electrodb'][importKind!='type'] > ImportSpecifier[imported.name=/^(Entity|Service)$/][importKind!='type']",
          message:
            "Import Entity and Service from functions/platform/entity.ts (built on first use), not from 'electrodb'.",
        },
      ],
    },
  },
  {
    files: ['functions/platform/entity.ts', 'functions/platform/table.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
