"""sklearn-labeldp: learning with label differential privacy, the scikit-learn way."""

__version__ = "0.1.0.dev0"
