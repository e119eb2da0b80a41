#!/usr/bin/env bash
# Build the desktop bundle (PyInstaller, one folder), archive it, and smoke-test the archive
# from a directory outside the source tree with a clean environment.
#
#   packaging/build.sh            → dist/react-sandbox/ and dist/react-sandbox-VERSION-OS-ARCH.tar.gz
#
# Prints the build time, the bundle's size unpacked and the archive's size.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null 2>&1 || python3 -m pip install --quiet uv

version=$(uv run --quiet python -c "import sandbox_app; print(sandbox_app.__version__)")
os=$(uname -s | tr '[:upper:]' '[:lower:]')
arch=$(uname -m)
archive="dist/react-sandbox-${version}-${os}-${arch}.tar.gz"

started=$(date +%s)
# --group packaging brings in PyInstaller; the project's own locked-down environment (.venv),
# never a system-wide PySide6.
uv run --quiet --group packaging pyinstaller packaging/react-sandbox.spec \
    --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller
# Desktop integration travels with the bundle: react-sandbox/install-linux.sh installs it.
cp packaging/install-linux.sh dist/react-sandbox/
cp -r packaging/linux dist/react-sandbox/linux
mkdir -p dist/react-sandbox/icons
cp -r packaging/icons/hicolor dist/react-sandbox/icons/hicolor
tar -C dist -czf "$archive" react-sandbox
built=$(date +%s)

smoke=$(mktemp -d)
trap 'rm -rf "$smoke"' EXIT
tar -C "$smoke" -xzf "$archive"
# A clean environment: no PYTHONPATH, no virtual environment, no display, nothing from here.
(cd "$smoke" && env -i HOME="$smoke" PATH=/usr/bin:/bin LANG=C.UTF-8 \
    ./react-sandbox/react-sandbox --self-test)
(cd "$smoke" && env -i HOME="$smoke" PATH=/usr/bin:/bin LANG=C.UTF-8 \
    ./react-sandbox/react-sandbox --version)
# The installer from the archive, into a scratch prefix, and out again.
(cd "$smoke" && env -i HOME="$smoke" PATH=/usr/bin:/bin LANG=C.UTF-8 bash -c \
    './react-sandbox/install-linux.sh --prefix prefix >/dev/null &&
     prefix/bin/react-sandbox --version >/dev/null &&
     ./react-sandbox/install-linux.sh --prefix prefix --uninstall >/dev/null &&
     echo "install-linux.sh: installed, ran and uninstalled from the archive"')

echo "build: $((built - started)) s; bundle $(du -sm dist/react-sandbox | cut -f1) MB unpacked;" \
    "archive $(du -m "$archive" | cut -f1) MB ($archive)"
