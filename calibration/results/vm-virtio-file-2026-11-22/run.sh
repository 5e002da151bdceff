#!/usr/bin/env bash
# zsim calibration plan: 43 steps measuring /tmp/cal/target (directory, kind single-disk).
# Written by zsim 0.1.0 on vm at 2026-11-22T23:59:25+00:00.
#
# What it does: runs the fio jobs in jobs/ and the dd commands below in order, storing
# each result as results/<step>.json (fio --output-format=json) or results/<step>.dd.txt
# (dd's report). A step whose result exists is skipped, so a stopped run resumes.
# `zsim calibrate run <this folder>` does the same with progress and fuller results.
# Timed steps take about 2.6 min; the long and dd writes come on top.
#
# It writes only to zsim's own data (/tmp/cal/target/zsim-calibrate.dat), if at all.

set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
FIO="${FIO:-fio}"
DD="${DD:-dd}"

done_already() {  # a result file that exists and does not record a failure
  [ -s "$1" ] && ! grep -q '"returncode": -\?[1-9]' "$1"
}

run_fio() {  # step name
  if done_already "results/$1.json"; then echo "skip $1"; return 0; fi
  echo "run  $1"
  "$FIO" --output-format=json --output="results/.$1.json.part" "jobs/$1.fio"
  mv "results/.$1.json.part" "results/$1.json"
}

run_dd() {  # step name, dd arguments
  local name=$1
  shift
  if [ -s "results/$name.dd.txt" ]; then echo "skip $name"; return 0; fi
  echo "run  $name"
  "$DD" "$@" 2> "results/.$name.dd.txt.part"
  mv "results/.$name.dd.txt.part" "results/$name.dd.txt"
}

# prepare: lay out 1.00 GiB with sequential 1M writes
run_fio prepare
# zoneread-00: sequential 1M read at 0% = 0 B, QD4
run_fio zoneread-00
# zoneread-20: sequential 1M read at 20% = 204.00 MiB, QD4
run_fio zoneread-20
# zoneread-40: sequential 1M read at 40% = 409.00 MiB, QD4
run_fio zoneread-40
# zoneread-60: sequential 1M read at 60% = 614.00 MiB, QD4
run_fio zoneread-60
# zoneread-80: sequential 1M read at 80% = 819.00 MiB, QD4
run_fio zoneread-80
# zoneread-95: sequential 1M read at 95% = 972.00 MiB, QD4
run_fio zoneread-95
# randread-4k-qd1: random 4K read, QD1
run_fio randread-4k-qd1
# randread-4k-qd2: random 4K read, QD2
run_fio randread-4k-qd2
# randread-4k-qd4: random 4K read, QD4
run_fio randread-4k-qd4
# randread-4k-qd8: random 4K read, QD8
run_fio randread-4k-qd8
# randread-4k-qd16: random 4K read, QD16
run_fio randread-4k-qd16
# randread-4k-qd32: random 4K read, QD32
run_fio randread-4k-qd32
# randread-64k-qd1: random 64K read, QD1
run_fio randread-64k-qd1
# randread-64k-qd4: random 64K read, QD4
run_fio randread-64k-qd4
# randread-64k-qd32: random 64K read, QD32
run_fio randread-64k-qd32
# randread-1m-qd1: random 1M read, QD1
run_fio randread-1m-qd1
# randread-1m-qd4: random 1M read, QD4
run_fio randread-1m-qd4
# randread-1m-qd32: random 1M read, QD32
run_fio randread-1m-qd32
# short-seek: random 4K read over the first 1% = 10.00 MiB, QD1
run_fio short-seek
# cache-hit: sequential 4K read over 256.00 MiB from the drive's read-ahead, QD1
run_fio cache-hit
# dd-read: dd read of 1.00 GiB
run_dd dd-read if=/tmp/cal/target/zsim-calibrate.dat of=/dev/null bs=1M count=1024 iflag=direct
# zonewrite-00: sequential 1M write at 0% = 0 B, QD4
run_fio zonewrite-00
# zonewrite-20: sequential 1M write at 20% = 204.00 MiB, QD4
run_fio zonewrite-20
# zonewrite-40: sequential 1M write at 40% = 409.00 MiB, QD4
run_fio zonewrite-40
# zonewrite-60: sequential 1M write at 60% = 614.00 MiB, QD4
run_fio zonewrite-60
# zonewrite-80: sequential 1M write at 80% = 819.00 MiB, QD4
run_fio zonewrite-80
# zonewrite-95: sequential 1M write at 95% = 972.00 MiB, QD4
run_fio zonewrite-95
# randwrite-4k-qd1: random 4K write, QD1
run_fio randwrite-4k-qd1
# randwrite-4k-qd2: random 4K write, QD2
run_fio randwrite-4k-qd2
# randwrite-4k-qd4: random 4K write, QD4
run_fio randwrite-4k-qd4
# randwrite-4k-qd8: random 4K write, QD8
run_fio randwrite-4k-qd8
# randwrite-4k-qd16: random 4K write, QD16
run_fio randwrite-4k-qd16
# randwrite-4k-qd32: random 4K write, QD32
run_fio randwrite-4k-qd32
# randwrite-64k-qd1: random 64K write, QD1
run_fio randwrite-64k-qd1
# randwrite-64k-qd4: random 64K write, QD4
run_fio randwrite-64k-qd4
# randwrite-64k-qd32: random 64K write, QD32
run_fio randwrite-64k-qd32
# randwrite-1m-qd1: random 1M write, QD1
run_fio randwrite-1m-qd1
# randwrite-1m-qd4: random 1M write, QD4
run_fio randwrite-1m-qd4
# randwrite-1m-qd32: random 1M write, QD32
run_fio randwrite-1m-qd32
# sync-latency: 4K O_SYNC writes with psync, QD1
run_fio sync-latency
# long-write: sequential 1M write of 512.00 MiB in 8 segments, write-cache cliff
run_fio long-write
# dd-write: dd write of 1.00 GiB from /dev/zero
run_dd dd-write if=/dev/zero of=/tmp/cal/target/zsim-calibrate.dat bs=1M count=1024 oflag=direct conv=fsync,notrunc

echo "all steps done; results in $(pwd)/results"
