"""Building a RunConfig from a TOML run file, environment variables and command-line options.

Precedence: options given on the command line (or by their BENCH_* variables) > the run file > defaults.
A run file looks like::

    [run]
    domain = "mock"
    agent = "llm-fc"
    trials = 4

    [models.agent]
    backend = "openai"
    model = "gpt-4.1-mini"
    api_key_env = "OPENAI_API_KEY"
    sampling = { temperature = 0.0 }

    [prices]
    "my-local-model" = [0.0, 0.0]
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.hub import ROLES, model_configs
from bench_kernel.modelhub.prices import Price, parse_price
from bench_kernel.run.runner import RunConfig
from bench_kernel.serialization import converter

# Model settings that have --ROLE-KEY options; backend `options` are set in a run file.
MODEL_KEYS = ("backend", "model", "base_url", "api_key_env", "sampling", "timeout_s", "max_concurrency", "max_retries")


def read_run_file(path: Path) -> dict[str, Any]:
    """Parse a TOML run file, naming the file in any error."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: file not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"run", "models", "prices"})
    if unknown:
        raise ConfigError(f"{path}: unknown section [{unknown[0]}] (sections: run, models, prices)")
    return data


def build_run_config(file_data: Mapping[str, Any], overrides: Mapping[str, Any], *, source: str = "run file") -> RunConfig:
    """Merge the run file's values with command-line overrides into a RunConfig."""
    run = {**file_data.get("run", {}), **{k: v for k, v in overrides.items() if k not in ("models", "prices")}}
    models = _merge_models(file_data.get("models", {}), overrides.get("models", {}))
    prices = {**_prices(file_data.get("prices", {}), source), **overrides.get("prices", {})}
    fields = {f.name for f in attrs.fields(RunConfig)}
    unknown = sorted(set(run) - fields)
    if unknown:
        raise ConfigError(f"{source}: unknown run setting {unknown[0]!r}")
    try:
        config = converter.structure({**run, "models": {}, "prices": {}}, RunConfig)
    except cattrs.BaseValidationError as exc:
        raise ConfigError(f"{source}: " + "; ".join(cattrs.transform_error(exc, path="$.run"))) from exc
    return attrs.evolve(config, models=model_configs(models), prices=prices)


def _merge_models(from_file: Mapping[str, Any], from_cli: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {role: dict(cfg) for role, cfg in from_file.items()}
    for role, values in from_cli.items():
        merged.setdefault(role, {}).update(values)
    for role, cfg in merged.items():
        if "model" not in cfg:
            raise ConfigError(f"the {role} model needs a name (--{role}-model or model = ... in [models.{role}])")
    return merged


def _prices(data: Mapping[str, Any], source: str) -> dict[str, Price]:
    try:
        return {model: Price(float(v[0]), float(v[1])) for model, v in data.items()}
    except (TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"{source}: [prices] entries are MODEL = [prompt_usd_per_m, completion_usd_per_m]") from exc


def model_overrides(values: Mapping[str, Any], role_options: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Collect --ROLE-KEY options (already filtered to the ones given) and --model-option ROLE.KEY=VALUE into {role: {key: value}}."""
    found: dict[str, dict[str, Any]] = {}
    for role in ROLES:
        for key in MODEL_KEYS:
            name = f"{role}_{key}"
            if values.get(name) is not None:
                found.setdefault(role, {})[key] = values[name]
    for dotted, value in (role_options or {}).items():
        role, sep, key = dotted.partition(".")
        if not sep or not role or not key:
            raise ConfigError(f"--model-option expects ROLE.KEY=VALUE, got {dotted!r}")
        found.setdefault(role, {})[key] = value
    return found


def price_overrides(texts: tuple[str, ...]) -> dict[str, Price]:
    """Parse repeated --price MODEL=IN,OUT options."""
    try:
        return dict(parse_price(t) for t in texts)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
