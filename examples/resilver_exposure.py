"""How long is each layout of 8 × IronWolf 12TB exposed after a disk dies, and what is the
chance of losing data over 5 years? (zsim.resilver; docs/resilver.md, docs/durability.md)

Run: python examples/resilver_exposure.py

``engine="auto"`` answers as the app does: the analytic scan where it has a model (checked
against the simulated scan within 15 %, docs/resilver.md), the discrete-event scan for the
rest (here md RAID); ``engine="des"`` simulates every one (about 30 s).
"""

from __future__ import annotations

import zsim

LAYOUTS = ["4x mirror 2", "raidz1 8", "raidz2 8", "raidz3 8", "draid2:4d:1s:8c", "md-raid6 8"]


def main() -> None:
    print("8 × seagate-ironwolf-12tb, 60 % full of 1M-record files; AFR 1.5 %, 5 years,")
    print("a new disk 24 h after the failure (a dRAID distributed spare at once)\n")
    print(f"{'layout':<18}{'rebuild':>10}{'rate':>11}  {'limit':<16}{'P(loss)':>10}{'P(URE)':>10}")
    for layout in LAYOUTS:
        sc = zsim.scenario_from_dict(
            {
                "hardware": {"disk": "seagate-ironwolf-12tb"},
                "pool": {"layout": layout, "recordsize": "1M", "fill": 0.6},
                "workload": {"rw": "randread", "bs": "128K"},
                "durability": {"afr": 0.015, "trials": 5000},
            }
        )
        r = zsim.resilver(sc, engine="auto")
        d = r.durability
        print(
            f"{layout:<18}{r.seconds / 3600:>8.1f} h{r.bytes_per_s / 1e6:>6.0f} MB/s  "
            f"{r.limit:<16}{d['loss_probability']:>10.2g}{d['ure_probability']:>10.2g}"
        )
    print("\nrebuild: until redundancy is back (a dRAID rebuild's scrub comes after);")
    print("P(URE): an unrecoverable read while a group had no redundancy left (1e-15 per bit)")


if __name__ == "__main__":
    main()
