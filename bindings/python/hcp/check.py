"""hcp.check: the linter's rules on the configuration a job really built, before its first collective.

It reads what the job holds - a Megatron-LM `args` namespace, a Megatron-Core TransformerConfig or
ModelParallelConfig, a Megatron-Bridge ConfigContainer, a verl or NeMo-RL megatron config dict - by attribute or
key, without importing those packages, and lints it as JSON facts (the same as `hcp-lint --facts-json`). Names no
rule reads are ignored.
"""

import enum
import json
import sys

from .errors import InvalidConfigError
from .lint import lint_text

# Megatron-Bridge ConfigContainer's sections whose fields the rules read (src/megatron/bridge/training/config.py).
_SECTIONS = ("model", "dist", "dataset", "train", "ddp", "optimizer", "checkpoint", "logger", "tokenizer")
_SCALARS = (bool, int, float, str)


def _plain(value):
    """A JSON value for `value`, or None when it is not a plain setting (a module, a tensor, a function)."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return items if all(i is not None or v is None for i, v in zip(items, value)) else None
    return None


def _fields(obj):
    """The object's settings by name: a mapping's items, else its attributes (dataclass, namespace)."""
    if hasattr(obj, "items") and callable(obj.items):
        try:
            return dict(obj.items())
        except Exception:  # an OmegaConf node that cannot resolve an interpolation: read what can be read
            return {k: obj.get(k) for k in obj.keys()} if hasattr(obj, "keys") else {}
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    raise InvalidConfigError(f"hcp.check: cannot read settings from a {type(obj).__name__} (expected an args "
                             "namespace, a TransformerConfig, a ConfigContainer or a dict)")


def live_facts(obj):
    """The JSON-able settings of `obj` under Megatron-LM argument names, or Bridge dotted keys for a ConfigContainer."""
    fields = _fields(obj)
    sections = [s for s in _SECTIONS if s in fields and fields[s] is not None and not isinstance(fields[s], _SCALARS)]
    facts = {}
    if "model" in sections and ("dist" in sections or "dataset" in sections or "train" in sections):
        for section in sections:  # a ConfigContainer: model.*, dist.*, dataset.*
            for name, value in _fields(fields[section]).items():
                plain = _plain(value)
                if plain is not None:
                    facts[f"{section}.{name}"] = plain
        return facts
    for name, value in fields.items():
        plain = _plain(value)
        if plain is not None:
            facts[name] = plain
    return facts


def _torch_world_size():
    """torch.distributed's world size when the job has already initialised it (torch is never imported here)."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
            return torch.distributed.get_world_size()
    except Exception:
        return None
    return None


def check(obj, *, world_size=None, nodes=None, gpus_per_node=None, te_version=None, gpu=None, select=None,
          ignore=None, severity=None, raise_on_error=False):
    """Runs hcp-lint's rules on the configuration the job built; returns the Diagnostic list.

    world_size: the job's GPUs; else the object's own world_size, else torch.distributed's when initialised.
    te_version: Transformer Engine's version (else `transformer_engine.__version__` when the job imported it).
    raise_on_error: raise InvalidConfigError listing the errors, before the job's first collective.
    """
    facts = live_facts(obj)
    if world_size is None and not isinstance(facts.get("world_size"), int):
        world_size = _torch_world_size()
    if te_version is None and "transformer_engine" in sys.modules:
        te_version = getattr(sys.modules["transformer_engine"], "__version__", None)
    found = lint_text(json.dumps(facts), name="<live config>", input_format="facts", world_size=world_size, nodes=nodes,
                 gpus_per_node=gpus_per_node, te_version=te_version, gpu=gpu, select=select, ignore=ignore,
                 severity=severity)
    errors = [d for d in found if d.severity == "error"]
    if raise_on_error and errors:
        raise InvalidConfigError("hcp.check: the configuration has context-parallel errors:\n" +
                                 "\n".join(f"  {d.code}: {d.message}" for d in errors))
    return found
