#!/usr/bin/env bash
# Run each cmocka unit test binary; fail if any test fails or a binary is
# missing. cmocka's group runner returns the number of failed tests.
set -u
fail=0
for t in "$@"; do
	if [ ! -x "$t" ]; then
		echo "run-unit: $t missing" >&2
		fail=1
		continue
	fi
	echo "== $(basename "$t")"
	if ! "$t"; then
		echo "run-unit: FAILED $t" >&2
		fail=1
	fi
done
[ "$#" -gt 0 ] || { echo "run-unit: no unit tests found" >&2; exit 1; }
exit $fail
