#!/usr/bin/env bash
# Makes sure a fence agent is there for the tests' stand-in of
# fence-agents-remediation (test/far), which runs Debian's fence_dummy:
# installs Debian's fence-agents package where it is missing, with apt-get
# (through sudo when not root), or stops with one line saying what to run.
# make test, make test-e2e and .ci/run call it.
set -euo pipefail

# Debian installs the agents in /usr/sbin, which a non-root PATH may lack;
# the Makefile adds it to PATH for the tests too.
sbin=${FENCE_AGENTS_SBIN:-/usr/sbin}
export PATH="$PATH:$sbin"
if command -v fence_dummy >/dev/null; then
  exit 0
fi

install="apt-get update && apt-get install -y fence-agents"
if ! command -v apt-get >/dev/null; then
  echo "fence_dummy not found: install your distribution's fence-agents package (Debian, Ubuntu: $install), then run make again" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "fence_dummy not found: as root, run '$install', then run make again" >&2
    exit 1
  fi
  # Without a terminal sudo must not wait for a password it cannot read.
  if [ -t 0 ]; then sudo=(sudo); else sudo=(sudo -n); fi
fi

echo "Installing Debian's fence-agents for the FAR stand-in's fence_dummy (${sudo[*]:-as root} apt-get) ..."
if ! { "${sudo[@]}" apt-get update -qq &&
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fence-agents; } >/dev/null; then
  echo "Installing fence-agents failed: run 'sudo apt-get update && sudo apt-get install -y fence-agents', then run make again" >&2
  exit 1
fi
if ! command -v fence_dummy >/dev/null; then
  echo "fence-agents is installed but fence_dummy is not in $sbin: run 'dpkg -L fence-agents | grep fence_dummy' and add its directory to PATH" >&2
  exit 1
fi
