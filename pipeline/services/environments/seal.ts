import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';

/**
 * Sealed history: what an environment's /repo may hold of the repository. The scripts, as data
 * (the environment runs them): perfmine_seal.sh and perfmine_history_check.sh beside this module,
 * read from the package root.
 *
 * A sealed repository holds the base commit and its ancestors only: HEAD detached at the base,
 * the tags that name one of those commits (as lightweight tags, so that no tag object of a later
 * date is kept), and nothing else: no branch, remote, remote-tracking ref, stash, note, reflog,
 * FETCH_HEAD or ORIG_HEAD, and no object that the base's history does not reach. It is made by
 * fetching the base commit by its id into a new repository (git's own transport packs exactly
 * what the commit reaches), never by copying or cloning a repository that holds more.
 *
 * Submodules: a module repository that perfmine has for a gitlink of the base commit (the
 * clone's own `.git/modules/NAME`, carried as a bundle) is sealed the same way at the gitlinked
 * commit; one a build script fetched is sealed in place after the build (its refs and reflogs
 * dropped, unreachable objects pruned). Nested submodules are not populated.
 *
 * The same script (`SEAL_SCRIPT`, run as `bash seal.sh COMMAND ...`) makes the per-commit source
 * tier from perfmine's clone, the task folder's image from its `repo.bundle`, and the bundle
 * itself; `HISTORY_CHECK_SCRIPT` is the verification step that proves the result.
 */

/** The exit code of the history check when something outside the base's history is found (perfmine_history_check.sh's). */
export const HISTORY_LEAK_EXIT = 6;
/** Printed before each finding of the history check (perfmine_history_check.sh's). */
export const HISTORY_LEAK_MARKER = 'perfmine-history-leak:';

/**
 * perfmine_seal.sh, whose bytes are the source tier's (its key) and every task folder's
 * `perfmine/seal.sh`.
 * `bash seal.sh from-clone SHA`: in a repository tier image, moves perfmine's clone aside
 * (`/perfmine-clone`) and seals SHA into /repo (fetching SHA first when a URL clone predates it),
 * with the module bundles under /perfmine/modules/NAME.bundle.
 * `bash seal.sh from-bundle BUNDLE SHA`: seals SHA from a bundle into /repo (modules from the
 * bundles in BUNDLE's directory's `modules/`): a task folder's image.
 * `bash seal.sh bundle OUT`: writes OUT/repo.bundle (HEAD and the tags of /repo) and
 * OUT/modules/NAME.bundle per populated module, byte for byte the same for the same history.
 * `bash seal.sh export SOURCE SHA OUT`: on a host, seals the clone SOURCE at SHA in a scratch
 * directory (modules from SOURCE's own module repositories) and bundles it into OUT.
 * `bash seal.sh modules`: seals in place every module repository under /repo/.git/modules at its
 * gitlinked commit (after a build script).
 * PERFMINE_REPO names another directory than /repo (tests).
 */
export const SEAL_SCRIPT: string = readFileSync(packagePath('pipeline', 'services', 'environments', 'perfmine_seal.sh'), 'utf8');

/**
 * The verification step that proves /repo sealed (it runs first, before anything in the
 * container writes an object): HEAD is the base commit; no alternates, FETCH_HEAD, ORIG_HEAD or
 * other leftovers of a merge, rebase or bisect; every ref is a tag or branch naming the base or
 * an ancestor; every reflog entry names one; every object in the store is reached by the base's
 * history. The same for each module repository, at its gitlinked commit (a module of a path the
 * base tree has no gitlink for holds nothing but leaks). Each finding is printed after
 * HISTORY_LEAK_MARKER; exit HISTORY_LEAK_EXIT when there is one. Run as `bash -c`, with
 * PERFMINE_SHA the base commit: perfmine_history_check.sh.
 */
export const HISTORY_CHECK_SCRIPT: string = readFileSync(
  packagePath('pipeline', 'services', 'environments', 'perfmine_history_check.sh'),
  'utf8',
);

/** The findings a history check printed after its marker. Pure. */
export function historyLeaks(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith(HISTORY_LEAK_MARKER))
    .map((l) => l.slice(HISTORY_LEAK_MARKER.length).trim());
}
