"""The one way to plug things in: a ``Registry`` per kind of plug-in (importers, verifiers, claim
checks, answer probes). A plug-in is a name, a factory and one line of help; its options are the
factory's keyword-only arguments, read from its signature, so nothing lists them twice:

    VERIFIERS = Registry("verifier")

    def make_prm(*, model: str, threshold: float = 0.5) -> Verifier:
        "A process reward model. model: a local folder or hub id; threshold: below it a step is wrong."

    VERIFIERS.register("prm", make_prm, "a process reward model scores each step")

- ``register`` refuses a name already taken (and a factory whose options have no annotation), in
  one line; ``unregister`` removes one.
- ``options(name)`` gives each option's name, type, default (``REQUIRED`` when it has none) and
  its help, taken from the factory docstring's ``name: text`` lines.
- ``make(name, values)`` builds one from strings (the CLI's ``-V key=value``) or typed values;
  an unknown name, an unknown option, a missing one or a value of the wrong type is a one-line
  ``UsageError`` that names what is accepted.
- ``describe()`` is the generated help: every plug-in with its options, the text ``--list`` prints.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from o3viz.errors import UsageError

MAX_OPTION_CHARS = 10_000  # one option's value, as given on a command line or in a form
_NAME = re.compile(r"[a-z][a-z0-9_+.-]{0,63}\Z")  # "claims+prm" combines two verifiers


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
_SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Option:
    """One keyword-only argument of a plug-in's factory."""

    name: str
    type: type  # bool, int, float or str
    default: Any  # REQUIRED when the factory has none
    optional: bool  # ``None`` is accepted (the annotation is ``X | None``)
    help: str = ""
    choices: tuple[str, ...] = ()  # a ``Literal["a", "b"]`` annotation: the values accepted

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def usage(self) -> str:
        """``name=TYPE`` with its default, e.g. ``threshold=float (default 0.5)``."""
        tail = " (required)" if self.required else f" (default {self.default!r})"
        return f"{self.name}={'|'.join(self.choices) or self.type.__name__}{tail}"

    def parse(self, value: Any, where: str) -> Any:
        """``value`` as this option's type; a string is read as the CLI gives it."""
        value = self._typed(value, where)
        if self.choices and value is not None and value not in self.choices:
            raise UsageError(
                f"{where}: option {self.name!r} must be one of {', '.join(self.choices)}, not {value[:40]!r}"
            )
        return value

    def _typed(self, value: Any, where: str) -> Any:
        if value is None:
            if self.optional:
                return None
            raise UsageError(f"{where}: option {self.name!r} can't be empty")
        if isinstance(value, str):
            if len(value) > MAX_OPTION_CHARS:
                raise UsageError(
                    f"{where}: option {self.name!r} is longer than {MAX_OPTION_CHARS} characters"
                )
            return self._from_text(value, where)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not self.type:
            raise UsageError(
                f"{where}: option {self.name!r} must be {self.type.__name__}, not {type(value).__name__}"
            )
        if self.type is float and not math.isfinite(value):
            raise UsageError(f"{where}: option {self.name!r} must be a finite number, not {value}")
        return value

    def _from_text(self, text: str, where: str) -> Any:
        if self.optional and text.strip().lower() in ("none", "null"):
            return None
        if self.type is str:
            return text
        if self.type is bool:
            low = text.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise UsageError(f"{where}: option {self.name!r} must be true or false, not {text[:40]!r}")
        try:
            value = self.type(text.strip())
        except ValueError:
            raise UsageError(
                f"{where}: option {self.name!r} must be {self.type.__name__}, not {text[:40]!r}"
            ) from None
        if self.type is float and not math.isfinite(value):
            raise UsageError(f"{where}: option {self.name!r} must be a finite number, not {text[:40]!r}")
        return value


@dataclass(frozen=True)
class Plugin:
    """One registered plug-in: its name, factory, one line of help and the options read from the
    factory's signature."""

    kind: str
    name: str
    factory: Callable[..., Any]
    help: str
    options: tuple[Option, ...]
    passes_on: bool = False  # ``**options``: options not its own go on to the plug-in it runs

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def describe(self, flag: str = "-V") -> str:
        """The plug-in's help, generated: its line, then one line per option."""
        lines = [f"{self.name}: {self.help}"]
        for o in self.options:
            lines.append(f"    {flag} {o.usage()}" + (f": {o.help}" if o.help else ""))
        if self.passes_on:
            lines.append(f"    {flag} …: any option of the {self.kind} it runs")
        return "\n".join(lines)


def _base_type(annotation: Any, where: str) -> tuple[type, bool, tuple[str, ...]]:
    """(the scalar type, whether None is accepted, the choices of a ``Literal``) of an option's
    annotation."""
    if annotation in _SCALARS:
        return annotation, False, ()
    origin = typing.get_origin(annotation)
    if origin is typing.Literal and all(isinstance(a, str) for a in typing.get_args(annotation)):
        return str, False, typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            typ, _, choices = _base_type(args[0], where)
            return typ, True, choices
    raise UsageError(
        f"{where}: an option must be annotated bool, int, float, str or a Literal of strings (or X | None), "
        f"not {annotation!r}"
    )


