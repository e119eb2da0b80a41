"""The desktop integration files in ``packaging/``: one application id throughout, icons of the
right sizes, the freedesktop validators' approval, and install-linux.sh's install/uninstall.

Fast and offline. The validator checks skip when ``desktop-file-validate`` (Debian package
``desktop-file-utils``) or ``appstreamcli`` (``appstream``) is not installed.
"""

from __future__ import annotations

import configparser
import os
import shutil
import struct
import subprocess
import sys
import tomllib
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import sandbox_app

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
APP_ID = "io.github.reactsandbox.ReactSandbox"
DESKTOP = PACKAGING / "linux" / f"{APP_ID}.desktop"
METAINFO = PACKAGING / "linux" / f"{APP_ID}.metainfo.xml"
ICONS = PACKAGING / "icons"
SVG = ICONS / f"{APP_ID}.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
INSTALL = PACKAGING / "install-linux.sh"
EXE = "react-sandbox"


def pyproject() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_package_uses_the_same_application_id() -> None:
    # The window is matched to its desktop file and icon by this id (Wayland's app id).
    assert getattr(sandbox_app, "APP_ID", APP_ID) == APP_ID


def test_desktop_file_names_the_app_its_icon_and_command() -> None:
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "ReAct Sandbox"
    assert entry["Icon"] == APP_ID == DESKTOP.stem
    assert entry["Exec"].split()[0] == EXE
    assert EXE in pyproject()["scripts"]  # type: ignore[operator]
    assert entry["Terminal"] == "false"
    # One main category: with two (Development and Education) some menus list the app twice.
    main = {
        "AudioVideo",
        "Audio",
        "Video",
        "Development",
        "Education",
        "Game",
        "Graphics",
        "Network",
        "Office",
        "Science",
        "Settings",
        "System",
        "Utility",
    }
    assert [c for c in entry["Categories"].split(";") if c in main] == ["Development"]
    assert entry["Keywords"].endswith(";")
    # X11 window managers match windows by WM_CLASS, whose class part Qt takes from the
    # application name.
    from sandbox_app.ui.window.app import APPLICATION

    assert entry["StartupWMClass"] == APPLICATION
    assert "MimeType" not in entry  # no MIME definition is shipped


def test_metainfo_describes_this_release_with_the_same_id() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component"
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == pyproject()["license"]
    assert root.findtext("name") == "ReAct Sandbox"
    assert root.findtext("launchable[@type='desktop-id']") == DESKTOP.name
    assert root.findtext("provides/binary") == EXE
    assert root.find("content_rating[@type='oars-1.1']") is not None
    versions = [release.get("version") for release in root.iter("release")]
    assert versions[0] == pyproject()["version"]
    assert len(root.findall("description/ul/li")) >= 5
    homepage = root.findtext("url[@type='homepage']")
    assert homepage == "https://github.com/reactsandbox/react-sandbox"
    # Screenshots are the README's pictures, by raw URL into the homepage's repository.
    raw = "https://raw.githubusercontent.com/reactsandbox/react-sandbox/main/"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shots = root.findall("screenshots/screenshot")
    assert len(shots) == 3
    assert [shot.get("type") for shot in shots].count("default") == 1
    for shot in shots:
        assert (shot.findtext("caption") or "").strip()
        url = shot.findtext("image") or ""
        assert url.startswith(raw)
        picture = url.removeprefix(raw)
        assert (ROOT / picture).is_file(), picture
        assert f"]({picture})" in readme, f"{picture} is not one of the README's pictures"


