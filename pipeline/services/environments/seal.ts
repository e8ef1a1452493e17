/**
 * Sealed history: what an environment's /repo may hold of the repository. Pure (the scripts as
 * data; the environment runs them).
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
 * itself; `historyCheckScript` is the verification step that proves the result.
 */

/** The exit code of the history check when something outside the base's history is found. */
export const HISTORY_LEAK_EXIT = 6;
/** Printed before each finding of the history check. */
export const HISTORY_LEAK_MARKER = 'perfmine-history-leak:';

/**
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
export const SEAL_SCRIPT = `#!/usr/bin/env bash
# perfmine's history sealing (pipeline/services/environments/seal.ts): the repository holds the
# base commit and its ancestors only.
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
called_from=$PWD
cd /
upload_pack='git -c uploadpack.allowAnySHA1InWant=true upload-pack'
R=\${PERFMINE_REPO:-/repo}

# tags SOURCE: "refname commit" for every tag a repository or a bundle file offers
tags() {
  if [ -f "$1" ]; then
    git bundle list-heads "$1" | awk '$2 ~ /^refs\\/tags\\// { print $2, $1 }'
  else
    git -C "$1" for-each-ref --format='%(refname) %(*objectname) %(objectname)' refs/tags |
      awk '{ print $1, (NF == 3 ? $2 : $NF) }'
  fi
}

# tidy GITDIR: nothing of the fetch or of a checkout is left behind
tidy() {
  rm -rf "$1/logs" "$1/FETCH_HEAD" "$1/ORIG_HEAD"
}

# seal_new SOURCE SHA WORKTREE GITDIR: a new repository at GITDIR with its work tree at WORKTREE,
# holding SHA and its ancestors (and the tags naming them), HEAD detached at SHA. SOURCE is a
# repository or a bundle file.
seal_new() {
  local src=$1 sha=$2 tree=$3 gd=$4 ref c unbundled
  mkdir -p "$tree"
  if [ "$gd" = "$tree/.git" ]; then
    git -c init.defaultBranch=perfmine init -q "$tree" >/dev/null
  else
    mkdir -p "$(dirname "$gd")"
    git -c init.defaultBranch=perfmine init -q --separate-git-dir="$gd" "$tree" >/dev/null
  fi
  git --git-dir="$gd" config core.logAllRefUpdates false
  if [ -f "$src" ]; then
    # a bundle hands over its whole pack: unbundle it aside, then fetch only what SHA reaches
    unbundled=$(mktemp -d)
    git -c init.defaultBranch=perfmine init -q --bare "$unbundled"
    git --git-dir="$unbundled" fetch -q --no-tags --no-write-fetch-head "$src" '+refs/*:refs/*' '+HEAD:refs/perfmine/head' 2>/dev/null ||
      git --git-dir="$unbundled" fetch -q --no-tags --no-write-fetch-head "$src" '+refs/*:refs/*'
    git --git-dir="$gd" fetch -q --no-tags --no-write-fetch-head --upload-pack="$upload_pack" "$unbundled" "$sha"
    rm -rf "$unbundled"
  else
    git --git-dir="$gd" fetch -q --no-tags --no-write-fetch-head --upload-pack="$upload_pack" "$src" "$sha"
  fi
  tags "$src" | while read -r ref c; do
    [ "$(git --git-dir="$gd" cat-file -t "$c" 2>/dev/null)" = commit ] || continue
    if git --git-dir="$gd" merge-base --is-ancestor "$c" "$sha"; then git --git-dir="$gd" update-ref "$ref" "$c"; fi
  done
  git -C "$tree" checkout -q --detach "$sha"
  tidy "$gd"
}

# gitlinks: "path commit" of the base tree's submodules
gitlinks() {
  git -C "$R" ls-tree -r HEAD | awk '$2 == "commit" { print $4, $3 }'
}

# module_name PATH: the submodule's name in .gitmodules (its path when unnamed)
module_name() {
  local name
  name=$(git -C "$R" config -f .gitmodules --get-regexp '^submodule\\..*\\.path$' 2>/dev/null |
    awk -v p="$1" '$2 == p { sub(/^submodule\\./, "", $1); sub(/\\.path$/, "", $1); print $1; exit }')
  echo "\${name:-$1}"
}

# populate DIR: each gitlink whose module is DIR/NAME.bundle or the repository DIR/NAME, sealed at
# its commit
populate() {
  local dir=$1 path c name src url
  [ -f "$R/.gitmodules" ] || return 0
  gitlinks | while read -r path c; do
    name=$(module_name "$path")
    if [ -f "$dir/$name.bundle" ]; then src="$dir/$name.bundle"
    elif [ -f "$dir/$name/HEAD" ]; then src="$dir/$name"
    else continue
    fi
    git --git-dir="$src" cat-file -e "$c^{commit}" 2>/dev/null || [ -f "$src" ] || continue
    rmdir "$R/$path" 2>/dev/null || true
    seal_new "$src" "$c" "$R/$path" "$R/.git/modules/$name"
    # relative links, as git submodule writes them, so that the repository can move
    echo "gitdir: $(realpath -m --relative-to="$R/$path" "$R/.git/modules/$name")" >"$R/$path/.git"
    git --git-dir="$R/.git/modules/$name" config core.worktree "$(realpath -m --relative-to="$R/.git/modules/$name" "$R/$path")"
    git -C "$R" config "submodule.$name.active" true
    url=$(git -C "$R" config -f .gitmodules "submodule.$name.url" 2>/dev/null || true)
    [ -z "$url" ] || git -C "$R" config "submodule.$name.url" "$url"
  done
}

# seal_in_place GITDIR SHA: drops every ref but tags naming SHA's ancestors, every reflog, and
# every object SHA's history does not reach
seal_in_place() {
  local gd=$1 sha=$2 ref type obj
  git --git-dir="$gd" for-each-ref --format='%(refname) %(objecttype) %(objectname)' | while read -r ref type obj; do
    case "$ref" in
      refs/tags/*) if [ "$type" = commit ] && git --git-dir="$gd" merge-base --is-ancestor "$obj" "$sha"; then continue; fi ;;
    esac
    git --git-dir="$gd" update-ref -d "$ref"
  done
  git --git-dir="$gd" update-ref --no-deref HEAD "$sha"
  git --git-dir="$gd" config core.logAllRefUpdates false
  tidy "$gd"
  git --git-dir="$gd" repack -a -d -q
  git --git-dir="$gd" prune --expire=now
}

# bundle OUT: OUT/repo.bundle (HEAD and the tags) and OUT/modules/NAME.bundle per populated module,
# byte for byte the same for the same history
bundle() {
  local out=$1 path c name
  mkdir -p "$out"
  git -C "$R" -c pack.threads=1 bundle create -q "$out/repo.bundle" HEAD --tags
  [ -d "$R/.git/modules" ] || return 0
  gitlinks | while read -r path c; do
    name=$(module_name "$path")
    [ -d "$R/.git/modules/$name" ] || continue
    mkdir -p "$(dirname "$out/modules/$name.bundle")"
    git --git-dir="$R/.git/modules/$name" -c pack.threads=1 bundle create -q "$out/modules/$name.bundle" HEAD --tags
  done
}

case "\${1:-}" in
  from-clone)
    # in a repository tier image: perfmine's clone at /repo is moved aside, SHA sealed into /repo
    sha=$2
    mv /repo /perfmine-clone
    if ! git -C /perfmine-clone cat-file -e "$sha^{commit}" 2>/dev/null; then
      if git -C /perfmine-clone remote get-url origin >/dev/null 2>&1; then git -C /perfmine-clone fetch -q origin "$sha"; fi
    fi
    R=/repo
    seal_new /perfmine-clone "$sha" "$R" "$R/.git"
    populate /perfmine/modules
    ;;
  from-bundle)
    # a task folder's source: BUNDLE (and BUNDLE's directory's modules/) sealed into $R
    seal_new "$2" "$3" "$R" "$R/.git"
    populate "$(dirname "$2")/modules"
    ;;
  bundle)
    bundle "$2"
    ;;
  export)
    # on a host: the clone SOURCE sealed at SHA in a scratch directory, then bundled into OUT
    src=$(cd "$called_from" && cd "$2" && pwd) sha=$3 out=$(cd "$called_from" && realpath -m "$4")
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    R=$scratch/repo
    seal_new "$src" "$sha" "$R" "$R/.git"
    populate "$(git -C "$src" rev-parse --path-format=absolute --git-path modules)"
    bundle "$out"
    ;;
  modules)
    # after a build script: each module repository sealed in place at its gitlinked commit
    [ -d "$R/.git/modules" ] && [ -f "$R/.gitmodules" ] || exit 0
    gitlinks | while read -r path c; do
      name=$(module_name "$path")
      if [ -f "$R/.git/modules/$name/HEAD" ]; then seal_in_place "$R/.git/modules/$name" "$c"; fi
    done
    ;;
  *)
    echo "usage: seal.sh from-clone SHA | from-bundle BUNDLE SHA | bundle OUT | export SOURCE SHA OUT | modules" >&2
    exit 2
    ;;
esac
`;

/**
 * The verification step that proves /repo sealed (it runs first, before anything in the
 * container writes an object): HEAD is the base commit; no alternates, FETCH_HEAD, ORIG_HEAD or
 * other leftovers of a merge, rebase or bisect; every ref is a tag or branch naming the base or
 * an ancestor; every reflog entry names one; every object in the store is reached by the base's
 * history. The same for each module repository, at its gitlinked commit (a module of a path the
 * base tree has no gitlink for holds nothing but leaks). Each finding is printed after
 * HISTORY_LEAK_MARKER; exit HISTORY_LEAK_EXIT when there is one.
 */
