"""Render the application icon's PNG sizes, the Windows .ico and (on request) a macOS iconset.

Run from the repository root after editing the SVG; the outputs are committed:

    QT_QPA_PLATFORM=offscreen uv run python packaging/icons/render_icons.py

It uses Qt's own SVG renderer (PySide6.QtSvg, already a dependency of the app), so the PNGs
look exactly like what the app's Qt would draw and nothing else needs installing.

Outputs, beside this script:

* ``hicolor/<N>x<N>/apps/<APP_ID>.png`` for N in 16, 24, 32, 48, 64, 128, 256, 512, and
  ``hicolor/scalable/apps/<APP_ID>.svg`` (a copy of the source): the freedesktop icon theme
  layout that ``install-linux.sh`` copies into ``$XDG_DATA_HOME/icons/``.
* ``react-sandbox.ico``: 16–256 px, each entry a PNG. Qt's own ICO writer stores a single
  image, so the container (a 6-byte header and a 16-byte entry per size) is written here;
  PNG entries are read by Windows Vista and later and by PyInstaller's ``--icon``.
* macOS: ``--iconset DIR`` also writes ``DIR/react-sandbox.iconset/`` with the file names
  ``iconutil`` expects; on a Mac, ``iconutil -c icns DIR/react-sandbox.iconset`` turns it
  into ``react-sandbox.icns`` (not done here: iconutil exists only on macOS).
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
from pathlib import Path

APP_ID = "io.github.reactsandbox.ReactSandbox"
HERE = Path(__file__).resolve().parent
SOURCE = HERE / f"{APP_ID}.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICO_NAME = "react-sandbox.ico"
# iconutil's names: icon_<S>x<S>.png and icon_<S>x<S>@2x.png (twice the pixels).
ICONSET = {
    f"icon_{s}x{s}{'@2x' if scale == 2 else ''}.png": s * scale
    for s in (16, 32, 128, 256, 512)
    for scale in (1, 2)
}


def render_png(svg: Path, size: int) -> bytes:
    """The SVG drawn at size × size pixels, on a transparent background, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: cannot read {svg} as SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # For PNG, Qt maps quality 0 to the strongest zlib compression (smallest file).
    if not image.convertToFormat(QImage.Format.Format_ARGB32).save(buffer, "PNG", 0):
        raise SystemExit(f"render_icons: Qt could not encode a {size} px PNG")
    buffer.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows ICO holding one PNG-compressed image per size (sizes ≤ 256)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))  # reserved, type 1 = icon, count
    offset = len(header) + 16 * len(sizes)
    entries, images = b"", b""
    for size in sizes:
        data = pngs[size]
        side = size % 256  # a width or height of 256 is stored as 0
        # width, height, palette colours, reserved, colour planes, bits per pixel, size, offset
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        images += data
        offset += len(data)
    return header + entries + images


def write_if_changed(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_bytes() == data:
        return
    path.write_bytes(data)
    sys.stdout.write(f"wrote {path.relative_to(HERE.parent.parent)} ({len(data)} bytes)\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--iconset",
        type=Path,
        metavar="DIR",
        help="also write DIR/react-sandbox.iconset/ for macOS iconutil",
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])

    cache: dict[int, bytes] = {}

    def png(size: int) -> bytes:
        if size not in cache:
            cache[size] = render_png(SOURCE, size)
        return cache[size]

    for size in PNG_SIZES:
        write_if_changed(HERE / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png", png(size))
    write_if_changed(HERE / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg", SOURCE.read_bytes())
    write_if_changed(HERE / ICO_NAME, ico_bytes({size: png(size) for size in ICO_SIZES}))
    if args.iconset is not None:
        iconset = args.iconset / "react-sandbox.iconset"
        shutil.rmtree(iconset, ignore_errors=True)
        iconset.mkdir(parents=True)
        for name, pixels in ICONSET.items():
            (iconset / name).write_bytes(png(pixels))
        sys.stdout.write(f"wrote {iconset}; on macOS: iconutil -c icns {iconset}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
