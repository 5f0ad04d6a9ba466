#!/usr/bin/env python3
"""mdBook preprocessor: replaces `{{#plugin-catalog}}` in a chapter with the plugin catalog,
generated from the repository at build time (never written by hand).

Until the catalog index exists, the catalog is what the repository holds: every crate under
plugins/ whose Cargo.toml description names a plugin key (`NAME.mni.dev/vN`), built in when
mni-scaffold depends on it, external otherwise, and every cargo-generate template there.
mdBook calls `catalog.py supports RENDERER` (every renderer is supported), then passes
`[context, book]` as JSON on stdin and reads the book back on stdout.
"""

import json
import re
import sys
import tomllib
from pathlib import Path

MARKER = "{{#plugin-catalog}}"
KEY = re.compile(r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)+/v[0-9]+(?:-[a-z0-9]+)?\b")


def first_comment(toml: Path) -> str:
    """The first comment line of a TOML file, without its `#`."""
    for line in toml.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def entries(repo: Path):
    """(key, kind, location, description) of every plugin in the repository, by key."""
    scaffold = tomllib.loads((repo / "scaffold-cli/Cargo.toml").read_text())
    builtin = set(scaffold.get("dependencies", {}))
    found = []
    for dir in sorted((repo / "plugins").iterdir()):
        manifest = dir / "Cargo.toml"
        if manifest.is_file():
            package = tomllib.loads(manifest.read_text()).get("package", {})
            description = package.get("description", "")
            key = KEY.search(description)
            if key is None:
                continue
            # The description starts with the key and a separator; the rest describes it.
            rest = description[key.end():].lstrip(":,; ") if key.start() == 0 else description
            kind = "built in" if package.get("name") in builtin else "external"
            found.append((key.group(0), kind, f"plugins/{dir.name}", rest))
        elif (dir / "cargo-generate.toml").is_file():
            found.append(
                ("—", "cargo-generate template", f"plugins/{dir.name}",
                 first_comment(dir / "cargo-generate.toml"))
            )
    return found


def catalog(repo: Path) -> str:
    rows = ["| Plugin key | Kind | Source | Description |", "|---|---|---|---|"]
    for key, kind, location, description in entries(repo):
        key = f"`{key}`" if key != "—" else key
        description = description[:1].upper() + description[1:]
        rows.append(f"| {key} | {kind} | `{location}` | {description.replace('|', '&#124;')} |")
    return "\n".join(rows) + "\n"


def replace(item, text: str):
    """Replaces the marker in every chapter under `item` (any mdBook version's book JSON)."""
    if isinstance(item, dict):
        chapter = item.get("Chapter")
        if isinstance(chapter, dict) and isinstance(chapter.get("content"), str):
            chapter["content"] = chapter["content"].replace(MARKER, text)
        for value in item.values():
            replace(value, text)
    elif isinstance(item, list):
        for value in item:
            replace(value, text)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "supports":
        return 0
    context, book = json.load(sys.stdin)
    repo = Path(context["root"]).resolve().parent
    replace(book, catalog(repo))
    json.dump(book, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
