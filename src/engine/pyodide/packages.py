"""Package helpers for the Pyodide worker: where wheels go, which versions are installed, removing a
distribution before a wheel replaces it, and micropip installs bounded in time.

Loaded into a namespace of its own, never imported by user code.
"""
import asyncio
import importlib
import importlib.metadata
import json
import os
import sysconfig


def site_packages():
    return sysconfig.get_paths()["purelib"]


def versions(names_json):
    """JSON {name: version or None} for the distributions named in the JSON list."""
    importlib.invalidate_caches()
    found = {}
    for name in json.loads(names_json):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return json.dumps(found)


def remove_distribution(name):
    """Delete an installed distribution's files, as pip does before installing another version of it.

    Unpacking a wheel over an older install would leave the old .dist-info beside the new one (and
    importlib.metadata could report either) plus modules the new version no longer has.
    """
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
    import micropip

    await asyncio.wait_for(micropip.install(requirement), timeout_s)
