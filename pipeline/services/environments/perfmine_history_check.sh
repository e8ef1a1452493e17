#!/usr/bin/env bash
# perfmine's history check (seal.ts HISTORY_CHECK_SCRIPT), the first verification step: /repo holds the
# base commit ($PERFMINE_SHA) and its ancestors only, and each module repository its gitlinked commit's.
# Each finding is printed after "perfmine-history-leak:" (HISTORY_LEAK_MARKER); exit 6 (HISTORY_LEAK_EXIT)
# when there is one, 5 when /repo is no repository.
set -uo pipefail
found=0
leak() { echo "perfmine-history-leak: $*"; found=1; }
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
  extra=$(comm -23 <(git --git-dir="$gd" cat-file --batch-all-objects --batch-check='%(objectname)' | sort -u) \
                   <(git --git-dir="$gd" rev-list --objects "$sha" | cut -d' ' -f1 | sort -u))
  if [ -n "$extra" ]; then
    leak "$where: $(printf '%s\n' "$extra" | wc -l) objects not reached by the base's history, e.g. $(printf '%s\n' "$extra" | head -n 3 | while read -r o; do printf '%s %s ' "$(git --git-dir="$gd" cat-file -t "$o")" "$o"; done)"
  fi
}
cd /repo || { echo "no /repo" >&2; exit 5; }
gd=$(git rev-parse --absolute-git-dir) || exit 5
head=$(git rev-parse -q --verify 'HEAD^{commit}') || { leak "HEAD names no commit"; exit 6; }
[ "$head" = "$PERFMINE_SHA" ] || leak "HEAD is $head, not the base commit $PERFMINE_SHA"
check "$gd" "$PERFMINE_SHA" /repo
if [ -d "$gd/modules" ]; then
  while read -r mod; do
    name=${mod#"$gd/modules/"}
    path=$(git config -f .gitmodules "submodule.$name.path" 2>/dev/null || echo "$name")
    link=$(git ls-tree HEAD -- "$path" | awk '$2 == "commit" { print $3 }')
    if [ -z "$link" ]; then leak "module $name: the base commit has no submodule at $path"; continue; fi
    check "$mod" "$link" "module $name"
  done < <(find "$gd/modules" -name HEAD -type f -printf '%h\n' | sort)
fi
if [ "$found" = 1 ]; then exit 6; fi
echo "history sealed at $PERFMINE_SHA"
