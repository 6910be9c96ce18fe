#!/usr/bin/env bash
# Unpack the real SuperPMI reference as data (the collections of .NET Core 3.1.23 and the transcripts of what its
# superpmi and mcs printed; no binary), from ../shared/real-superpmi/ or the archive given as $1, into
# .real-superpmi/<version>/, checked against its SHA256SUMS. The data half of tests/real/ runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."
archive="${1:-../shared/real-superpmi/real-superpmi-3.1.23.tar.xz}"
if [ ! -f "$archive" ]; then
  echo "unpack-real-superpmi: $archive: not found (the real superpmi reference archive)" >&2
  exit 1
fi
name=$(basename "$archive")
version=${name#real-superpmi-}
version=${version%.tar.xz}
dest=".real-superpmi/$version"
sums="$(dirname "$archive")/SHA256SUMS"
stamp="$dest/.unpacked"
if [ -f "$stamp" ] && cmp -s "$stamp" <(sha256sum "$archive" | cut -d' ' -f1); then
  exit 0
fi
tmp=$(mktemp -d ".real-superpmi/.unpack.XXXXXX" 2>/dev/null || { mkdir -p .real-superpmi; mktemp -d ".real-superpmi/.unpack.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$archive" -C "$tmp"
if [ -f "$sums" ]; then
  (cd "$tmp" && sha256sum --quiet -c "$(realpath "$OLDPWD/$sums")") || {
    echo "unpack-real-superpmi: $archive: its files do not match $sums" >&2; exit 1; }
fi
chmod -R u+w "$tmp"
sha256sum "$archive" | cut -d' ' -f1 > "$tmp/.unpacked"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "real superpmi $version unpacked into $dest"