def test_every_hicolor_png_has_its_size() -> None:
    from PySide6.QtGui import QImage

    for size in PNG_SIZES:
        path = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        image = QImage(str(path))
        assert not image.isNull(), path
        assert (image.width(), image.height()) == (size, size), path
        assert image.hasAlphaChannel(), path
        assert image.pixelColor(0, 0).alpha() == 0, f"{path}: the badge's corner is not clear"
        middle = image.pixelColor(size // 2, size // 2)
        assert middle.alpha() == 255, f"{path}: the middle is not opaque"
    scalable = ICONS / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    assert scalable.read_bytes() == SVG.read_bytes(), "run packaging/icons/render_icons.py"


def test_svg_icon_draws_without_fonts() -> None:
    from PySide6.QtSvg import QSvgRenderer

    root = ET.parse(SVG).getroot()
    assert not [e for e in root.iter() if e.tag.rsplit("}", 1)[-1] in {"text", "image"}]
    renderer = QSvgRenderer(str(SVG))
    assert renderer.isValid()
    assert renderer.viewBox().width() == renderer.viewBox().height()


def test_windows_ico_holds_every_size_up_to_256() -> None:
    from PySide6.QtGui import QImage

    data = (ICONS / "react-sandbox.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", data)
    assert (reserved, kind) == (0, 1)
    sizes = []
    for i in range(count):
        width, height, *_, length, offset = struct.unpack_from("<BBBBHHII", data, 6 + 16 * i)
        size = width or 256
        image = QImage.fromData(data[offset : offset + length])
        assert (image.width(), image.height()) == (size, height or 256)
        sizes.append(size)
    assert {16, 32, 48, 256} <= set(sizes)


def run_tool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=60, check=False
    )


def validator(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: desktop-file-utils / appstream)")
    return path


def assert_desktop_file_valid(path: Path) -> None:
    result = run_tool(validator("desktop-file-validate"), path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # Hints (such as two main categories, which is intended) are allowed.
    assert "error:" not in output
    assert "warning:" not in output


def test_desktop_file_validates() -> None:
    assert_desktop_file_valid(DESKTOP)


def test_metainfo_validates_offline() -> None:
    # --no-net: the URL and screenshot checks need the network (they pass once published).
    result = run_tool(validator("appstreamcli"), "validate", "--no-net", METAINFO)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    issues = [line for line in output.splitlines() if line[:2] in {"E:", "W:"}]
    assert not issues, output


needs_linux_bash = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bash") is None,
    reason="install-linux.sh is a Linux bash script",
)


