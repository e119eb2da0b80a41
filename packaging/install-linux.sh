#!/usr/bin/env bash
# Install ReAct Sandbox for the current user, or remove it (--uninstall). See --help.
set -euo pipefail

APP_ID="io.github.reactsandbox.ReactSandbox"
EXE="react-sandbox"
MANIFEST_NAME=".install-manifest"
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    cat <<EOF
Usage: $(basename -- "$0") [--prefix DIR] [--force] [BUNDLE_DIR]
       $(basename -- "$0") [--prefix DIR] --uninstall

Install ReAct Sandbox for the current user, no root needed:
  the app bundle      -> DATA/react-sandbox/  (a copy of BUNDLE_DIR)
  the command         -> BIN/react-sandbox    (a symbolic link into the copy)
  the menu entry      -> DATA/applications/$APP_ID.desktop
  the icons           -> DATA/icons/hicolor/<size>/apps/$APP_ID.{png,svg}
  the AppStream data  -> DATA/metainfo/$APP_ID.metainfo.xml
where DATA is \${XDG_DATA_HOME:-\$HOME/.local/share} and BIN is \$HOME/.local/bin.

BUNDLE_DIR is the app's one-folder bundle: a directory holding an executable named
'$EXE'. Without it, the first of these that holds one is used:
  $SCRIPT_DIR
  $SCRIPT_DIR/$EXE
  $SCRIPT_DIR/dist/$EXE
  $SCRIPT_DIR/../dist/$EXE
The desktop file, icons and metainfo are taken from beside this script
(linux/ and icons/hicolor/).

Options:
  --prefix DIR   use DIR/share for DATA and DIR/bin for BIN (--prefix ~/.local is the
                 default layout; a temporary DIR is handy for trying the script out)
  --force        replace a BIN/$EXE that this script did not install (for example a
                 'uv tool install' or 'pipx' one)
  --uninstall    remove exactly what an earlier install put there
  -h, --help     show this help
EOF
}

say() { printf '%s\n' "$*"; }
die() {
    printf 'install-linux.sh: %s\n' "$*" >&2
    exit 1
}

prefix=""
uninstall=0
force=0
bundle=""
while (($#)); do
    case "$1" in
        -h | --help)
            usage
            exit 0
            ;;
        --uninstall) uninstall=1 ;;
        --force) force=1 ;;
        --prefix)
            (($# >= 2)) || die "--prefix needs a directory"
            prefix="$2"
            shift
            ;;
        --prefix=*) prefix="${1#--prefix=}" ;;
        -*)
            usage >&2
            die "unknown option: $1"
            ;;
        *)
            [[ -z "$bundle" ]] || die "only one bundle directory, please (got '$bundle' and '$1')"
            bundle="$1"
            ;;
    esac
    shift
done

if [[ -n "$prefix" ]]; then
    prefix="$(realpath -m -- "$prefix")"
    DATA="$prefix/share"
    BIN="$prefix/bin"
else
    [[ -n "${HOME:-}" ]] || die "HOME is not set; use --prefix DIR"
    DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
    BIN="$HOME/.local/bin"
fi
APP_DIR="$DATA/react-sandbox"
MANIFEST="$APP_DIR/$MANIFEST_NAME"
DESKTOP="$DATA/applications/$APP_ID.desktop"
METAINFO="$DATA/metainfo/$APP_ID.metainfo.xml"
LINK="$BIN/$EXE"

# Refresh the desktop's caches, if the tools are there; a failure is not fatal.
# Only caches that already exist are refreshed. Without one, desktops read the folders
# directly; one created here would go stale when another app adds files without refreshing
# it, and would be left behind by --uninstall. (The desktop file declares no MimeType, so
# the MIME cache never lists this app; it is refreshed only to keep an existing one in step.)
refresh_caches() {
    if command -v update-desktop-database >/dev/null 2>&1 \
        && [[ -f "$DATA/applications/mimeinfo.cache" ]]; then
        update-desktop-database -q "$DATA/applications" 2>/dev/null || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 \
        && [[ -f "$DATA/icons/hicolor/icon-theme.cache" ]]; then
        gtk-update-icon-cache -q -t -f "$DATA/icons/hicolor" 2>/dev/null || true
    fi
}

