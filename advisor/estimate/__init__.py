"""Cross-device prediction: a probe measured here, a training time predicted there. Pure and fast.

from advisor.estimate import predict, measured_on, catalog
prediction = predict(probe, Target("T4", 1), precision="mixed")
"""

from advisor.estimate import catalog
from advisor.estimate.measured import measured_on
from advisor.estimate.predict import predict
from advisor.estimate.prediction import Prediction, Target

__all__ = ["Prediction", "Target", "catalog", "measured_on", "predict"]
