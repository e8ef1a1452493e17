#!/usr/bin/env bash
# perfmine's history sealing (pipeline/services/environments/seal.ts): the repository holds the
# base commit and its ancestors only.
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
called_from=$PWD
cd /
upload_pack='git -c uploadpack.allowAnySHA1InWant=true upload-pack'
R=${PERFMINE_REPO:-/repo}

# tags SOURCE: "refname commit" for every tag a repository or a bundle file offers
tags() {
  if [ -f "$1" ]; then
    git bundle list-heads "$1" | awk '$2 ~ /^refs\/tags\// { print $2, $1 }'
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
  name=$(git -C "$R" config -f .gitmodules --get-regexp '^submodule\..*\.path$' 2>/dev/null |
    awk -v p="$1" '$2 == p { sub(/^submodule\./, "", $1); sub(/\.path$/, "", $1); print $1; exit }')
  echo "${name:-$1}"
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

case "${1:-}" in
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
