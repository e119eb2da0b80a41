"""ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("react-sandbox")
except PackageNotFoundError:  # a frozen bundle without metadata, or an unusual checkout
    __version__ = "0.1.0"

APP_ID = "io.github.reactsandbox.ReactSandbox"  # desktop file, icon and AppStream id
HOMEPAGE = "https://github.com/reactsandbox/react-sandbox"
LICENSE = "MIT"
