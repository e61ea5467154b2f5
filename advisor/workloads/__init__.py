"""What a workload is: the zoo, the LLMs and their fine-tuning jobs, a user's model, as plain facts.

Nothing here imports a framework or measures anything: ``probes`` measures a workload, the device
model (``advisor.estimate``) predicts it from these facts and the measurements.
"""
