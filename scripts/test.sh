#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run them.
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

# Browser tests drive Debian's Chromium through Playwright (never `playwright install`). Everything the
# scores read (WordNet 3.0 included) comes with the pip install below: no other system package.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "note: ${missing[*]} missing (not root): browser tests skip" >&2
    fi
fi

python -m pip install -q -e '.[test,ray]'

export GRADIO_ANALYTICS_ENABLED=False HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
# One pytest process per core (pytest-xdist), a test file's tests together (its module fixtures are built once):
# much of the suite waits on subprocesses, browsers and servers, so 2 processes on 2 cores take ~10 min, not ~16.
# HALLU_STUDIO_TEST_PROCESSES=0 runs them in this one process.
python -m pytest -n "${HALLU_STUDIO_TEST_PROCESSES:-auto}" --dist loadfile "$@"
