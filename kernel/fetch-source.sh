#!/usr/bin/env bash
# Fetch Debian's linux-source-7.3 from the trixie-backports suite without
# touching the system's apt configuration, and unpack it into a git tree at
# $KCACHE/src (one commit: the pristine source, tagged "pristine").
#
# The mirror is read from the system's own apt sources, so no registry host
# name lives in this project.
set -euo pipefail

KCACHE=${KCACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache/kernel}
KVER=${KVER:-7.3}
SUITE=${KSUITE:-trixie-backports}
src=$KCACHE/src

if [ -d "$src/.git" ] && git -C "$src" rev-parse -q --verify pristine >/dev/null; then
	echo "fetch-source: $src already present"
	exit 0
fi

mkdir -p "$KCACHE/apt/lists/partial" "$KCACHE/apt/archives/partial"

# The first "URIs:" of a deb822 file, or the first "deb URI" of a legacy list.
mirror=
for f in /etc/apt/sources.list.d/*.sources; do
	[ -e "$f" ] || continue
	mirror=$(awk '/^URIs:/ { print $2; exit }' "$f")
	[ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -e /etc/apt/sources.list ]; then
	mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' \
		/etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
	echo "fetch-source: no Debian mirror found in /etc/apt/sources.list{,.d}" >&2
	exit 1
fi

list=$KCACHE/apt/sources.list
echo "deb [trusted=yes] $mirror $SUITE main" > "$list"
# As root, into a directory of ours that apt's _apt user may not reach:
# apt would fall back to root itself, with a warning for every file.
aptopts=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/nonexistent
	 -o "Dir::State::Lists=$KCACHE/apt/lists" -o "Dir::Cache::Archives=$KCACHE/apt/archives"
	 -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)

echo "fetch-source: linux-source-$KVER from $SUITE"
apt-get -q "${aptopts[@]}" update
(cd "$KCACHE/apt" && apt-get -q "${aptopts[@]}" download "linux-source-$KVER")
deb=$(ls -t "$KCACHE"/apt/linux-source-"$KVER"_*.deb | head -n 1)

rm -rf "$KCACHE/deb" "$src.tmp"
dpkg -x "$deb" "$KCACHE/deb"
mkdir -p "$src.tmp"
tar -xf "$KCACHE/deb/usr/src/linux-source-$KVER.tar.xz" -C "$src.tmp" --strip-components=1
rm -rf "$KCACHE/deb"

# Debian appends "/*" to .gitignore, which would hide every new file of
# the series from git; drop that trailer so the tree behaves like upstream.
sed -i '/^# Debian packaging: ignore everything/,$d' "$src.tmp/.gitignore"
sed -i '$ { /^#$/d }' "$src.tmp/.gitignore"

git -C "$src.tmp" init -q
git -C "$src.tmp" -c user.name=trace-defer -c user.email=trace-defer@localhost \
	add -A .
git -C "$src.tmp" -c user.name=trace-defer -c user.email=trace-defer@localhost \
	commit -q -m "linux-source-$KVER ($(basename "$deb"))"
git -C "$src.tmp" tag pristine
mv "$src.tmp" "$src"
echo "fetch-source: ready in $src"
