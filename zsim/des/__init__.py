"""The discrete-event engine (SimPy): clients → ZPL/ARC → DMU/txg → vdev queues → bus → devices."""
