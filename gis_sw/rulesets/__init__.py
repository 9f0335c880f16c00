"""The rulesets shipped with gis_sw, one TOML file per municipality."""
