#!/usr/bin/env bash
# Install the Debian packages CrabDesktop-v0 needs: a virtual X server and its cookie tool,
# a window manager, window queries, and the applications the desktop tasks use.
# Non-interactive; run as root (CI) or it uses sudo.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
    xvfb xauth openbox xdotool wmctrl xterm mousepad libglib2.0-bin xfonts-base
