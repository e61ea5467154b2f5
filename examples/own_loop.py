"""A training loop Keras does not run marks its own steps: two lines, and nothing happens
outside a probe. Probe it with

    advisor probe --name own_loop -- python examples/own_loop.py
"""

import time

import advisor.probe as ap

EPOCHS, STEPS, BATCH = 10, 500, 64
ap.plan(epochs=EPOCHS, steps=STEPS, batch=BATCH)
for _epoch in range(EPOCHS):
    for _step in range(STEPS):
        time.sleep(0.01)  # your forward, backward and optimizer step
        ap.step(batch=BATCH)
