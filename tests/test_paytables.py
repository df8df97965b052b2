"""Configuration: defaults, licensee overrides, per-table overrides, errors, money rounding."""

import numpy as np
import pytest

from auditkit.money import money_differs, money_round
from auditkit.paytables import ConfigError, load_config


def test_defaults_are_the_catalogs():
    c = load_config()
    assert c.get("baccarat", "tie") == 8.0 and c.get("baccarat", "banker_commission") == 0.05
    assert c.get("mini_baccarat", "decks") == 8 and c.get("blackjack", "blackjack") == 1.5
    assert c.get("three_card_poker", "pair_plus")["flush"] == 3.0


def test_licensee_and_table_overrides(tmp_path):
    p = tmp_path / "casino.toml"
    p.write_text('[baccarat]\ntie = 9.0\n[tables."EZ-*".baccarat]\nbanker_commission = 0.0\n'
                 '[tables."EZ-7".baccarat]\ntie = 8.0\n')
    c = load_config(p)
    assert c.param("baccarat", "tie", ["BAC-1", "EZ-7", "EZ-1"]).tolist() == [9.0, 8.0, 9.0]
    assert c.param("baccarat", "banker_commission", ["BAC-1", "EZ-1"]).tolist() == [0.05, 0.0]
    assert c.digest() != load_config().digest()


@pytest.mark.parametrize("text, message", [
    ("[baccarat]\ntye = 9\n", "unknown setting baccarat.tye"),
    ("[roulette]\nx = 1\n", "unknown section [roulette]"),
    ("[tables.T1.roulette]\nx = 1\n", "unknown game section"),
    ("[money]\nrounding = 'banker'\n", "money.rounding"),
    ("[baccarat\n", "not valid TOML"),
])
def test_bad_configuration_says_why(tmp_path, text, message):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(p)


def test_money_rounding_and_tolerance():
    assert money_round(np.array([35.625, 1.875, -1.875]), 0.01).tolist() == [35.63, 1.88, -1.88]
    assert money_round(np.array([35.625]), 0.25, "down").tolist() == [35.5]
    assert money_differs(np.array([35.62, 35.63, 35.61, 99.99, 100.0]),
                         np.array([35.625] * 3 + [100.0, 100.0])).tolist() == [False, False, True, True, False]


def test_the_schema_covers_exactly_the_defaults_and_the_defaults_pass_it():
    from auditkit.paytables import _defaults, check_settings, schema

    defaults, sch = _defaults(), schema()
    assert set(sch) == set(defaults)
    for section, keys in sch.items():
        assert set(keys) == set(defaults[section]), section
        for key, spec in keys.items():
            assert spec["type"] and spec["meaning"], (section, key)
    check_settings(defaults, "defaults.toml")
