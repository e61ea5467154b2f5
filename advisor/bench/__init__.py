"""``advisor bench``: measure a workload on rented cloud machines, through SkyPilot.

The most trusted figure for a machine is a measurement on it. A bench picks, for each asked
accelerator or vCPU count, the cheapest matching offering in the price database (``plan``),
writes a SkyPilot task that installs advisor there and runs ``advisor probe --export``
(``task``), launches the tasks in parallel through SkyPilot's Python API, tears every cluster
down and imports what came back (``launch``). The recommender then ranks the benched offerings by
their measured time and corrects its predictions for the others
(``advisor.estimate.residual``).

SkyPilot is the optional extra ``advisor[skypilot]``; only ``launch.SkyPilot`` imports it, when
it launches.
"""
