"""Python values to TOML and override strings."""

import math
from pathlib import Path

import pytest

from fabricsim._scenario import dict_to_toml, override_list, source, toml_value


def test_toml_values():
    assert toml_value(True) == "true" and toml_value(3) == "3" and toml_value(0.5) == "0.5"
    assert toml_value("a\"b\\c\n") == '"a\\"b\\\\c\\u000A"'
    assert toml_value([1, "x"]) == '[1, "x"]'
    assert toml_value({"a b": 1, "c": {}}) == '{ "a b" = 1, c = {} }'
    assert toml_value(math.inf) == "inf" and toml_value(float("nan")) == "nan"
    with pytest.raises(TypeError, match="`x.y`"):
        toml_value({"y": object()}, "x")


def test_dict_to_toml_and_source():
    text = dict_to_toml({"name": "n", "topology": {"k": 4}})
    assert text == 'name = "n"\ntopology = { k = 4 }\n'
    assert source({"seed": 1}) == ("seed = 1\n", False)
    assert source("scenarios/example.toml") == ("scenarios/example.toml", True)
    assert source(Path("x.toml")) == ("x.toml", True)
    assert source("seed = 1") == ("seed = 1", False)


def test_override_list():
    assert override_list({"a.b": "2", "c": 2}, 7) == ['a.b="2"', "c=2", "seed=7"]
    assert override_list("a=1", None) == ["a=1"]
    assert override_list(None, None) == []
    with pytest.raises(TypeError):
        override_list(None, "3")  # type: ignore[arg-type]
