"""A RunConfig from a TOML run file (README's example) and command-line options (or their BENCH_* variables), which win over the file."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from bench_kernel.errors import ConfigError, TaskFileError
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.modelhub.hub import ROLES, model_configs
from bench_kernel.modelhub.prices import Price
from bench_kernel.run.config import MAX_CONCURRENCY, MODEL_OPTIONS, RUN_OPTIONS, RunConfig, RunOption, parse_key_values
from bench_kernel.schema.messages import Mode
from bench_kernel.serialization import check_plain_data, read_text, structure, unstructure

MAX_RETRIES = 100
SQLITE_INTEGERS = range(-(2**63), 2**63)
"""What SQLite's INTEGER holds: a seed outside it could not be stored with its run."""


def read_run_file(path: Path) -> dict[str, Any]:
    """Parse a TOML run file, naming the file in any error."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply") from exc
    problems = check_plain_data(data)
    if problems:
        raise TaskFileError(str(path), problems)
    unknown = sorted(set(data) - {"run", "models", "prices"})
    if unknown:
        raise ConfigError(f"{path}: unknown section [{unknown[0]}] (sections: run, models, prices) @ $.{unknown[0]}")
    for section in ("run", "models", "prices"):
        if not isinstance(data.get(section, {}), dict):
            raise ConfigError(f"{path}: [{section}] must be a table @ $.{section}")
    return data


def build_run_config(file_data: Mapping[str, Any], overrides: Mapping[str, Any], *, source: str = "run file") -> RunConfig:
    """Merge the run file's values with command-line overrides into a RunConfig, validated as a whole."""
    run = {**file_data.get("run", {}), **{k: v for k, v in overrides.items() if k not in ("models", "prices")}}
    if run.get("workers") == "auto":
        run["workers"] = None
    models = _merge_models(file_data.get("models", {}), overrides.get("models", {}), source)
    prices = {**_prices(file_data.get("prices", {}), source), **overrides.get("prices", {})}
    fields = {f.name for f in attrs.fields(RunConfig)}
    # Other keys are plugin settings: a run refuses those no loaded task transform owns (`refuse_unowned_settings`).
    run["plugin_settings"] = {key: run.pop(key) for key in sorted(set(run) - fields)}
    config = structure({**run, "models": {}, "prices": {}}, RunConfig, source=source, root="$.run")
    config = attrs.evolve(config, models=model_configs(models, source=source), prices=prices)
    problems = run_config_problems(config)
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return config


def run_config_problems(config: RunConfig) -> list[str]:
    """What is out of range in a configuration, each with its path: the same rules for options and run files."""
    run = "$.run"
    problems = [problem for opt in RUN_OPTIONS for problem in _bound_problems(opt, config)]
    if config.judge_panel is not None and config.judge_panel > 0 and config.judge_panel % 2 == 0:
        problems.append(f"judge_panel must be an odd number of judges (a majority decides), not {config.judge_panel} @ {run}.judge_panel")
    if not config.executor:
        problems.append(f"executor must name a registered executor (e.g. local), not {config.executor!r} @ {run}.executor")
    if config.seed not in SQLITE_INTEGERS:
        problems.append(f"seed must be a 64-bit signed integer (below 2**63 in size), not {config.seed} @ {run}.seed")
    for name in ("conversation_timeout_s", "run_timeout_s"):
        problems += _positive_number(getattr(config, name), f"{run}.{name}")
    if config.max_cost is not None and not (math.isfinite(config.max_cost) and config.max_cost >= 0):
        problems.append(f"max_cost must be a finite number of USD, 0 or more, not {config.max_cost} @ {run}.max_cost")
    for model, price in config.prices.items():
        if not all(math.isfinite(p) and p >= 0 for p in attrs.astuple(price)):
            problems.append(f"prices must be finite and not negative @ $.prices.{model}")
    for role, model_config in config.models.items():
        problems += model_config_problems(model_config, f"$.models.{role}")
    if config.tasks_file is not None and not Path(config.tasks_file).is_file():
        state = "is a directory, not a file" if Path(config.tasks_file).is_dir() else "no such file"
        problems.append(f"tasks_file {config.tasks_file!r}: {state} @ {run}.tasks_file")
    if config.data_dir is not None and not Path(config.data_dir).is_dir():
        problems.append(f"data_dir {config.data_dir!r}: no such directory @ {run}.data_dir")
    data = unstructure(config)  # undecodable bytes in an option arrive as lone surrogates, which SQLite refuses
    data.update(data.pop("plugin_settings"))
    for section in ("models", "prices"):
        problems += check_plain_data(data.pop(section), f"$.{section}", numbers=False)
    problems += check_plain_data(data, run, numbers=False)
    return list(dict.fromkeys(problems))


def _bound_problems(opt: RunOption, config: RunConfig) -> list[str]:
    """An integer setting's declared bounds (`RunOption.at_least`, `at_most`) it is outside of."""
    if opt.part:
        return []
    value = config.plugin_settings.get(opt.key) if opt.plugin else getattr(config, opt.key)
    if not isinstance(value, int) or isinstance(value, bool):
        return []
    if opt.at_least is not None and value < opt.at_least:
        return [f"{opt.key} must be at least {opt.at_least}, not {value} @ $.run.{opt.key}"]
    if opt.at_most is not None and value > opt.at_most:
        return [f"{opt.key} must be at most {opt.at_most}, not {value} @ $.run.{opt.key}"]
    return []


