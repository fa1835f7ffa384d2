"""``--target-arch``: what a GPU architecture decides statically.

With a target such as ``sm120`` (and a CUDA version, 12.9 unless given), the resolver folds the device
queries that branch on the architecture -- ``torch.cuda.get_device_capability()``, ``.major``/``.minor`` of
the device properties, ``torch.version.cuda``, ``torch.cuda.is_available()`` -- into constants, so
conditions like ``is_sm120_supported()``, ``major == 12`` and dict dispatch keyed by ``f"{major}{minor}"``
evaluate, and branches that cannot run on that GPU are pruned.  Without a target every branch is kept.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

DEFAULT_CUDA_VERSION = "12.9"
# what a call gives whose attributes the arch decides (``.major`` / ``.minor``), whichever module spelled it
DEVICE_PROPERTIES = "get_device_properties()"


class ArchError(ValueError):
    pass


@dataclass(frozen=True)
class ArchFacts:
    major: int
    minor: int
    cuda_version: str = DEFAULT_CUDA_VERSION

    @classmethod
    def parse(cls, target: str, cuda_version: Optional[str] = None) -> "ArchFacts":
        m = re.fullmatch(r"(?:sm_?)?(\d{2,3})([af]?)", target.strip().lower())
        if not m:
            raise ArchError(f"bad --target-arch {target!r}: expected smXY such as sm90, sm100, sm120")
        digits = m.group(1)
        major, minor = int(digits[:-1]), int(digits[-1])
        cv = cuda_version or DEFAULT_CUDA_VERSION
        if not re.fullmatch(r"\d+\.\d+(\.\d+)?", cv):
            raise ArchError(f"bad CUDA version {cv!r}: expected X.Y such as 12.9")
        return cls(major, minor, cv)

    @property
    def label(self) -> str:
        return f"sm{self.major}{self.minor} (CUDA {self.cuda_version})"

    def call(self, name: str):
        """The value of calling an external device query, or None when it is not arch-determined."""
        if name in ("torch.cuda.get_device_capability",):
            return (self.major, self.minor)
        if name in ("torch.cuda.is_available", "torch.cuda.is_initialized"):
            return True
        if name == "torch.cuda.device_count":
            return None
        return None

    def attr(self, name: str):
        """The value of an external attribute that the arch decides (``torch.version.cuda``), else None."""
        if name == "torch.version.cuda":
            return self.cuda_version
        if name == "torch.version.hip":
            return None
        if name.endswith(DEVICE_PROPERTIES + ".major"):
            return self.major
        if name.endswith(DEVICE_PROPERTIES + ".minor"):
            return self.minor
        return None

    def known_attr(self, name: str) -> bool:
        return name == "torch.version.hip" or self.attr(name) is not None
