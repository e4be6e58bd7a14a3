# SPDX-License-Identifier: BSD-3-Clause
"""The Python tests' counterpart of check.h: check() counts and names each
failure, finish() prints the closing 'N passed, M failed' line and gives
the exit status (1 on any failure)."""

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what, flush=True)
    return ok


def finish():
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