def model_config_problems(config: ModelConfig, where: str) -> list[str]:
    """What is out of range in one role's model settings."""
    problems = _positive_number(config.timeout_s, f"{where}.timeout_s")
    if config.max_concurrency is not None and not 1 <= config.max_concurrency <= MAX_CONCURRENCY:
        problems.append(f"max_concurrency must be between 1 and {MAX_CONCURRENCY}, not {config.max_concurrency} @ {where}.max_concurrency")
    if not 0 <= config.max_retries <= MAX_RETRIES:
        problems.append(f"max_retries must be between 0 and {MAX_RETRIES}, not {config.max_retries} @ {where}.max_retries")
    if config.base_url is not None:
        problems += _url_problems(config.base_url, f"{where}.base_url")
    return problems


def _positive_number(value: float | None, where: str) -> list[str]:
    if value is None or (math.isfinite(value) and value > 0):
        return []
    return [f"{where.rsplit('.', 1)[-1]} must be a positive, finite number of seconds, not {value} @ {where}"]


def _url_problems(url: str, where: str) -> list[str]:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError as exc:
        return [f"not a usable URL ({exc}): {url!r} @ {where}"]
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        # ws:// and wss:// are realtime (WebSocket) endpoints; a chat backend given one fails its check by name.
        return [f"expected an http(s):// or ws(s):// URL with a host, not {url!r} @ {where}"]
    return []


def _merge_models(from_file: Mapping[str, Any], from_cli: Mapping[str, Mapping[str, Any]], source: str) -> dict[str, dict[str, Any]]:
    for role, cfg in from_file.items():
        if not isinstance(cfg, dict):
            raise ConfigError(f"{source}: [models.{role}] must be a table @ $.models.{role}")
    merged: dict[str, dict[str, Any]] = {role: dict(cfg) for role, cfg in from_file.items()}
    for role, values in from_cli.items():
        merged.setdefault(role, {}).update(values)
    for role, cfg in merged.items():
        if "model" not in cfg:
            raise ConfigError(f"{source}: the {role} model needs a name (--{role}-model or model = ... in [models.{role}]) @ $.models.{role}")
    return merged


def _prices(data: Mapping[str, Any], source: str) -> dict[str, Price]:
    prices = {}
    for model, value in data.items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
            raise ConfigError(f"{source}: [prices] entries are MODEL = [prompt_usd_per_m, completion_usd_per_m] @ $.prices.{model}")
        prices[model] = Price(float(value[0]), float(value[1]))
    return prices


def option_overrides(given: Mapping[str, Any]) -> dict[str, Any]:
    """The run settings that command-line options set (`given`: their values by parameter name, those given only)."""
    out: dict[str, Any] = {}
    for opt in sorted(RUN_OPTIONS, key=lambda o: bool(o.part)):  # parts last: --keep-audio wins over --channel-option
        if opt.dest not in given:
            continue
        value = given[opt.dest]
        if opt.negated:
            value = not value
        elif opt.multiple and opt.parse is None:
            value = list(value) or None
        out[opt.key] = {**(out.get(opt.key) or {}), opt.part: value} if opt.part else value
    out["models"] = model_overrides(given, out.pop("models", None) or {})
    keep = given.get("keep_audio")
    duplex = out.pop("duplex", None)
    if given.get("mode") == Mode.FULL_DUPLEX.value:
        out["duplex"] = {**(duplex or {}), **({"keep_audio": keep} if keep else {})}
    elif duplex:
        flag = next(opt.flags[0] for opt in RUN_OPTIONS if opt.part in duplex)
        raise ConfigError(f"{flag} applies to --mode full-duplex only (bench-duplex's option)")
    return out


def model_overrides(values: Mapping[str, Any], role_options: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Collect --ROLE-KEY options (already filtered to the ones given) and --model-option ROLE.KEY=VALUE into {role: {key: value}}."""
    found: dict[str, dict[str, Any]] = {}
    for role in ROLES:
        for key in MODEL_OPTIONS:
            name = f"{role}_{key}"
            if values.get(name) is not None:
                found.setdefault(role, {})[key] = values[name]
    for dotted, value in (role_options or {}).items():
        role, sep, key = dotted.partition(".")
        if not sep or not role or not key:
            raise ConfigError(f"--model-option expects ROLE.KEY=VALUE, got {dotted!r}")
        found.setdefault(role, {})[key] = value
    return found


def model_option_configs(options: Mapping[str, Any] | Iterable[str], *, source: str = "--model-option") -> dict[str, ModelConfig]:
    """`--model-option` values (`ROLE.KEY=VALUE` texts, or a parsed {ROLE.KEY: value}) as model configurations by role."""
    pairs = options if isinstance(options, Mapping) else parse_key_values(options, "ROLE.KEY=VALUE")
    return model_configs(model_overrides({}, pairs), source=source)
