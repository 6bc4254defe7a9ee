"""The Content-Security-Policy of every HTML page this package writes (run reports, comparisons,
reproduction cards): nothing loads from anywhere, and only the page's own inline script and style
run, each allowed by its SHA-256."""

from __future__ import annotations

import base64
import hashlib
from typing import Iterable


def _hashes(parts: Iterable[str]) -> str:
    found = [f"'sha256-{base64.b64encode(hashlib.sha256(p.encode('utf-8')).digest()).decode()}'" for p in parts]
    return " ".join(found) or "'none'"


def policy(scripts: Iterable[str] = (), styles: Iterable[str] = ()) -> str:
    """The policy for a page whose inline ``<script>`` and ``<style>`` bodies are ``scripts`` and
    ``styles`` (exactly as written between the tags): no remote script, style, image, font, frame,
    connection or form target; no inline handler (``onerror=``) or ``style=`` attribute; data:
    images only."""
    return (f"default-src 'none'; script-src {_hashes(scripts)}; style-src {_hashes(styles)}; img-src data:; "
            "base-uri 'none'; form-action 'none'")
