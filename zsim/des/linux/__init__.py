"""The Linux block stack in the discrete-event engine: :mod:`~zsim.des.linux.mdraid_map` (the
block-layer queue, md RAID and btrfs chunk maps), :mod:`~zsim.des.linux.filesystems` (ext4,
btrfs and raw devices: file placement, jbd2 and log commits), :mod:`~zsim.des.linux.pagecache`
(dirty pages, writeback, readahead), :mod:`~zsim.des.linux.blockfs` (the engine that runs
md/ext4, btrfs and raw devices) and :mod:`~zsim.des.linux.zpool_on` (a ZFS pool whose one
leaf is an md array)."""
