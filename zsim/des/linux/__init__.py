"""The Linux block stack in the discrete-event engine: :mod:`~zsim.des.linux.mdraid_map` (the
block-layer queue, md RAID and btrfs chunk maps), :mod:`~zsim.des.linux.blockfs` (page cache,
writeback, jbd2 and the engine that runs md/ext4, btrfs and raw devices) and
:mod:`~zsim.des.linux.zpool_on` (a ZFS pool whose one leaf is an md array)."""
