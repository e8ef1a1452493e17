// ESLint (flat config): typescript-eslint's recommended rules, the type-aware promise rules, and
// the import direction of the layers (../shared/DESIGN.md "Conventions"; README "Layout"):
//   pipeline/cli, pipeline/report → tasks/ (replay, score, publish) → stages/ → pipeline/services, cache/
//     → tasks/folder (the task folder's schema and reader) → pipeline/concepts (shared concepts)
// A stage uses another stage only through the store. Formatting is Prettier's (.prettierrc.json).
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const ROOT = dirname(fileURLToPath(import.meta.url));

/** The files the shared-concepts layer may import besides its own: the foundation, which imports nothing of the project. */
const FOUNDATION = ['pipeline/errors.ts', 'pipeline/hash.ts'];

/**
 * Why an import from `file` to `target` (both relative to the repository root) goes the wrong way,
 * or null. Tests (test/) may import anything.
 */
function wrongWay(file, target) {
  const under = (path, dir) => path.startsWith(`${dir}/`);
  const stageOf = (path) => (under(path, 'stages') ? path.split('/')[1] : null);
  if (under(file, 'test') || !/^(pipeline|stages|cache|tasks)\//.test(target)) return null;
  if (under(file, 'tasks/folder')) {
    if (under(target, 'tasks/folder') || under(target, 'pipeline/concepts') || FOUNDATION.includes(target)) return null;
    return 'the task folder layer (tasks/folder) imports nothing but itself, pipeline/concepts and pipeline/errors, pipeline/hash';
  }
  if (under(target, 'tasks') && !under(target, 'tasks/folder') && !/^(tasks|pipeline\/cli|pipeline\/report)\//.test(file))
    return 'replay, score and publish (tasks/) are used by the CLI and the report only; the task folder itself is tasks/folder';
  if (under(target, 'pipeline/cli') && !under(file, 'pipeline/cli')) return 'only the CLI imports pipeline/cli';
  if (
    (target === 'pipeline/registry.ts' || target === 'pipeline/stage-loaders.ts') &&
    /^(stages|cache|pipeline\/services|pipeline\/concepts)\//.test(file)
  )
    return 'the registry and the stage loaders name every stage: only the engine (pipeline/orchestrate.ts, pipeline/cli) imports them';
  if (under(file, 'pipeline/concepts')) {
    if (under(target, 'pipeline/concepts') || FOUNDATION.includes(target)) return null;
    return 'the shared concepts (pipeline/concepts) import nothing but themselves and pipeline/errors, pipeline/hash';
  }
  if (under(file, 'cache') || under(file, 'pipeline/services')) {
    if (under(target, 'stages'))
      return `${file.split('/')[0] === 'cache' ? 'cache/' : 'pipeline/services'} imports no stage (move what both need to pipeline/concepts)`;
    return null;
  }
  const from = stageOf(file);
  const to = stageOf(target);
  if (from !== null && to !== null && from !== to)
    return `a stage uses another stage only through the store (stages/${from} imports stages/${to}: move what both need to pipeline/concepts or pipeline/services)`;
  return null;
}

const layers = {
  rules: {
    'import-direction': {
      meta: {
        type: 'problem',
        docs: { description: 'imports go down the layers only' },
        schema: [],
        messages: { wrong: 'wrong-way import of {{target}}: {{why}}.' },
      },
      create(context) {
        const file = relative(ROOT, context.filename);
        const check = (source) => {
          if (!source || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
          const target = normalize(join(dirname(file), source.value)).replace(/\.js$/, '.ts');
          const why = wrongWay(file, target);
          if (why) context.report({ node: source, messageId: 'wrong', data: { target, why } });
        };
        return {
          ImportDeclaration: (node) => check(node.source),
          ExportNamedDeclaration: (node) => check(node.source),
          ExportAllDeclaration: (node) => check(node.source),
          ImportExpression: (node) => check(node.source),
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'bench/**', 'perfmine-demo/**', '.scratch/**', 'test/fixtures/**', '**/*.py'] },
  tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'scripts/build.mjs', 'test/bench/git-collect-floor.mjs'] },
        tsconfigRootDir: ROOT,
      },
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    plugins: { layers },
    rules: {
      'layers/import-direction': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // a variable a closure reads before its one assignment (a CLI handle armed before it starts) stays `let`
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  prettier,
);
