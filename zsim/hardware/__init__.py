"""Hardware: the catalog of disk, SSD and HBA profiles, and the devices' service-time models.

Modules: :mod:`~zsim.hardware.catalog` (TOML profiles, validated on load),
:mod:`~zsim.hardware.hdd` (a hard disk, request by request, after Ruemmler & Wilkes),
:mod:`~zsim.hardware.flash` (SSD/NVMe as a fitted black box) and
:mod:`~zsim.hardware.disksim_params` (DiskSim 4.0 parameter files as data).
"""

from zsim.hardware.catalog import Profile, list_profiles, load_profile, parse_profile

__all__ = ["Profile", "list_profiles", "load_profile", "parse_profile"]
