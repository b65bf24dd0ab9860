"""Error messages a new user can act on: typos named with the field they meant, YAML syntax in
words, template variables and schema values at their own file and line, one error style."""

from __future__ import annotations

import pytest

from promoter.controlplane.fields import Fields
from promoter.controlplane.yamlfile import load_documents
from promoter.errors import ConfigError


def _read(text: str) -> Fields:
    return Fields(load_documents(text.encode(), "w.yaml")[0], "w.yaml", "spec")


def test_an_unknown_field_far_from_every_known_one_gets_no_guess() -> None:
    f = _read("name: a\nreplicas: 3\n")
    f.str("name")
    with pytest.raises(ConfigError) as err:
        f.done()
    assert str(err.value) == "w.yaml:2: unknown field 'spec.replicas'"


def test_a_misspelt_optional_field_names_the_known_one() -> None:
    f = _read("name: a\nnamespce: b\n")
    f.str("name")
    f.str("namespace")
    with pytest.raises(ConfigError) as err:
        f.done()
    assert str(err.value) == "w.yaml:2: unknown field 'spec.namespce', did you mean 'namespace'?"


def test_a_misspelt_required_field_is_named_before_it_is_called_missing() -> None:
    f = _read("name: a\nenviroment: qa\n")
    with pytest.raises(ConfigError) as err:
        f.str("environment", required=True)
    assert str(err.value) == "w.yaml:2: unknown field 'spec.enviroment', did you mean 'environment'?"


def test_a_missing_required_field_with_no_near_key_is_missing() -> None:
    f = _read("name: a\n")
    with pytest.raises(ConfigError) as err:
        f.str("environment", required=True)
    assert str(err.value) == "w.yaml:1: missing required field 'spec.environment'"


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        (
            "a:\n\tb: 1\n",
            "2:1",
            "a tab character: YAML indents with spaces only; replace the tab with spaces",
        ),
        ("a:\n  b: 1\n\tc: 2\n", "3:1", "a tab character"),
        ("a:\n  b: 1\n   c: 2\n", "3:5", "unexpected ':' here: this line is indented further"),
        ("a:\n    b: 1\n  c: 2\n", "3:3", "wrong indentation: this line does not line up"),
        ("a: 1\nb\nc: 2\n", "3:1", "a key without ':' before this line (opened at line 2)"),
        ("a: 'abc\nb: 2\n", "3:1", "a quoted string is never closed (opened at line 1)"),
        ("a: [1, 2\nb: 2\n", "2:2", "a '[' or '{' list or mapping is never closed (opened at line 1)"),
        ("a: @x\n", "1:4", "'@' cannot start a value; put the value in quotes"),
        ("a: {b: 1}}\n", "1:10", "'}' closes nothing: a bracket too many"),
    ],
)
def test_yaml_syntax_errors_say_what_to_fix_at_line_and_column(text: str, where: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_documents(text.encode(), "f.yaml")
    assert str(err.value).startswith(f"f.yaml:{where}: {says}")
    assert "cannot start any token" not in str(err.value)
