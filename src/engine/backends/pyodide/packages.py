"""Package helpers for the Pyodide worker: where wheels go, which versions are installed, removing a
distribution before a wheel replaces it, and micropip installs bounded in time.

Loaded into a namespace of its own, never imported by user code, when the instance starts: the builtins its
functions use are a private copy taken then, before user code could replace any (as in cell.py). The modules
they need are imported when first used, so an instance that installs nothing does not pay for them.
"""
import builtins

__builtins__ = dict(builtins.__dict__)


def site_packages():
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def versions(*names):
    """The installed version of each named distribution, in order; "" for one that is not installed."""
    import importlib
    import importlib.metadata

    importlib.invalidate_caches()
    found = []
    for name in names:
        try:
            found.append(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            found.append("")
    return found


def remove_distribution(name):
    """Delete an installed distribution's files, as pip does before installing another version of it.

    Unpacking a wheel over an older install would leave the old .dist-info beside the new one (and
    importlib.metadata could report either) plus modules the new version no longer has.
    """
    import importlib.metadata
    import os

    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return
    root = os.path.normpath(site_packages())
    folders = set()
    for file in dist.files or ():
        path = os.path.normpath(str(file.locate()))
        # RECORD is data from the wheel: nothing outside site-packages is removed on its word.
        if not path.startswith(root + os.sep):
            continue
        folder = os.path.dirname(path)
        while folder.startswith(root + os.sep):
            folders.add(folder)
            folder = os.path.dirname(folder)
        try:
            os.remove(path)
        except OSError:
            pass
    # Deepest first, so a package folder goes once its subpackages are gone; folders still holding files stay.
    for folder in sorted(folders, key=len, reverse=True):
        try:
            os.rmdir(folder)
        except OSError:
            pass


async def micropip_install(requirement, timeout_s):
    import asyncio

    import micropip

    await asyncio.wait_for(micropip.install(requirement), timeout_s)