def install_script(*args: str | Path) -> subprocess.CompletedProcess[str]:
    # Caches are refreshed only where they exist; a temporary prefix has none.
    env = {**os.environ, "LC_ALL": "C"}
    return subprocess.run(
        ["bash", str(INSTALL), *(str(a) for a in args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """A stand-in for the one-folder bundle: an executable react-sandbox and a library."""
    folder = tmp_path / "bundle"
    (folder / "_internal").mkdir(parents=True)
    exe = folder / EXE
    exe.write_text('#!/bin/sh\necho "fake react-sandbox $*"\n', encoding="utf-8")
    exe.chmod(0o755)
    (folder / "_internal" / "libfake.so").write_bytes(b"\0")
    return folder


@needs_linux_bash
def test_install_then_uninstall_leaves_nothing(tmp_path: Path, bundle: Path) -> None:
    prefix = tmp_path / "prefix"
    data, app = prefix / "share", prefix / "share" / "react-sandbox"
    for _ in range(2):  # installing twice replaces the first install
        result = install_script("--prefix", prefix, bundle)
        assert result.returncode == 0, result.stderr

    link = prefix / "bin" / EXE
    assert link.is_symlink()
    assert link.resolve() == (app / EXE).resolve()
    ran = subprocess.run(
        [str(link), "hello"], capture_output=True, text=True, timeout=30, check=True
    )
    assert ran.stdout == "fake react-sandbox hello\n"
    assert (app / "_internal" / "libfake.so").is_file()

    desktop = data / "applications" / DESKTOP.name
    installed_exec = [line for line in desktop.read_text().splitlines() if line.startswith("Exec=")]
    assert installed_exec == [f"Exec={app / EXE} %f"]  # a full path: BIN may not be on PATH
    if shutil.which("desktop-file-validate"):
        assert_desktop_file_valid(desktop)
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    for size in PNG_SIZES:
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert icon.is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / SVG.name).is_file()

    result = install_script("--prefix", prefix, "--uninstall")
    assert result.returncode == 0, result.stderr
    assert "uninstalled" in result.stdout
    assert sorted(prefix.rglob("*")) == []  # every file and every directory it created

    again = install_script("--prefix", prefix, "--uninstall")
    assert again.returncode == 0
    assert "nothing to remove" in again.stdout


@needs_linux_bash
def test_uninstall_keeps_what_was_there_before(tmp_path: Path, bundle: Path) -> None:
    prefix = tmp_path / "prefix"
    other = prefix / "share" / "applications" / "other.desktop"
    other.parent.mkdir(parents=True)
    other.write_text("[Desktop Entry]\n", encoding="utf-8")
    assert install_script("--prefix", prefix, bundle).returncode == 0
    assert install_script("--prefix", prefix, "--uninstall").returncode == 0
    assert sorted(prefix.rglob("*")) == [prefix / "share", other.parent, other]


@needs_linux_bash
def test_install_refuses_to_replace_a_command_it_did_not_install(
    tmp_path: Path, bundle: Path
) -> None:
    prefix = tmp_path / "prefix"
    theirs = prefix / "bin" / EXE
    theirs.parent.mkdir(parents=True)
    theirs.write_text("#!/bin/sh\n", encoding="utf-8")
    result = install_script("--prefix", prefix, bundle)
    assert result.returncode == 1
    assert "--force" in result.stderr
    assert theirs.read_text(encoding="utf-8") == "#!/bin/sh\n"
    assert not (prefix / "share").exists()


@needs_linux_bash
def test_install_refuses_a_folder_without_the_executable(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-bundle"
    empty.mkdir()
    result = install_script("--prefix", tmp_path / "prefix", empty)
    assert result.returncode == 1
    assert f"no executable '{EXE}'" in result.stderr
    assert not (tmp_path / "prefix").exists()


@needs_linux_bash
def test_install_script_help_and_bad_options() -> None:
    shown = install_script("--help")
    assert shown.returncode == 0
    assert "--uninstall" in shown.stdout
    assert "--prefix" in shown.stdout
    bad = install_script("--frobnicate")
    assert bad.returncode == 1
    assert "unknown option: --frobnicate" in bad.stderr


# ---- the bundle's recipe ---------------------------------------------------------------------

SPEC = PACKAGING / "react-sandbox.spec"
QT = "PySide6/Qt"
KEPT = [
    f"{QT}/plugins/platforms/libqxcb.so",
    f"{QT}/plugins/platforms/libqwayland.so",
    f"{QT}/plugins/platformthemes/libqxdgdesktopportal.so",
    f"{QT}/lib/libQt6Gui.so.6",
    "libfontconfig.so.1",
    "libfreetype.so.6",
    "libpng16.so.16",
    "libwayland-client.so.0",
    "libwayland-cursor.so.0",
    "libxcb-render.so.0",
    "libxkbcommon.so.0",
    "libX11.so.6",
    "libglib-2.0.so.0",
    "libdbus-1.so.3",
]
# What Qt's GTK theme plugin pulls in on a host with GTK (a real build's list).
GTK = [
    f"{QT}/plugins/platformthemes/libqgtk3.so",
    "libgtk-3.so.0",
    "libgdk-3.so.0",
    "libgdk_pixbuf-2.0.so.0",
    "libatk-1.0.so.0",
    "libatk-bridge-2.0.so.0",
    "libpango-1.0.so.0",
    "libpangocairo-1.0.so.0",
    "libpangoft2-1.0.so.0",
    "libcairo.so.2",
    "libcairo-gobject.so.2",
    "libpixman-1.so.0",
    "libharfbuzz.so.0",
    "libepoxy.so.0",
    "libXrender.so.1",
]


def collected_by_the_spec(
    monkeypatch: pytest.MonkeyPatch, binaries: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """Run the recipe as PyInstaller would, with stand-ins for PyInstaller's objects: what
    reaches COLLECT (the bundle's folder) of the binaries Analysis found."""
    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_data_files = lambda *args, **kwargs: []  # type: ignore[attr-defined]
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    collected: list[tuple[str, str, str]] = []

    class Analysis:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.binaries = list(binaries)
            self.pure: list[object] = []
            self.scripts: list[object] = []
            self.datas: list[object] = []

    def collect(exe: object, found: list[tuple[str, str, str]], *rest: object, **k: object) -> None:
        collected.extend(found)

    names = {
        "SPECPATH": str(PACKAGING),
        "Analysis": Analysis,
        "PYZ": lambda *args, **kwargs: object(),
        "EXE": lambda *args, **kwargs: object(),
        "COLLECT": collect,
    }
    exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), names)
    return collected


def test_the_bundle_leaves_out_qts_gtk_theme_and_what_only_it_pulls_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With it, the bundle's contents depend on whether the build host has GTK.
    found = [(name, f"/usr/lib/{name.rsplit('/', 1)[-1]}", "BINARY") for name in KEPT + GTK]
    collected = collected_by_the_spec(monkeypatch, found)
    assert [entry[0] for entry in collected] == KEPT
