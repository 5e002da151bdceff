"""Fit a device profile to stored fio results and predict a held-out run.

The results are a real calibration run on the project's build machine
(``calibration/results/vm-virtio-file-2026-11-22``: ``zsim calibrate plan`` + ``run`` on a
1 GiB file). The fit leaves out the 4 KiB QD16 random read; the discrete-event engine then
predicts it from the fitted profile, as ``zsim validate --profile`` does for every run.
"""

from __future__ import annotations

from pathlib import Path

from zsim.calibrate.fit import fit_device
from zsim.calibrate.load import load_results
from zsim.units import format_rate, format_time
from zsim.validation.profile import validate_measurements

RESULTS = Path(__file__).resolve().parents[1] / "calibration/results/vm-virtio-file-2026-11-22"
HELD_OUT = "randread-4k-qd16"

measurements = load_results([RESULTS]).measurements
held_out = [m for m in measurements if m.name == HELD_OUT]
fit = fit_device([m for m in measurements if m.name != HELD_OUT], name="vm-virtio-file")

print(f"{fit.kind}: {sum(r.used for r in fit.residuals)} runs fitted, rms {fit.rms_error:.1%}")
for p in fit.parameters:
    value = (
        format_time(p.value)
        if p.unit == "s"
        else (format_rate(p.value) if p.unit == "B/s" else f"{p.value:.0f} {p.unit}")
    )
    se = f"± {p.rel_stderr:.1%}" if p.rel_stderr is not None else p.note
    print(f"  {p.name:<16} {value:>28}  {se}")

row = validate_measurements(fit.profile, held_out, device_bytes=fit.device_bytes).rows[0]
print(
    f"held out {HELD_OUT}: measured {row.measured_iops:.0f} IOPS, predicted "
    f"{row.predicted_iops:.0f} ({row.error:+.1%}), rule of thumb {row.rule_of_thumb_error:+.1%}"
)
