"""Which PyYAML this run uses, so the bad-input corpus's runs on the oldest and the newest
version allowed (`make unit-pyyaml-oldest`, and the locked one) can be told apart; and the
nesting cap that PyYAML 6.0.4's libyaml brought reads as promoter's own error on every version."""

from __future__ import annotations

import os

import pytest
import yaml

from promoter.controlplane.yamlfile import check_depth, load_documents
from promoter.errors import ConfigError


def test_the_pyyaml_in_use_is_the_one_asked_for() -> None:
    wanted = os.environ.get("PYTHONPATH", "")
    assert yaml.__version__ >= "6.0.1"
    if wanted.endswith("pyyaml-oldest"):
        assert yaml.__version__ == "6.0.1", yaml.__file__


@pytest.mark.parametrize("text", ["[" * 1100 + "]" * 1100, "a: " + "[" * 1100, "k: {" * 1100])
def test_deep_flow_nesting_is_promoters_error_on_every_version(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_depth(text, "deep.yaml", 100)
    assert str(err.value) == "deep.yaml:1: nested more than 100 levels deep"
    with pytest.raises(ConfigError) as err:
        load_documents(text.encode(), "deep.yaml")
    assert str(err.value) == "deep.yaml:1: nested more than 100 levels deep"


def test_a_syntax_error_met_while_measuring_depth_is_named_in_promoters_words() -> None:
    text = "a:\n" + "".join(f"{' ' * i}k{i}:\n" for i in range(1, 120)) + "  - [b\n"
    with pytest.raises(ConfigError) as err:
        check_depth(text, "bad.yaml", 200)
    assert str(err.value).startswith("bad.yaml:")
    assert "Traceback" not in str(err.value) and "<unicode string>" not in str(err.value)
