import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';
import js from '@eslint/js';

export default [
  { ignores: ['**/dist', '**/node_modules', '.nx/**', 'coverage/**', '.orch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { '@nx': nx },
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util', 'type:model', 'type:testing'] },
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util', 'type:model', 'type:testing'] },
            { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:model', 'type:testing'] },
            { sourceTag: 'type:model', onlyDependOnLibsWithTags: ['type:util', 'type:model'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:util', 'type:model', 'type:data-access', 'type:feature', 'type:testing'] },
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:gateway', 'scope:shared'] },
            { sourceTag: 'scope:scheduler', onlyDependOnLibsWithTags: ['scope:scheduler', 'scope:shared'] },
            { sourceTag: 'scope:controller-manager', onlyDependOnLibsWithTags: ['scope:controller-manager', 'scope:shared'] },
            { sourceTag: 'scope:node-agent', onlyDependOnLibsWithTags: ['scope:node-agent', 'scope:shared'] },
            { sourceTag: 'scope:network-proxy', onlyDependOnLibsWithTags: ['scope:network-proxy', 'scope:shared'] },
            { sourceTag: 'scope:metrics-server', onlyDependOnLibsWithTags: ['scope:metrics-server', 'scope:shared'] },
            { sourceTag: 'scope:dashboard', onlyDependOnLibsWithTags: ['scope:dashboard', 'scope:shared'] },
            // Benchmarks measure the gateway's own layers (the store) beside the whole.
            { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:shared', 'scope:gateway'] },
          ],
        },
      ],
    },
  },
  { files: ['**/*.mjs', '**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' }, languageOptions: { globals: { URL: 'readonly', performance: 'readonly', setInterval: 'readonly', clearTimeout: 'readonly', process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', Buffer: 'readonly', setTimeout: 'readonly' } } },
];
