"""JAX's device and placement functions, for JAX code: fxad computes on the CPU with NumPy,
so there is one device, and putting a value on it is the identity (arrays stay NumPy
arrays)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import ShapedArray, Tracer, get_aval
from ..tree_util import tree_map


class Device:
    """The one device fxad computes on."""
    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


_CPU = Device()


def devices(backend: Any = None) -> list:
    """[the CPU device]: fxad computes with NumPy on one CPU device, whatever `backend` says
    (JAX's signature, for code that asks). `local_devices` is the same function."""
    return [_CPU]


local_devices = devices


def device_count(backend: Any = None) -> int:
    """1: the one CPU device (JAX's signature; `local_device_count` is the same function)."""
    return 1


local_device_count = device_count


def default_backend() -> str:
    """"cpu", the platform fxad computes on (JAX's function, for code that asks)."""
    return "cpu"


def process_count(backend: Any = None) -> int:
    """1: fxad runs in one process (JAX's multi-process API, for code that asks)."""
    return 1


def process_index(backend: Any = None) -> int:
    """0: the index of this, the only, process."""
    return 0


def _host(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """x with its leaves as NumPy arrays (already on the one device)."""
    return tree_map(_host, x)


def device_get(x: Any) -> Any:
    """x with its leaves as NumPy arrays (tracers are left as they are): in JAX this copies to
    the host; fxad's arrays are already there."""
    return tree_map(_host, x)


def block_until_ready(x: Any) -> Any:
    """x: fxad's results are computed when returned."""
    return x


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape and dtype) fxad traces x as."""
    return get_aval(x)


__all__ = ["Device", "devices", "local_devices", "device_count", "local_device_count",
           "default_backend", "process_count", "process_index", "device_put", "device_get",
           "block_until_ready", "typeof"]
