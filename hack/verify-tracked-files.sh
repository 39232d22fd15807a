#!/usr/bin/env bash
# Fails when git tracks a build output: an executable binary (ELF, Mach-O,
# PE, or any executable file with NUL bytes) or any file over 1 MiB. Build
# outputs belong in bin/ or tmp/ (.gitignore); old benchmark results stay
# in git history, not in the tree (bench/README.md).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

max_bytes=$((1024 * 1024))
failed=0

# has_nul FILE: whether its first 8000 bytes hold a NUL byte (git's own
# test for a binary file).
has_nul() {
  [ "$(head -c 8000 "$1" | tr -d '\000' | wc -c)" -ne "$(head -c 8000 "$1" | wc -c)" ]
}

while IFS= read -r -d '' entry; do
  mode=${entry%% *}
  path=${entry#*$'\t'}
  [ -f "$path" ] || continue # deleted in the work tree, not yet committed
  size=$(stat -c %s -- "$path")
  if [ "$size" -gt "$max_bytes" ]; then
    echo "tracked file over 1 MiB ($size bytes): $path" >&2
    failed=1
  fi
  magic=""
  read -r -N 4 magic <"$path" || true
  case "$magic" in
    $'\x7fELF' | $'\xcf\xfa\xed\xfe' | $'\xce\xfa\xed\xfe' | $'\xfe\xed\xfa\xcf' | $'\xfe\xed\xfa\xce')
      echo "tracked executable binary (ELF or Mach-O): $path" >&2
      failed=1
      ;;
    MZ*)
      if has_nul "$path"; then
        echo "tracked executable binary (PE): $path" >&2
        failed=1
      fi
      ;;
    *)
      if [ "$mode" = 100755 ] && has_nul "$path"; then
        echo "tracked executable binary (executable, NUL bytes): $path" >&2
        failed=1
      fi
      ;;
  esac
done < <(git ls-files -s -z)

if [ "$failed" -ne 0 ]; then
  echo "Remove these files from git (git rm --cached) and cover build outputs in .gitignore." >&2
  exit 1
fi
echo "No tracked binary and no tracked file over 1 MiB."