def _option_help(doc: str) -> dict[str, str]:
    """``name: text`` lines of a docstring (an option's help), each joined with the lines under it
    that are indented deeper."""
    out: dict[str, str] = {}
    current, indent = None, 0
    for line in doc.splitlines():
        m = re.match(r"(\s*)-?\s*([a-z_][a-z0-9_]*):\s+(.*)", line)
        deeper = line.strip() and len(line) - len(line.lstrip()) > indent
        if current and deeper:
            out[current] += " " + line.strip()
        elif m:
            current, indent = m.group(2), len(m.group(1))
            out[current] = m.group(3).strip()
        else:
            current = None
    return out


def options_of(factory: Callable[..., Any], where: str) -> tuple[Option, ...]:
    """The options of ``factory``: its keyword-only arguments (positional ones are the host's, e.g.
    the input an importer reads), with their help from its docstring. A kw-only dataclass is a
    factory too: its fields are its options. Only the options' annotations are evaluated, so a
    factory may name its return type under ``TYPE_CHECKING`` (a lazily imported implementation)."""
    hints = _option_hints(factory)
    helps = _option_help(inspect.getdoc(factory) or "")
    out = []
    for p in inspect.signature(factory).parameters.values():
        if p.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        if p.name not in hints:
            raise UsageError(f"{where}: option {p.name!r} has no type annotation")
        typ, optional, choices = _base_type(hints[p.name], f"{where}, option {p.name!r}")
        default = REQUIRED if p.default is inspect.Parameter.empty else p.default
        out.append(Option(p.name, typ, default, optional, helps.get(p.name, ""), choices))
    return tuple(out)


def _option_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    """The evaluated annotations of ``factory``'s keyword-only arguments (``from __future__ import
    annotations`` makes them strings)."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    namespace = getattr(inspect.unwrap(target), "__globals__", {})
    out = {}
    for p in inspect.signature(factory).parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.annotation is not inspect.Parameter.empty:
            ann = p.annotation
            out[p.name] = eval(ann, dict(namespace), {}) if isinstance(ann, str) else ann  # noqa: S307
    return out


def _passes_on(factory: Callable[..., Any]) -> bool:
    """Whether ``factory`` takes ``**options`` it hands on to another plug-in (``claims+prm``)."""
    params = inspect.signature(factory).parameters.values()
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class Registry:
    """The plug-ins of one kind, in registration order (see the module docstring)."""

    def __init__(self, kind: str, flag: str = "-V") -> None:
        self.kind = kind
        self.flag = flag  # the CLI flag that takes this kind's options as key=value
        self._plugins: dict[str, Plugin] = {}

    def register(self, name: str, factory: Callable[..., Any], help: str) -> Plugin:
        """Add ``name``; a name already taken, a badly formed one or an unannotated option is refused."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise UsageError(f"{self.kind} name {name!r}: use 1-64 lower-case letters, digits, '-' and '_'")
        if name in self._plugins:
            raise UsageError(f"{self.kind} {name!r} is already registered")
        if not help or "\n" in help:
            raise UsageError(f"{self.kind} {name!r}: give one line of help")
        where = f"{self.kind} {name!r}"
        plugin = Plugin(self.kind, name, factory, help, options_of(factory, where), _passes_on(factory))
        self._plugins[name] = plugin
        return plugin

    def unregister(self, name: str) -> None:
        """Remove a plug-in (a no-op for a name not registered)."""
        self._plugins.pop(name, None)

    def names(self) -> tuple[str, ...]:
        return tuple(self._plugins)

    def __iter__(self):
        return iter(list(self._plugins.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._plugins

    def get(self, name: str) -> Plugin:
        plugin = self._plugins.get(name)
        if plugin is None:
            raise UsageError(
                f"no {self.kind} named {str(name)[:64]!r}; the {self.kind}s are {', '.join(self._plugins)}"
            )
        return plugin

    def values(self, name: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """``given`` checked against the options of ``name`` and typed, with the defaults filled in."""
        plugin = self.get(name)
        given = dict(given or {})
        where = f"{self.kind} {name!r}"
        unknown = [k for k in given if plugin.option(k) is None]
        if unknown and not plugin.passes_on:
            accepted = ", ".join(o.name for o in plugin.options) or "none"
            raise UsageError(f"{where} has no option {str(unknown[0])[:64]!r}; its options are {accepted}")
        out = {}
        for o in plugin.options:
            if o.name in given:
                out[o.name] = o.parse(given[o.name], where)
            elif o.required:
                raise UsageError(f"{where} needs {self.flag} {o.name}=…" + (f" ({o.help})" if o.help else ""))
            else:
                out[o.name] = o.default
        return {**{k: given[k] for k in unknown}, **out}  # the unknown ones only when passed on

    def make(self, name: str, given: dict[str, Any] | None = None, **host: Any) -> Any:
        """Build ``name`` from ``given`` options (strings or typed values); ``host`` holds the
        arguments the host supplies positionally-by-name (not options, e.g. a loaded model)."""
        return self.get(name).factory(**host, **self.values(name, given))

    def describe(self) -> str:
        """Every plug-in with its options: what ``--list`` prints and ``--help`` ends with."""
        return "\n".join(p.describe(self.flag) for p in self)


def parse_pairs(pairs: Iterable[str] | None, flag: str = "-V") -> dict[str, str]:
    """``["key=value", …]`` (a repeated CLI flag) as a dict; a pair without ``=`` or a key given
    twice is a one-line UsageError."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"{flag} takes key=value, not {pair[:64]!r}")
        if key in out:
            raise UsageError(f"{flag} {key} is given twice")
        out[key] = value
    return out
