"""Reading a `TX8Config` override from a file (`--target-config FILE`, TOML or JSON).

The file holds a flat table of `TX8Config` fields and their values; every field it does
not name keeps its default. Unknown fields, values of the wrong type and values the
config rejects (a negative size, an alignment that is not a power of two) are a
`TargetConfigError` naming the file and the field, raised before anything is compiled.

    # bigger.toml
    spm_bytes_per_tile = 8388608
    clock_hz = 1_500_000_000

The compiled module records the fields that differ from the default in its `tx8c.target`
attribute (JSON), which is where group-cost reads them.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from tx8c.errors import TargetConfigError
from tx8c.target.config import DEFAULT_CONFIG, TX8Config

TARGET_ATTR = "tx8c.target"


def read_target_config(path: str | Path) -> TX8Config:
    """The TX8Config of `path` (TOML, or JSON for a `.json` file)."""
    path = Path(path)
    table = _read_table(path)
    types = {f.name: f.type for f in fields(TX8Config)}
    for name, value in table.items():
        if name not in types:
            raise TargetConfigError(_unknown_field(path, name, types))
        _check_type(path, name, value, types[name])
    try:
        return replace(DEFAULT_CONFIG, **{k: _plain(v) for k, v in table.items()})
    except ValueError as e:
        raise TargetConfigError(f"target config '{path}': {e}; fix that field.") from None


def overrides(config: TX8Config) -> dict[str, Any]:
    """The fields of `config` that differ from the default (what `tx8c.target` holds)."""
    base = DEFAULT_CONFIG.as_dict()
    return {k: v for k, v in config.as_dict().items() if v != base[k]}


def target_attr_json(config: TX8Config) -> str:
    return json.dumps({k: list(v) if isinstance(v, tuple) else v
                       for k, v in overrides(config).items()}, sort_keys=True)


def _read_table(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise TargetConfigError(
            f"target config '{path}' does not exist or is not a file; give a TOML or "
            "JSON file of TX8Config fields."
        )
    text = path.read_bytes().decode("utf-8", errors="replace")
    try:
        table = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise TargetConfigError(
            f"target config '{path}' is not valid {kind} ({e}); write one "
            "`field = value` per line (TOML) or a JSON object."
        ) from None
    if not isinstance(table, dict):
        raise TargetConfigError(
            f"target config '{path}' must hold a table of TX8Config fields, "
            f"got a JSON {type(table).__name__}."
        )
    return table


def _unknown_field(path: Path, name: str, types: dict[str, Any]) -> str:
    close = difflib.get_close_matches(name, types, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"target config '{path}': unknown field '{name}'{hint}; the fields are "
            f"{', '.join(types)}.")


def _check_type(path: Path, name: str, value: Any, annotation: Any) -> None:
    wants_sequence = "tuple" in str(annotation)
    if "bool" in str(annotation):
        ok = isinstance(value, bool)
        expected = "true or false"
    elif wants_sequence:
        ok = isinstance(value, list) and all(_is_int(v) for v in value)
        expected = "a list of integers"
    else:
        ok = _is_int(value)
        expected = "an integer"
    if not ok:
        raise TargetConfigError(
            f"target config '{path}': field '{name}' must be {expected}, got "
            f"{json.dumps(value)} ({type(value).__name__})."
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
