"""docs/explorer.md's fence, run: the Content-Security-Policy it shows is the one every response under /explore carries.

(What the page shows and does is tests/test_explorer*.py's, in Chromium; the page has no other fence.)
"""

from __future__ import annotations

import httpx

from docs_examples import example

PAGE = "docs/explorer.md"


def test_the_policy_shown_is_the_one_served(api: httpx.Client) -> None:
    shown = example(
        PAGE, "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:;"
    )
    name, _, policy = " ".join(shown.split()).partition(": ")

    for path in ("/explore", "/explore/explorer.js", "/explore/explorer.css"):
        answer = api.get(path)
        assert answer.status_code == 200, (path, answer.text[:200])
        assert answer.headers[name] == policy, path
