#!/usr/bin/env bash
# What the tests need beyond the Swift toolchain, installed when this machine lets us:
#   iproute2           network namespaces for broadcast discovery
#   mosquitto(-clients) the reference MQTT broker and its clients
#   postgresql         the cloud's production engine, which every storage test also runs on
#   python3-venv/pip   the virtual environment of the Python interop peers (.venv-test/)
#   dbus               a private dbus-daemon for the D-Bus client and the Bluetooth tests (bluezoo on it)
#   libsqlite3-dev     SQLite, which the cloud's default engine calls directly
# On Debian/Ubuntu, as root (CI) or with password-less sudo, missing packages are installed with
# apt; otherwise this stops at once and prints the exact command to run. On macOS, Homebrew.
set -euo pipefail

apt_packages=(iproute2 mosquitto mosquitto-clients postgresql python3 python3-venv python3-pip dbus libsqlite3-dev pkg-config)
brew_packages=(mosquitto postgresql@16 python dbus)

stop() {
    echo "scripts/test.sh needs: $1" >&2
    echo "Run this, then scripts/test.sh again:" >&2
    echo "    $2" >&2
    exit 1
}

if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    missing=()
    for package in "${apt_packages[@]}"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && exit 0
    install="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        sh -c "$install"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo sh -c "$install"
    else
        stop "${missing[*]}" "sudo sh -c '$install'"
    fi
elif [ "$(uname -s)" = Darwin ]; then
    command -v brew >/dev/null 2>&1 || stop "Homebrew (for ${brew_packages[*]})" "see https://brew.sh"
    missing=()
    for package in "${brew_packages[@]}"; do
        brew list --versions "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && exit 0
    brew install "${missing[@]}"
else
    for tool in mosquitto initdb pg_ctl python3; do
        command -v "$tool" >/dev/null 2>&1 || stop "mosquitto, PostgreSQL's server binaries and python3 with venv" \
            "your package manager's install command for them (on Debian: apt-get install ${apt_packages[*]})"
    done
fi
