# Sourced by check-series.sh and mutants.sh: set $full (the commit of the
# whole series in tree-patched), $tree (a worktree of its own that walks
# the series) and $series_build (its build directory, with the patched flavour's
# configuration). Needs $top and $KCACHE.
"$top/kernel/build.sh" patched > /dev/null
full=$(git -C "$KCACHE/tree-patched" rev-parse HEAD)
tree=$KCACHE/tree-series series_build=$KCACHE/build-series
if [ ! -e "$tree/.git" ]; then
	git -C "$KCACHE/src" worktree prune
	git -C "$KCACHE/src" worktree add -q --detach "$tree" pristine
fi
mkdir -p "$series_build"
cmp -s "$KCACHE/build-patched/.config" "$series_build/.config" ||
	cp "$KCACHE/build-patched/.config" "$series_build/.config"
