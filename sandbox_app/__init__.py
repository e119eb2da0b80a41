"""ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace."""

APP_ID = "io.github.reactsandbox.ReactSandbox"  # desktop file, icon and AppStream id
HOMEPAGE = "https://github.com/reactsandbox/react-sandbox"
LICENSE = "MIT"


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata when first asked for: importing
    importlib.metadata costs ~20 ms, which the window's first frame does not wait for."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("react-sandbox")
    except PackageNotFoundError:  # a frozen bundle without metadata, or an unusual checkout
        found = "0.1.0"
    globals()["__version__"] = found
    return found
