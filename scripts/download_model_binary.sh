#!/usr/bin/env bash
# Downloads a model's published weights, as Caffe's download_model_binary.py:
#   scripts/download_model_binary.sh models/alexnet
# reads the front matter of models/alexnet/README.md (caffemodel, caffemodel_url,
# sha1), downloads the URL to models/alexnet/<caffemodel> through a temporary
# file, checks its SHA-1 and renames it into place only when it matches. A file
# already there with the right SHA-1 is kept. Models with no public weight file
# have no caffemodel_url and are refused with a line saying so; a failed
# download (no network, a dead link) leaves nothing behind.
set -euo pipefail

fail() { echo "download_model_binary: $*" >&2; exit 1; }

[ $# -eq 1 ] || fail "usage: $0 models/NAME (a folder whose README.md has front matter)"
dir=${1%/}
readme="$dir/README.md"
[ -f "$readme" ] || fail "$readme does not exist"
[ "$(head -n 1 "$readme")" = "---" ] || fail "$readme has no front matter (a first line '---')"

# The value of `key:` between the first two '---' lines, or empty.
field() {
  awk -v key="$1" 'NR == 1 { next } /^---$/ { exit }
    index($0, key ":") == 1 { sub("^" key ":[ \t]*", ""); print; exit }' "$readme"
}

url=$(field caffemodel_url)
name=$(field caffemodel)
sha1=$(field sha1)
[ -n "$url" ] || fail "$readme has no caffemodel_url: no public weight file is known for this model"
[ -n "$name" ] || name=$(basename "$url")
case "$name" in */* | "") fail "$readme: caffemodel '$name' must be a plain file name" ;; esac
target="$dir/$name"

if [ -f "$target" ] && [ -n "$sha1" ] && [ "$(sha1sum < "$target" | cut -d' ' -f1)" = "$sha1" ]; then
  echo "download_model_binary: $target is already there with SHA-1 $sha1"
  exit 0
fi
command -v curl > /dev/null || fail "curl is not installed (apt-get install curl)"

temporary="$target.tmp.$$"
trap 'rm -f "$temporary"' EXIT
echo "download_model_binary: $url -> $target"
curl --fail --location --silent --show-error --connect-timeout 30 --retry 2 \
  --output "$temporary" "$url" ||
  fail "downloading $url failed (no network, or the file has moved); nothing was written"
actual=$(sha1sum < "$temporary" | cut -d' ' -f1)
if [ -n "$sha1" ]; then
  [ "$actual" = "$sha1" ] ||
    fail "$url has SHA-1 $actual, but $readme says $sha1; the download was removed"
else
  echo "download_model_binary: $readme gives no sha1; the file's SHA-1 is $actual" >&2
fi
mv "$temporary" "$target"
trap - EXIT
echo "download_model_binary: wrote $target ($(stat -c %s "$target") bytes, SHA-1 $actual)"
