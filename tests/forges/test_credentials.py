"""Whether the environment holds GitHub credentials (promoter/forges/credentials.py)."""

from __future__ import annotations

import pytest

from promoter.forges.credentials import github_credentials


@pytest.mark.parametrize(
    ("environ", "found"),
    [
        ({}, False),
        ({"GH_TOKEN": "  "}, False),
        ({"GITHUB_TOKEN": "ghs_x"}, True),
        ({"PROMOTER_GITHUB_APP_ID": "1"}, False),  # an App needs its key too
        ({"PROMOTER_GITHUB_APP_ID": "1", "PROMOTER_GITHUB_APP_PRIVATE_KEY": "k"}, True),
    ],
)
def test_a_token_or_a_whole_app(environ: dict[str, str], found: bool) -> None:
    assert github_credentials(environ) is found
