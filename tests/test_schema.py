"""OpSchema, AmpPolicy and the registry."""
import dataclasses

import pytest

import pylucid as pl
from pylucid import ops
from pylucid.schema import register

EXPECTED = {
    "sqrt": ("sqrt", 1, pl.AmpPolicy.Promote, True),
    "erfinv": ("erfinv", 1, pl.AmpPolicy.Promote, True),
    "cube_root": ("cube_root", 1, pl.AmpPolicy.ForceFP32, True),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_registered_values(name):
    s = ops.schema(name)
    assert isinstance(s, pl.OpSchema)
    assert (s.name, s.version, s.amp_policy, s.deterministic) == EXPECTED[name]


def test_registry_is_a_read_only_map_of_the_three_ops():
    reg = ops.registry()
    assert {k: (v.name, v.version, v.amp_policy, v.deterministic) for k, v in reg.items()} \
        == EXPECTED
    with pytest.raises(TypeError):
        reg["sqrt"] = None


def test_unknown_name_raises_key_error():
    with pytest.raises(KeyError, match="nope"):
        ops.schema("nope")


def test_schema_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ops.schema("sqrt").version = 2


def test_nodes_bind_their_schema():
    assert ops.SqrtBackward.schema_v1 is ops.schema("sqrt")
    assert ops.CubeRootBackward.schema_v1 is ops.schema("cube_root")
    assert ops.ErfinvBackward.schema_v1 is ops.schema("erfinv")


def test_a_name_registers_once():
    with pytest.raises(ValueError, match="already registered"):
        register(pl.OpSchema("sqrt", 2, pl.AmpPolicy.KeepInput))
    assert register(ops.schema("sqrt")) is ops.schema("sqrt")  # re-registering the same: fine


def test_amp_policy_members():
    assert [p.name for p in pl.AmpPolicy] == ["Promote", "KeepInput", "ForceFP32"]
