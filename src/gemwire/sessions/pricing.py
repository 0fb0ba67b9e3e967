"""Model prices, kept as data: what a number of tokens costs, as an estimate.

gemwire ships a dated table (``prices.json`` beside this module: USD per million tokens,
with the page it was read from; a model read from another page, Anthropic's, OpenAI's or
Qwen's, names its own page and date); a user's own table (JSON or TOML, same shape, only the
models it names) is laid over it. A model under ``unpriced`` is known and has no price: the
agents' current default models (claude-agent-acp 0.101's ``claude-opus-5-5``, codex-acp 2.6's
``gpt-5.5``) until a provider's own page is read, with its date; never guessed, and never
priced as a shorter name it starts with. Every cost gemwire shows is an **estimate**: the prices
change, free tiers and discounts are unknown to it, and audio or image input costs more.

    >>> table = load_prices()
    >>> round(table.cost("gemini-2.5-flash", input=1_000_000, output=0), 2)
    0.3
    >>> table.cost("some-model-nobody-priced", input=10, output=10) is None
    True
    >>> table.price("gpt-5.5") is None and "gpt-5.5" in table.unpriced
    True
    >>> price = table.price("claude-sonnet-4-5-20250929")
    >>> price.input, price.output, price.as_of
    (3.0, 15.0, '2025-11-24')

How tokens are billed (as Gemini's ``usageMetadata`` counts them): ``input`` is the prompt,
cached tokens included; cached tokens are billed at the cached rate, the rest of the prompt
and the tool-use prompt at the input rate, the answer and the thoughts at the output rate.
A model with a long-context tier bills the whole request at the higher rates when its
prompt is longer than ``long_context_threshold``.
"""

from __future__ import annotations

import os
import tomllib
from importlib import resources

import msgspec

from gemwire.errors import InvalidOptions
from gemwire.events import ModelUsage, TokenUsage

__all__ = ("ModelPrice", "PriceTable", "load_prices", "model_usage_cost", "usage_cost")

_MILLION = 1_000_000


class ModelPrice(msgspec.Struct, frozen=True, kw_only=True):
    """One model's rates in USD per million tokens, and its context window if known."""

    input: float
    output: float
    cached: float | None = None
    """``None``: cached tokens cost the input rate."""
    long_context_threshold: int | None = None
    input_long: float | None = None
    output_long: float | None = None
    cached_long: float | None = None
    context_window: int | None = None
    as_of: str | None = None
    """When this model's rates were read, where it differs from the table's."""
    source: str | None = None
    """The page this model's rates were read from, where it differs from the table's."""


class PriceTable(msgspec.Struct, frozen=True, kw_only=True):
    """Prices per model; ``as_of`` and ``source`` say where they come from."""

    as_of: str
    source: str
    models: dict[str, ModelPrice]
    unpriced: dict[str, str] = {}
    """Models known to have no price here, and why (no provider page read, by date)."""

    def price(self, model: str) -> ModelPrice | None:
        """The model's price: its own entry, else the longest entry its name starts with
        (``gemini-2.5-flash-preview-09-2025`` is priced as ``gemini-2.5-flash``); ``None``
        for a model under ``unpriced`` (or one whose name starts with it)."""
        if any(model == name or model.startswith(name + "-") for name in self.unpriced):
            return None
        found = self.models.get(model)
        if found is not None:
            return found
        prefixes = [name for name in self.models if model.startswith(name + "-")]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost(
        self,
        model: str,
        *,
        input: int,
        output: int,
        cached: int = 0,
        thoughts: int = 0,
        tool: int = 0,
    ) -> float | None:
        """The estimated USD cost of one request's tokens; ``None`` if the model has no price."""
        price = self.price(model)
        if price is None:
            return None
        rates = (price.input, price.output, price.cached)
        threshold = price.long_context_threshold
        if threshold is not None and input > threshold:
            rates = (
                price.input_long if price.input_long is not None else price.input,
                price.output_long if price.output_long is not None else price.output,
                price.cached_long if price.cached_long is not None else price.cached,
            )
        in_rate, out_rate, cached_rate = rates
        cached_rate = in_rate if cached_rate is None else cached_rate
        fresh = max(input - cached, 0) + tool
        return (fresh * in_rate + cached * cached_rate + (output + thoughts) * out_rate) / _MILLION


class _Overrides(msgspec.Struct, frozen=True, kw_only=True):
    as_of: str | None = None
    source: str | None = None
    models: dict[str, ModelPrice] = {}


def _shipped() -> PriceTable:
    data = resources.files(__package__).joinpath("prices.json").read_bytes()
    return msgspec.json.decode(data, type=PriceTable)


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """gemwire's price table, with the models of the file at ``path`` (JSON or TOML) laid
    over it. Raises `InvalidOptions` if that file cannot be read or has the wrong shape."""
    table = _shipped()
    if path is None:
        return table
    try:
        with open(path, "rb") as file:
            data = file.read()
        raw = tomllib.loads(data.decode()) if os.fspath(path).endswith(".toml") else None
        overrides = (
            msgspec.convert(raw, _Overrides)
            if raw is not None
            else msgspec.json.decode(data, type=_Overrides)
        )
    except OSError as exc:
        raise InvalidOptions(f"cannot read the price table {path}: {exc.strerror}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, msgspec.DecodeError) as exc:
        raise InvalidOptions(f"the price table {path} is not valid: {exc}") from exc
    return PriceTable(
        as_of=overrides.as_of or table.as_of,
        source=overrides.source or f"{path} over {table.source}",
        models={**table.models, **overrides.models},
        unpriced={k: v for k, v in table.unpriced.items() if k not in overrides.models},
    )


def model_usage_cost(table: PriceTable, model: str, counts: ModelUsage) -> float | None:
    """The estimated cost of one model's part of an event's usage (``None``: no price).

    What the events do not split out (thoughts and the tool-use prompt: total minus input
    minus output) is priced at the output rate."""
    return table.cost(
        model,
        input=counts.input_tokens,
        output=counts.output_tokens,
        cached=counts.cached_tokens or 0,
        thoughts=max(counts.total_tokens - counts.input_tokens - counts.output_tokens, 0),
    )


def usage_cost(table: PriceTable, usage: TokenUsage) -> float | None:
    """The estimated cost of an event's usage, model by model; ``None`` unless every model
    has a price (and at least one is named)."""
    costs = [model_usage_cost(table, model, c) for model, c in usage.by_model.items()]
    if not costs or None in costs:
        return None
    return sum(c for c in costs if c is not None)