export function historyCheckScript(): string {
  return `set -uo pipefail
found=0
leak() { echo "${HISTORY_LEAK_MARKER} $*"; found=1; }
check() {
  local gd=$1 sha=$2 where=$3 f ref type obj extra
  [ -s "$gd/objects/info/alternates" ] && leak "$where: objects/info/alternates borrows objects from $(head -n 1 "$gd/objects/info/alternates")"
  for f in FETCH_HEAD ORIG_HEAD MERGE_HEAD CHERRY_PICK_HEAD REVERT_HEAD BISECT_LOG AUTO_MERGE rebase-merge rebase-apply; do
    [ -e "$gd/$f" ] && leak "$where: $f exists"
  done
  while read -r ref type obj; do
    [ -n "$ref" ] || continue
    case "$ref" in
      refs/tags/* | refs/heads/*)
        if [ "$type" = commit ] && git --git-dir="$gd" merge-base --is-ancestor "$obj" "$sha" 2>/dev/null; then continue; fi ;;
    esac
    leak "$where: ref $ref names $type $obj, not the base commit or an ancestor"
  done < <(git --git-dir="$gd" for-each-ref --format='%(refname) %(objecttype) %(objectname)')
  if [ -d "$gd/logs" ]; then
    while read -r obj; do
      [ -n "$obj" ] || continue
      case "$obj" in *[!0]*) ;; *) continue ;; esac
      git --git-dir="$gd" merge-base --is-ancestor "$obj" "$sha" 2>/dev/null || leak "$where: a reflog names $obj, not the base commit or an ancestor"
    done < <(find "$gd/logs" -type f -exec awk '{ print $1; print $2 }' {} + | sort -u)
  fi
  extra=$(comm -23 <(git --git-dir="$gd" cat-file --batch-all-objects --batch-check='%(objectname)' | sort -u) \\
                   <(git --git-dir="$gd" rev-list --objects "$sha" | cut -d' ' -f1 | sort -u))
  if [ -n "$extra" ]; then
    leak "$where: $(printf '%s\\n' "$extra" | wc -l) objects not reached by the base's history, e.g. $(printf '%s\\n' "$extra" | head -n 3 | while read -r o; do printf '%s %s ' "$(git --git-dir="$gd" cat-file -t "$o")" "$o"; done)"
  fi
}
cd /repo || { echo "no /repo" >&2; exit 5; }
gd=$(git rev-parse --absolute-git-dir) || exit 5
head=$(git rev-parse -q --verify 'HEAD^{commit}') || { leak "HEAD names no commit"; exit ${HISTORY_LEAK_EXIT}; }
[ "$head" = "$PERFMINE_SHA" ] || leak "HEAD is $head, not the base commit $PERFMINE_SHA"
check "$gd" "$PERFMINE_SHA" /repo
if [ -d "$gd/modules" ]; then
  while read -r mod; do
    name=\${mod#"$gd/modules/"}
    path=$(git config -f .gitmodules "submodule.$name.path" 2>/dev/null || echo "$name")
    link=$(git ls-tree HEAD -- "$path" | awk '$2 == "commit" { print $3 }')
    if [ -z "$link" ]; then leak "module $name: the base commit has no submodule at $path"; continue; fi
    check "$mod" "$link" "module $name"
  done < <(find "$gd/modules" -name HEAD -type f -printf '%h\\n' | sort)
fi
if [ "$found" = 1 ]; then exit ${HISTORY_LEAK_EXIT}; fi
echo "history sealed at $PERFMINE_SHA"
`;
}

/** The findings a history check printed after its marker. Pure. */
export function historyLeaks(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith(HISTORY_LEAK_MARKER))
    .map((l) => l.slice(HISTORY_LEAK_MARKER.length).trim());
}
