"""The discrete-event results a planner asked for, kept by scenario and seed (no Streamlit).

The app runs the DES only when its button is pressed; the result then has to stay on the page
through every later rerun (another widget changed, another page visited and back) without
running again. ``st.cache_data`` cannot be asked "is this one known?" without computing it
on a miss, so the pages keep the results here — one :class:`DesStore` per server
(``st.cache_resource``), keyed by the canonical scenario TOML and the seed, least recently
used dropped past :attr:`DesStore.capacity`. Thread-safe: Streamlit serves each session from
its own thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class DesStore:
    """A bounded LRU map (scenario TOML, seed) → :class:`zsim.SimResult`."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._items: OrderedDict[tuple[str, int], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, scenario_toml: str, seed: int) -> Any | None:
        with self._lock:
            key = (scenario_toml, seed)
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, scenario_toml: str, seed: int, result: Any) -> None:
        with self._lock:
            self._items[(scenario_toml, seed)] = result
            self._items.move_to_end((scenario_toml, seed))
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
