"""The README's Claude Desktop entry for the container route, as CI starts it.

usage: readme_entry.py README NAME PODMAN HOST_FOLDER

Reads the JSON block after the line `<!-- container-entry: NAME -->` in README (NAME: macos,
windows), and prints its command and arguments, one per line, with exactly two changes, so that
what CI runs is what a person pastes: the command (`docker`) becomes PODMAN, since no Docker
engine runs here, and the host folder of its one `-v HOST:CONTAINER:ro` becomes HOST_FOLDER.
Fails when the entry has any other shape.
"""

from __future__ import annotations

import json
import sys


def entry(readme: str, name: str) -> dict:
    marker = f"<!-- container-entry: {name} -->"
    at = readme.find(marker)
    if at < 0:
        raise SystemExit(f"readme_entry: no `{marker}` in the README")
    start = readme.index("```json\n", at) + len("```json\n")
    end = readme.index("```", start)
    return json.loads(readme[start:end])["mcpServers"]["duckgate"]


def main() -> None:
    readme_path, name, podman, host_folder = sys.argv[1:5]
    with open(readme_path, encoding="utf-8") as readme:
        server = entry(readme.read(), name)
    if server["command"] != "docker":
        raise SystemExit(f"readme_entry: {name}'s command is {server['command']!r}, not docker")
    args = list(server["args"])
    mounts = [i for i, arg in enumerate(args) if arg == "-v"]
    if len(mounts) != 1:
        raise SystemExit(f"readme_entry: {name} has {len(mounts)} -v options, not one")
    volume = args[mounts[0] + 1]
    # The container side is the last two fields (`/data:ro`); the host side may hold a colon
    # itself (`C:\Users\me\health`).
    host, container, mode = volume.rsplit(":", 2)
    if mode != "ro" or not container.startswith("/"):
        raise SystemExit(f"readme_entry: {name}'s volume {volume!r} is not HOST:/FOLDER:ro")
    args[mounts[0] + 1] = f"{host_folder}:{container}:ro"
    print(podman)
    for arg in args:
        print(arg)


if __name__ == "__main__":
    main()
