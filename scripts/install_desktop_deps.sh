#!/usr/bin/env bash
# Install the Debian packages CrabDesktop-v0 needs: a virtual X server and its cookie tool,
# a window manager, window queries, the applications the desktop tasks use, and xclip
# (the clipboard tasks set and read the X clipboard with it).
# Non-interactive; run as root (CI) or it uses sudo.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install_desktop_deps.sh: not root and no sudo here: run it as root (bash $0)" >&2
        exit 1
    fi
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
    xvfb xauth openbox xdotool wmctrl xterm mousepad xclip libglib2.0-bin xfonts-base
