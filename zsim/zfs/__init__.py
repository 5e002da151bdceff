"""ZFS sub-models: release-dependent defaults, compression, and (later) ARC, txg, ZIL."""
