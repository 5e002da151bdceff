"""Hardware: the catalog of disk, SSD and HBA profiles (and, later, their performance models)."""

from zsim.hardware.catalog import Profile, list_profiles, load_profile, parse_profile

__all__ = ["Profile", "list_profiles", "load_profile", "parse_profile"]