# A directory the install created: removed again if nothing else has been put in it since.
remove_dir_if_empty() {
    rmdir -- "$1" 2>/dev/null || true
}

link_is_ours() {
    [[ -L "$LINK" && "$(readlink -- "$LINK")" == "$APP_DIR/$EXE" ]]
}

remove_file() {
    rm -f -- "$1"
    say "removed $1"
    removed=$((removed + 1))
}

do_uninstall() {
    local removed=0 path kind
    local -a files=() created=()
    if [[ -f "$MANIFEST" ]]; then
        while IFS=$'\t' read -r kind path; do
            case "$kind" in
                # Only files of ours: a damaged manifest must not reach outside DATA.
                file) [[ "$path" != "$DATA"/* ]] || files+=("$path") ;;
                link) [[ "$path" != "$LINK" ]] || files+=("$path") ;;
                dir) created+=("$path") ;;
            esac
        done <"$MANIFEST"
    else
        # No manifest (an install by hand, or a damaged one): the fixed names.
        files=("$LINK" "$DESKTOP" "$METAINFO" "$DATA"/icons/hicolor/*/apps/"$APP_ID".{png,svg})
    fi
    for path in "${files[@]}"; do
        if [[ "$path" == "$LINK" ]]; then
            if link_is_ours; then remove_file "$LINK"; fi
        elif [[ -f "$path" && ! -L "$path" ]]; then
            remove_file "$path"
        fi
    done
    if [[ -d "$APP_DIR" ]]; then
        rm -rf -- "$APP_DIR"
        say "removed $APP_DIR/"
        removed=$((removed + 1))
    fi
    # Then the directories the install created, each before its parent, if now empty.
    if ((${#created[@]})); then
        while IFS= read -r path; do
            remove_dir_if_empty "$path"
        done < <(printf '%s\n' "${created[@]}" | sort -r)
    fi
    if ((removed == 0)); then
        say "ReAct Sandbox is not installed under $DATA; nothing to remove."
    else
        refresh_caches
        say "ReAct Sandbox uninstalled."
    fi
}

find_bundle() {
    local candidate
    for candidate in "$SCRIPT_DIR" "$SCRIPT_DIR/$EXE" "$SCRIPT_DIR/dist/$EXE" \
        "$SCRIPT_DIR/../dist/$EXE"; do
        if [[ -f "$candidate/$EXE" && -x "$candidate/$EXE" ]]; then
            (cd -- "$candidate" && pwd)
            return 0
        fi
    done
    return 1
}

# The desktop file's Exec names the installed executable by its full path, so the menu entry
# works even when BIN is not on the desktop session's PATH. Paths with characters that the
# Exec key would need quoted keep the plain command name instead.
install_desktop_file() {
    local source="$1" exe="$APP_DIR/$EXE"
    if [[ "$exe" =~ ^[A-Za-z0-9/._+-]+$ ]]; then
        sed -e "s|^Exec=$EXE |Exec=$exe |" -e "s|^Exec=$EXE\$|Exec=$exe|" "$source" >"$DESKTOP"
    else
        cp -- "$source" "$DESKTOP"
        say "note: the menu entry runs '$EXE' from PATH (the install path has unusual characters)"
    fi
    chmod 644 -- "$DESKTOP"
}

do_install() {
    local source_desktop="$SCRIPT_DIR/linux/$APP_ID.desktop"
    local source_metainfo="$SCRIPT_DIR/linux/$APP_ID.metainfo.xml"
    local source_icons="$SCRIPT_DIR/icons/hicolor"
    [[ -f "$source_desktop" ]] || die "missing $source_desktop"
    [[ -f "$source_metainfo" ]] || die "missing $source_metainfo"
    [[ -d "$source_icons" ]] || die "missing $source_icons/"

    if [[ -z "$bundle" ]]; then
        bundle="$(find_bundle)" || die "no bundle found beside $SCRIPT_DIR (looked for an \
executable '$EXE' in ., ./$EXE, ./dist/$EXE and ../dist/$EXE); build it first or pass BUNDLE_DIR"
    fi
    [[ -d "$bundle" ]] || die "not a directory: $bundle"
    bundle="$(cd -- "$bundle" && pwd)"
    [[ -f "$bundle/$EXE" && -x "$bundle/$EXE" ]] \
        || die "$bundle has no executable '$EXE'; is it the app's one-folder bundle?"
    [[ "$bundle" != "$APP_DIR" ]] || die "$bundle is already the installed copy"
    case "$APP_DIR/" in "$bundle"/*) die "cannot install $bundle into itself ($APP_DIR)" ;; esac

    if [[ -e "$LINK" || -L "$LINK" ]] && ! link_is_ours && ((!force)); then
        die "$LINK exists and is not from this installer (a 'uv tool' or 'pipx' install?); \
remove it or run again with --force"
    fi

    # Directories that do not exist yet are recorded, so --uninstall can remove them again.
    local -a created=()
    local dir
    local -a icons=()
    local -A seen=()
    local icon rel line
    # A reinstall keeps the directories the first install created on its list.
    if [[ -f "$MANIFEST" ]]; then
        while IFS=$'\t' read -r line dir; do
            if [[ "$line" == dir && -n "$dir" && -z "${seen[$dir]:-}" ]]; then
                seen[$dir]=1
                created+=("$dir")
            fi
        done <"$MANIFEST"
    fi
    while IFS= read -r -d '' icon; do
        icons+=("$icon")
        rel="${icon#"$source_icons"/}"
        dir="$DATA/icons/hicolor/$(dirname -- "$rel")"
        while [[ ! -d "$dir" && "$dir" != "$DATA" && -z "${seen[$dir]:-}" ]]; do
            seen[$dir]=1
            created+=("$dir")
            dir="$(dirname -- "$dir")"
        done
    done < <(find "$source_icons" -type f \( -name "$APP_ID.png" -o -name "$APP_ID.svg" \) \
        -print0 | sort -z)
    ((${#icons[@]})) || die "no icons named $APP_ID.* under $source_icons"
    for dir in "$DATA" "$BIN" "$DATA/applications" "$DATA/metainfo"; do
        if [[ ! -d "$dir" && -z "${seen[$dir]:-}" ]]; then
            seen[$dir]=1
            created+=("$dir")
        fi
    done

    # The bundle: copied beside the old one, then swapped in.
    mkdir -p -- "$DATA"
    local staging="$DATA/.react-sandbox.installing.$$"
    rm -rf -- "$staging"
    trap 'rm -rf -- "$staging"' EXIT
    mkdir -p -- "$staging"
    cp -a -- "$bundle/." "$staging/"
    rm -rf -- "$APP_DIR"
    mv -- "$staging" "$APP_DIR"
    trap - EXIT
    say "installed the app in $APP_DIR/"

    local -a manifest=()
    mkdir -p -- "$BIN"
    ln -sfn -- "$APP_DIR/$EXE" "$LINK"
    manifest+=("link	$LINK")
    say "installed $LINK -> $APP_DIR/$EXE"

    mkdir -p -- "$DATA/applications" "$DATA/metainfo"
    install_desktop_file "$source_desktop"
    manifest+=("file	$DESKTOP")
    say "installed $DESKTOP"

    install -m 644 -- "$source_metainfo" "$METAINFO"
    manifest+=("file	$METAINFO")
    say "installed $METAINFO"

    local target
    for icon in "${icons[@]}"; do
        rel="${icon#"$source_icons"/}"
        target="$DATA/icons/hicolor/$rel"
        mkdir -p -- "$(dirname -- "$target")"
        install -m 644 -- "$icon" "$target"
        manifest+=("file	$target")
    done
    say "installed ${#icons[@]} icons in $DATA/icons/hicolor/"

    for dir in "${created[@]}"; do
        manifest+=("dir	$dir")
    done
    printf '%s\n' "${manifest[@]}" >"$MANIFEST"

    refresh_caches
    say "ReAct Sandbox is installed. Start it from the applications menu or with '$EXE'."
    case ":$PATH:" in
        *":$BIN:"*) ;;
        *) say "note: $BIN is not on your PATH; add it to run '$EXE' from a terminal." ;;
    esac
    say "To remove it: $0${prefix:+ --prefix $prefix} --uninstall"
}

if ((uninstall)); then
    [[ -z "$bundle" ]] || die "--uninstall takes no bundle directory"
    do_uninstall
else
    do_install
fi
